"""`dbexp doctor`: can this host run the lab, and with what?"""

from __future__ import annotations

import os
import shutil

from dbexp.engine import LABEL, client, is_local
from dbexp.errors import DbexpError
from dbexp.images import pull
from dbexp.results.provenance import host_facts


def report() -> list[tuple[str, str, bool]]:
    """(check, finding, ok) rows."""
    rows: list[tuple[str, str, bool]] = []
    try:
        c = client()
        info, ver = c.info(), c.version()
        rows.append(("engine", f"Docker {ver.get('Version')} (API {ver.get('ApiVersion')}) at "
                               f"{os.environ.get('DOCKER_HOST') or 'the local socket'}; storage "
                               f"{info.get('Driver')}, cgroup v{info.get('CgroupVersion')}", True))
        cpuset = bool(info.get("CPUSet"))
        rows.append(("cpuset", "supported (--cpuset-cpus)" if cpuset else "NOT supported: pinning unavailable",
                     cpuset))
        rows.append(("engine host", f"{info.get('NCPU')} CPUs, {info.get('MemTotal', 0) / 2**30:.1f} GiB, "
                                    f"kernel {info.get('KernelVersion')}", True))
        imgs = c.images.list(filters={"label": LABEL})
        names = sorted(t for i in imgs for t in i.tags)
        rows.append(("images", ", ".join(names) if names else "none built yet (dbexp images build)", True))
    except DbexpError as exc:
        rows.append(("engine", str(exc), False))
    try:
        mirror = pull.mirror()
        rows.append(("registry", f"official images from mirror {mirror} ({pull.MIRROR_ENV})" if mirror
                     else f"official images from Docker Hub (set {pull.MIRROR_ENV} to use a mirror)", True))
    except DbexpError as exc:
        rows.append(("registry", str(exc), False))
    facts = host_facts()
    rows.append(("this host", f"{facts['cpus']} CPUs ({facts['cpu_model']}), {facts['memory_gib']} GiB, "
                              f"{facts['os']}, kernel {facts['kernel']}", True))
    rows.append(("metrics", "local engine: /proc and cgroups readable" if is_local()
                 else "remote engine: server CPU/context switches/I/O not readable, recorded as missing",
                 is_local()))
    sb = shutil.which("sysbench")
    rows.append(("sysbench", facts["sysbench"] or "missing" if sb else "missing (make setup)", sb is not None))
    rows.append(("chromium", shutil.which("chromium") or "missing (needed only to check the book's charts)",
                 shutil.which("chromium") is not None))
    from dbexp.metrics import noise, tracing

    rows += tracing.report()
    rows += noise.noise_report()  # steal and timer noise now: fit to measure?
    return rows
