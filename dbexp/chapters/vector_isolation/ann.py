"""Seed 002's comparison the way ann-benchmarks runs it: queries per second against recall at k = 10, one client.

One run builds one index on the ann set's table (one engine, storage and m: pgvector's ``vector`` (float32) and
``halfvec`` (float16 in the index, the table keeping float32, as the post's runs did), MariaDB's one kind), times
the build and reads its size, then asks the set's queries at each candidate-list size (``ef_search``) in
``passes`` passes (after one unrecorded pass at the largest size), the sizes walked forward in even passes and backward in odd ones, so that a drift of the
machine within the run favours none of them. Each pass's queries per second is stored (series ``ann_qps``, ``t``
the pass, ``name`` the ef_search); the first pass's answers are judged against the exact answers computed here
(dataset.ground_truth): each query's recall (series ``ann_recall``, ``t`` the query), how many answers came back
with fewer than k rows, and how many adjacent rows of an answer lie out of their exact distance order (an index
that ranks by coarser values than the stored ones: dataset.inversions).

The ann table lives in a database of its own on every server, loaded once per server start (the isolation part's
restores never touch it); every run builds its index anew on it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from dbexp.chapters.vector_isolation import dataset
from dbexp.chapters.vector_isolation.engines import Search, VectorIndex
from dbexp.chapters.vector_isolation.engines import ANN_TABLE
from dbexp.errors import DbexpError, RetryableError
from dbexp.experiments.measure import Measured, client_pinned, cpu_window


@dataclass(frozen=True)
class AnnPoint:
    storage: str  # the engine's index storage (pgvector: vector | halfvec; MariaDB: mhnsw)
    m: int
    ef_construction: int  # pgvector's (MariaDB has none)
    ef_searches: tuple[int, ...]
    k: int
    queries: int
    passes: int
    rows: int
    dims: int
    instance: int
    client_cpus: str
    kind: str = "ann"

    def __post_init__(self):
        if self.kind != "ann":
            raise DbexpError(f"bad kind {self.kind!r} for an ann point: expected 'ann'")
        if not self.ef_searches or any(e < 1 for e in self.ef_searches):
            raise DbexpError(f"bad ef_searches {self.ef_searches!r}: expected one or more sizes of 1 and up")
        if self.passes < 1 or self.queries < 1:
            raise DbexpError(f"bad passes {self.passes!r} or queries {self.queries!r}: expected 1 and up")

    @property
    def shape(self) -> dataset.Shape:
        return dataset.Shape(self.rows, self.dims)


def ann_set(p: AnnPoint, cache: dict) -> tuple[np.ndarray, np.ndarray, dataset.Truth]:
    """The set's rows, queries and exact answers (computed once per shape, queries and k)."""
    key = (p.rows, p.dims, p.queries, p.k)
    if key not in cache:
        rows = dataset.ann_train(p.shape)
        queries = dataset.ann_test(p.dims, p.queries)
        cache[key] = (rows, queries, dataset.ground_truth(rows, queries, p.k))
    return cache[key]


def measure_ann(part: VectorIndex, server, p: AnnPoint, rows: np.ndarray, queries: np.ndarray,
                truth: dataset.Truth) -> Measured:
    """Build the index, then every ef_search's passes (see the module's docstring)."""
    m: dict[str, tuple[float | None, str]] = {}
    series: list[tuple] = []
    literals = [dataset.literal(q) for q in queries]
    with client_pinned(p.client_cpus):
        facts = part.ann_build(server, p.storage, p.m, p.ef_construction)
        m.update({k: (v, "bytes" if k.endswith("bytes") else "s") for k, v in facts.items()})
        m["bytes_per_row"] = (facts["index_bytes"] / p.rows, "bytes")
        conn = part.ann_connect(server)
        try:
            with conn.cursor() as cur:  # the starting state: the set's rows, every one, under the new index
                cur.execute(f"SELECT count(*), max(id) FROM {ANN_TABLE}")
                n, top = cur.fetchone()
            if (int(n), int(top)) != (p.rows, p.rows):
                raise RetryableError(f"the ann table holds {n} rows up to id {top}, not the set's {p.rows}")
            m["precondition_ok"] = (1.0, "bool")
            for ef in p.ef_searches:
                part.set_search(conn, Search(p.k, ef))
                plan = part.ann_plan(conn, literals[0], p.storage, p.k)
                if plan == "exact":
                    raise DbexpError(f"the ann query at ef_search={ef} was planned as an exact scan, not the index")
            # a whole pass at the largest candidate list first, unrecorded: the new index into the server's caches
            # (MariaDB loads its graph's nodes into its own cache as searches first need them)
            part.set_search(conn, Search(p.k, max(p.ef_searches)))
            for q in literals:
                part.ann_knn(conn, q, p.storage, p.k)
            qps: dict[int, list[float]] = {ef: [] for ef in p.ef_searches}
            with cpu_window(server, p.client_cpus) as cpu:
                for n in range(p.passes):
                    for ef in (p.ef_searches if n % 2 == 0 else p.ef_searches[::-1]):
                        part.set_search(conn, Search(p.k, ef))
                        t0 = time.perf_counter()
                        answers = [part.ann_knn(conn, q, p.storage, p.k) for q in literals]
                        rate = len(literals) / (time.perf_counter() - t0)
                        qps[ef].append(rate)
                        series.append((float(n), "ann_qps", str(ef), rate))
                        if n == 0:
                            _judge(ef, answers, rows, queries, truth, p.k, m, series)
            m.update(cpu)
        finally:
            conn.close()
    for ef, rates in qps.items():
        m[f"qps_ef{ef}"] = (float(np.mean(rates)), "1/s")
    m["active_servers"] = (1.0, "count")
    what = (f"ann: {part.ann_label(p.storage)} m={p.m}, {p.queries} queries k={p.k} at ef_search "
            f"{', '.join(map(str, p.ef_searches))}, {p.passes} passes")
    return Measured(m, [], series, what)


def _judge(ef: int, answers: list[list[int]], rows, queries, truth: dataset.Truth, k: int, m: dict,
           series: list) -> None:
    recalls, short, inverted, coarse = [], 0, 0, 0.0
    for j, (ids, q) in enumerate(zip(answers, queries)):
        r = dataset.recall(rows, q, ids, float(truth.kth[j]), k)
        recalls.append(r)
        series.append((float(j), "ann_recall", str(ef), r))
        short += len(ids) < k
        n, gap = dataset.inversions(rows, q, ids)
        inverted += n
        coarse = max(coarse, gap)
    m[f"recall_ef{ef}"] = (float(np.mean(recalls)), "share")
    m[f"short_ef{ef}"] = (float(short), "count")
    m[f"inverted_ef{ef}"] = (float(inverted), "count")
    m[f"inverted_gap_ef{ef}"] = (coarse, "share")
