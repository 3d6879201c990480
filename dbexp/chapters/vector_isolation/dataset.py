"""The chapter's vectors: made here from a fixed seed, never downloaded.

Points lie around ``clusters`` centres in ``dims`` dimensions (a Gaussian mixture, so that a k-NN
query has a neighbourhood to find, as real embeddings do); queries are drawn from the same mixture.
Row ``i`` (1-based) of a data set is the same for every server. A reader's query and the rows written
under it come from random streams of their own (:func:`stream`), one per trial of each point on each
server and instance, so that no two trials share a query or the rows written between its two searches.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

SEED = 20250811  # the date of the post this chapter tests
CLUSTERS = 50
SPREAD = 0.35  # within-cluster standard deviation, against centres drawn from N(0, 1)


@dataclass(frozen=True)
class Shape:
    rows: int
    dims: int


def _centres(dims: int) -> np.ndarray:
    return np.random.default_rng(SEED).standard_normal((CLUSTERS, dims)).astype(np.float32)


def draw(dims: int, n: int, stream: int) -> np.ndarray:
    """``n`` vectors of the mixture from random stream ``stream`` (0: the base rows)."""
    rng = np.random.default_rng([SEED, stream])
    which = rng.integers(0, CLUSTERS, n)
    noise = rng.standard_normal((n, dims)).astype(np.float32) * SPREAD
    return np.round(_centres(dims)[which] + noise, 4).astype(np.float32)


def stream(*key) -> int:
    """A random stream's number (1 and up; 0 is the base rows) from any key: the same key, the same stream."""
    return 1 + int(hashlib.sha256(repr(key).encode()).hexdigest()[:12], 16)


def near(centre: np.ndarray, n: int, stream_: int) -> np.ndarray:
    """``n`` vectors around ``centre`` as the mixture's clusters spread around theirs (SPREAD in every
    dimension), from random stream ``stream_``: rows written in a query's own neighbourhood."""
    rng = np.random.default_rng([SEED, stream_])
    noise = rng.standard_normal((n, centre.shape[0])).astype(np.float32) * SPREAD
    return np.round(centre[None, :] + noise, 4).astype(np.float32)


def base_rows(shape: Shape) -> np.ndarray:
    """The data set's rows, id i at index i - 1."""
    return draw(shape.dims, shape.rows, 0)


def literal(v: np.ndarray) -> str:
    """The text form both engines parse: '[0.1,-2.5,...]'."""
    return "[" + ",".join(f"{x:.4f}" for x in v.tolist()) + "]"


def checksum(rows: np.ndarray) -> float:
    """The sum of every row's first coordinate, as a server computes it from the stored rows (the
    precondition compares them to 0.01)."""
    return float(np.round(rows[:, 0].astype(np.float64).sum(), 2))


# --- the ann-benchmarks-style set (seed 002's comparison: QPS against recall at k = 10) ------------------------
# A train set (the table's rows) and a test set (the queries) drawn from one mixture of its own, apart from the
# isolation part's rows, and the ground truth by exact search here (numpy), as ann-benchmarks ships with each of
# its sets. No registry this lab reaches ships fashion-mnist or another ann-benchmarks set in a usable form, and its
# 60,000 x 784 rows would spend the chapter's whole budget on index builds on one CPU; this set is generated from a
# fixed seed instead: more clusters than the isolation rows', each wider, so that a short candidate list misses
# true neighbours and recall moves with ef_search.
ANN_CLUSTERS = 200
ANN_SPREAD = 0.6
ANN_TRAIN_STREAM = "ann-train"
ANN_TEST_STREAM = "ann-test"
ANN_EPSILON = 1e-3  # ann-benchmarks' tolerance: a returned row counts if its distance is within this of the k-th


def _ann_draw(dims: int, n: int, which: str) -> np.ndarray:
    centres = np.random.default_rng([SEED, stream("ann-centres", dims)]).standard_normal((ANN_CLUSTERS, dims))
    rng = np.random.default_rng([SEED, stream(which, dims, n)])
    pick = rng.integers(0, ANN_CLUSTERS, n)
    noise = rng.standard_normal((n, dims)) * ANN_SPREAD
    return np.round(centres[pick] + noise, 4).astype(np.float32)


def ann_train(shape: Shape) -> np.ndarray:
    """The ann set's rows (id i at index i - 1)."""
    return _ann_draw(shape.dims, shape.rows, ANN_TRAIN_STREAM)


def ann_test(dims: int, n: int) -> np.ndarray:
    """The ann set's ``n`` queries (drawn apart from the rows: none is a row)."""
    return _ann_draw(dims, n, ANN_TEST_STREAM)


def distances(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Euclidean distance of every row to ``q``, in float64 from the stored float32 values."""
    d = rows.astype(np.float64) - q.astype(np.float64)[None, :]
    return np.sqrt(np.einsum("ij,ij->i", d, d))


@dataclass(frozen=True)
class Truth:
    """The exact answer of each query: its k nearest ids (1-based, nearest first) and the k-th distance."""

    ids: np.ndarray  # (queries, k)
    kth: np.ndarray  # (queries,)


def ground_truth(rows: np.ndarray, queries: np.ndarray, k: int) -> Truth:
    ids, kth = [], []
    for q in queries:
        d = distances(rows, q)
        top = np.argsort(d, kind="stable")[:k]
        ids.append(top + 1)
        kth.append(d[top[-1]])
    return Truth(np.array(ids), np.array(kth))


def recall(rows: np.ndarray, q: np.ndarray, answer: list[int], kth: float, k: int) -> float:
    """ann-benchmarks' recall of one answer: the share of k whose distance is within ANN_EPSILON of the true k-th."""
    if not answer:
        return 0.0
    d = distances(rows[np.asarray(answer) - 1], q)
    return float(np.sum(d <= kth + ANN_EPSILON)) / k


def inversions(rows: np.ndarray, q: np.ndarray, answer: list[int]) -> tuple[int, float]:
    """Adjacent rows of an answer out of their exact (float32 values, float64 arithmetic) distance order: how many,
    and the largest relative gap between such a pair (0 where none): what an index that ranks by values of less
    precision than the stored ones returns, and how coarse its values are."""
    if len(answer) < 2:
        return 0, 0.0
    d = distances(rows[np.asarray(answer) - 1], q)
    gaps = (d[:-1] - d[1:]) / np.maximum(d[1:], 1e-12)
    bad = gaps > 1e-6  # beyond float32 rounding
    return int(bad.sum()), float(gaps[bad].max()) if bad.any() else 0.0
