"""The buffer_pins chapter: what holding N buffer pins costs a PostgreSQL backend, and how many pins
real queries hold (notebooks/buffer_pins.ipynb; seed 004, a pgsql-hackers thread of March 2026).

``CHAPTER`` and what the page draws: ns per buffer operation at each N on every version (the curve,
its step past the 8-entry array and its growth to 10,000, as ratios paired within a run, :mod:`.charts`), the
array builds and the overflow table alone on raw time, and the histograms of pins held at each new pin and of
content locks per pin, per query shape."""

from dbexp.chapters.buffer_pins import analysis, charts, claims, counting
from dbexp.chapters.buffer_pins.chapter import CHAPTER, DEFAULT_SERVERS, NS, Scale

run = CHAPTER.run

__all__ = ["CHAPTER", "DEFAULT_SERVERS", "NS", "Scale", "analysis", "charts", "claims", "counting", "run"]
