"""The vector_isolation chapter: does a vector index keep REPEATABLE READ? (notebooks/vector_isolation.ipynb)

``CHAPTER`` and what the page draws: per engine, setting and writer, how many independent trials (each a
REPEATABLE READ transaction with its own query, asked twice while a paced writer commits rows between) saw
a different set of rows the second time, with the controls; how each changed answer changed (cut short or
replaced, the lost rows as the same snapshot sees them, rows it could not see inside the first answer's
radius), the recall, and the throughput; what a writer did to the index under the reader (pgvector's neighbour
lists read from its pages, a B-tree's leaf entries) and the post's B-tree case run as the same trials; and seed
002's comparison as ann-benchmarks runs it (queries per second against recall@10, builds and sizes: ann_analysis)."""

from dbexp.chapters.vector_isolation.analysis import changed_rates, costs, lost_rows, settings_table
from dbexp.chapters.vector_isolation.chapter import CHAPTER, DEFAULT_SERVERS, PARTS, Scale

run = CHAPTER.run

__all__ = ["CHAPTER", "DEFAULT_SERVERS", "PARTS", "Scale", "changed_rates", "costs", "lost_rows", "run",
           "settings_table"]
