"""Parse sysbench 1.0 output into numbers: totals, latency percentiles, per-interval series."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dbexp.errors import DbexpError

_INTERVAL = re.compile(
    r"^\[\s*(?P<t>[\d.]+)s\s*\]\s+thds:\s*(?P<threads>\d+)\s+tps:\s*(?P<tps>[\d.]+)\s+qps:\s*(?P<qps>[\d.]+)\s+"
    r"\(r/w/o:\s*(?P<r>[\d.]+)/(?P<w>[\d.]+)/(?P<o>[\d.]+)\)\s+lat\s+\(ms,(?P<pct>[\d.]+)%\):\s*(?P<lat>[\d.]+)\s+"
    r"err/s:\s*(?P<err>[\d.]+)\s+reconn/s:\s*(?P<reconn>[\d.]+)")
_HIST = re.compile(r"^\s*(?P<value>[\d.]+)\s+\|[*\s]*\s(?P<count>\d+)\s*$")


def _num(pattern: str, text: str, default: float | None = None) -> float:
    m = re.search(pattern, text, re.M)
    if m is None:
        if default is not None:
            return default
        raise DbexpError(f"sysbench output has no {pattern!r}: the run did not finish "
                         f"(last line: {text.strip().splitlines()[-1:] or ['(empty)']})")
    return float(m.group(1))


@dataclass
class SysbenchResult:
    transactions: float
    tps: float
    queries: float
    qps: float
    reads: float
    writes: float
    others: float
    errors: float
    reconnects: float
    total_time_s: float
    events: float
    lat_min_ms: float
    lat_avg_ms: float
    lat_max_ms: float
    lat_pct_ms: float  # sysbench's own percentile (--percentile, 95 by default)
    histogram: list[tuple[float, int]] = field(default_factory=list)
    series: list[dict] = field(default_factory=list)

    def percentile(self, p: float) -> float | None:
        """Latency percentile (ms) from the histogram, the upper value of the bucket reached."""
        total = sum(c for _, c in self.histogram)
        if total == 0:
            return None
        need = total * p / 100.0
        seen = 0
        for value, count in self.histogram:
            seen += count
            if seen >= need:
                return value
        return self.histogram[-1][0]

    def summary(self) -> dict[str, float | None]:
        return {"tps": self.tps, "qps": self.qps, "lat_avg_ms": self.lat_avg_ms,
                "lat_p95_ms": self.percentile(95) if self.histogram else self.lat_pct_ms,
                "lat_p99_ms": self.percentile(99), "lat_max_ms": self.lat_max_ms,
                "errors": self.errors, "reconnects": self.reconnects, "transactions": self.transactions,
                "queries": self.queries, "reads": self.reads, "writes": self.writes,
                "total_time_s": self.total_time_s}


def parse_run(text: str) -> SysbenchResult:
    series = []
    hist: list[tuple[float, int]] = []
    in_hist = False
    for line in text.splitlines():
        m = _INTERVAL.match(line.strip())
        if m:
            series.append({k: float(v) for k, v in m.groupdict().items()})
            continue
        if line.startswith("Latency histogram"):
            in_hist = True
            continue
        if in_hist:
            h = _HIST.match(line)
            if h:
                hist.append((float(h.group("value")), int(h.group("count"))))
            elif line.strip() and "distribution" not in line:
                in_hist = False
    return SysbenchResult(
        transactions=_num(r"^\s*transactions:\s+(\d+)", text),
        tps=_num(r"^\s*transactions:\s+\d+\s+\(([\d.]+) per sec", text),
        queries=_num(r"^\s*queries:\s+(\d+)", text),
        qps=_num(r"^\s*queries:\s+\d+\s+\(([\d.]+) per sec", text),
        reads=_num(r"^\s*read:\s+(\d+)", text),
        writes=_num(r"^\s*write:\s+(\d+)", text),
        others=_num(r"^\s*other:\s+(\d+)", text),
        errors=_num(r"^\s*ignored errors:\s+(\d+)", text),
        reconnects=_num(r"^\s*reconnects:\s+(\d+)", text),
        total_time_s=_num(r"^\s*total time:\s+([\d.]+)s", text),
        events=_num(r"^\s*total number of events:\s+(\d+)", text),
        lat_min_ms=_num(r"^\s*min:\s+([\d.]+)", text),
        lat_avg_ms=_num(r"^\s*avg:\s+([\d.]+)", text),
        lat_max_ms=_num(r"^\s*max:\s+([\d.]+)", text),
        lat_pct_ms=_num(r"^\s*\d+(?:th|st|nd|rd) percentile:\s+([\d.]+)", text),
        histogram=hist, series=series)


def parse_prepare(text: str) -> dict[str, float]:
    """Rows inserted by ``sysbench ... prepare``."""
    rows = [int(n) for n in re.findall(r"Inserting (\d+) records", text)]
    return {"rows": float(sum(rows)), "tables": float(len(re.findall(r"Creating table", text)))}
