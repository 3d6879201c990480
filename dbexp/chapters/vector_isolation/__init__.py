"""The vector_isolation chapter: does a vector index keep REPEATABLE READ? (notebooks/vector_isolation.ipynb)

``CHAPTER`` and what the page draws: per engine and setting, how many reader transactions saw the same
k-NN query answer a different set of rows the second time, with the controls, the rows lost and whether
their snapshot still saw them, the recall, and the throughput."""

from dbexp.chapters.vector_isolation.analysis import changed_rates, costs, lost_rows, settings_table
from dbexp.chapters.vector_isolation.chapter import CHAPTER, DEFAULT_SERVERS, PARTS, Scale

run = CHAPTER.run

__all__ = ["CHAPTER", "DEFAULT_SERVERS", "PARTS", "Scale", "changed_rates", "costs", "lost_rows", "run",
           "settings_table"]
