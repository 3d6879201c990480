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
