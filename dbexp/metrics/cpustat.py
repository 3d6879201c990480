"""Where each CPU's time went, from /proc/stat (psutil's per-CPU times): busy, idle and stolen.

Steal is time the hypervisor gave this VM's virtual CPU to someone else while it had work: on a
shared VM it is noise the lab cannot control, so each run records it for the server's and the
client's CPUs. One read of one file gives every CPU, so the sampler reads it at the window's edges
and once a second. psutil gives seconds (the kernel's USER_HZ ticks, 1/100 s, divided out), one
entry per online CPU in the order of their numbers; :func:`read` names each by its number.
"""

from __future__ import annotations

from pathlib import Path

import psutil

from dbexp.errors import DbexpError

# psutil's per-CPU fields; guest and guest_nice are already inside user and nice
BUSY = ("user", "nice", "system", "irq", "softirq")
IDLE = ("idle", "iowait")
ONLINE = Path("/sys/devices/system/cpu/online")

Reading = dict[int, tuple]  # CPU number -> psutil's scputimes (seconds since boot)


def online_cpus() -> list[int]:
    """The numbers of the online CPUs ('0-1,3' -> [0, 1, 3]): the CPUs /proc/stat lists, in order."""
    cpus: list[int] = []
    for part in ONLINE.read_text().strip().split(","):
        lo, _, hi = part.partition("-")
        cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


def read() -> Reading:
    times = psutil.cpu_times(percpu=True)
    cpus = online_cpus()
    if len(cpus) != len(times):  # a CPU went online or offline between the two reads
        raise DbexpError(f"/proc/stat lists {len(times)} CPUs but {ONLINE} names {len(cpus)}: read again")
    return dict(zip(cpus, times))


def _sum(before: Reading, after: Reading, cpus, fields) -> float:
    return sum(getattr(after[c], f, 0.0) - getattr(before[c], f, 0.0) for c in cpus for f in fields)


def window(before: Reading, after: Reading, cpus) -> dict[str, float]:
    """Seconds busy, idle and stolen on ``cpus`` between two readings, and the shares of their
    elapsed CPU time (busy + idle + steal) in percent. A CPU missing from a reading (offline)
    raises KeyError: a figure over fewer CPUs than asked would pass for the whole set."""
    busy, idle = _sum(before, after, cpus, BUSY), _sum(before, after, cpus, IDLE)
    steal = _sum(before, after, cpus, ("steal",))  # kernels before 2.6.11 have none: 0
    total = busy + idle + steal
    out = {"busy_s": busy, "idle_s": idle, "steal_s": steal, "total_s": total}
    out["busy_pct"] = 100.0 * busy / total if total else None
    out["steal_pct"] = 100.0 * steal / total if total else None
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
