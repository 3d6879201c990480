"""Where each CPU's time went, from /proc/stat: busy, idle and stolen.

Steal is time the hypervisor gave this VM's virtual CPU to someone else while it had work: on a
shared VM it is noise the lab cannot control, so each run records it for the server's and the
client's CPUs. One read of one file gives every CPU, so the sampler reads it at the window's edges
and once a second. Times are in USER_HZ ticks (1/100 s), whatever the kernel's own tick.
"""

from __future__ import annotations

from pathlib import Path

from dbexp.metrics.procfs import CLK_TCK as USER_HZ

# the per-CPU fields in order; guest and guest_nice are already inside user and nice
FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
BUSY = ("user", "nice", "system", "irq", "softirq")

Reading = dict[int, dict[str, int]]  # CPU number -> field -> ticks since boot


def parse(text: str) -> Reading:
    """The ``cpuN`` lines of /proc/stat (the all-CPU ``cpu`` line is left out)."""
    out: Reading = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit():
            values = [int(v) for v in rest.split()]
            out[int(name[3:])] = dict(zip(FIELDS, values + [0] * (len(FIELDS) - len(values))))
    return out


def read(path: str | Path = "/proc/stat") -> Reading:
    return parse(Path(path).read_text())


def window(before: Reading, after: Reading, cpus) -> dict[str, float]:
    """Seconds busy, idle and stolen on ``cpus`` between two readings, and the shares of their
    elapsed CPU time (busy + idle + steal) in percent. A CPU missing from a reading (offline)
    raises KeyError: a figure over fewer CPUs than asked would pass for the whole set."""
    d = {f: sum(after[c][f] - before[c][f] for c in cpus) for f in FIELDS}
    busy = sum(d[f] for f in BUSY)
    idle = d["idle"] + d["iowait"]
    total = busy + idle + d["steal"]
    out = {"busy_s": busy / USER_HZ, "idle_s": idle / USER_HZ, "steal_s": d["steal"] / USER_HZ,
           "total_s": total / USER_HZ}
    out["busy_pct"] = 100.0 * busy / total if total else None
    out["steal_pct"] = 100.0 * d["steal"] / total if total else None
    return out


def shares(before: Reading, after: Reading, cpu_sets: dict[str, list[int]]) -> dict[str, float | None]:
    """For each named set of CPUs ('server', 'client'): ``{who}_busy_s``, ``{who}_busy_pct``,
    ``steal_{who}_s`` and ``steal_{who}_pct`` between two readings."""
    out: dict[str, float | None] = {}
    for who, cpus in cpu_sets.items():
        w = window(before, after, cpus)
        out[f"{who}_busy_s"], out[f"{who}_busy_pct"] = w["busy_s"], w["busy_pct"]
        out[f"steal_{who}_s"], out[f"steal_{who}_pct"] = w["steal_s"], w["steal_pct"]
    return out
