"""The container's cgroup: its exact CPU time and the list of its processes."""

from __future__ import annotations

from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


def _cgroup_paths(pid: int) -> dict[str, Path]:
    """Controller -> cgroup folder of a process (cgroup v1 and v2)."""
    out: dict[str, Path] = {}
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # cgroup v2 unified hierarchy
            out["unified"] = ROOT / path.lstrip("/")
            continue
        for ctrl in controllers.split(","):
            base = ROOT / controllers
            if not base.exists():
                base = ROOT / ctrl
            out[ctrl] = base / path.lstrip("/")
    return out


class ContainerCgroup:
    def __init__(self, pid: int):
        self.paths = _cgroup_paths(pid)

    def cpu_seconds(self) -> float | None:
        if "cpuacct" in self.paths and (self.paths["cpuacct"] / "cpuacct.usage").exists():
            return int((self.paths["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        if "unified" in self.paths and (self.paths["unified"] / "cpu.stat").exists():
            for line in (self.paths["unified"] / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec"):
                    return int(line.split()[1]) / 1e6
        return None

    def pids(self) -> list[int]:
        """Every process (thread-group leader) in the container."""
        for ctrl in ("pids", "cpu", "cpuacct", "memory", "unified"):
            path = self.paths.get(ctrl)
            if path is not None and (path / "cgroup.procs").exists():
                return [int(p) for p in (path / "cgroup.procs").read_text().split()]
        return []
