"""Block-device I/O the way iostat sees it: sectors and requests from /proc/diskstats (psutil's
per-disk counters: the kernel's sectors of 512 bytes, as bytes).

Per-process ``write_bytes`` in /proc/PID/io is not used for wKB/o: on recent kernels
with large folios it charges a whole folio each time one byte of it is dirtied, and
showed gigabytes per second for a server whose write() calls moved megabytes. The
device counters are machine-wide, like Callaghan's iostat figures: on an otherwise
idle host they are the server's I/O (the client does none).
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil


def device_of(path: str | Path) -> str | None:
    """The whole-disk block device holding ``path`` (e.g. 'vda'), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    sys_dir = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not sys_dir.exists():
        return None
    real = sys_dir.resolve()
    if (real / "partition").exists():
        real = real.parent
    return real.name


def read(device: str) -> dict[str, float] | None:
    """Cumulative reads, writes (requests) and bytes read and written of a device."""
    try:
        disks = psutil.disk_io_counters(perdisk=True, nowrap=False)
    except OSError:
        return None
    d = disks.get(device)
    if d is None:
        return None
    return {"disk_reads": float(d.read_count), "disk_rbytes": float(d.read_bytes),
            "disk_writes": float(d.write_count), "disk_wbytes": float(d.write_bytes)}
