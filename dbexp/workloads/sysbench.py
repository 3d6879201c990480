"""Where a workload runs: sysbench pinned to its own CPUs, standard scripts or the project's Lua."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from dbexp import process
from dbexp.errors import DbexpError, choices
from dbexp.servers.config import check_cpuset
from dbexp.workloads.parse import SysbenchResult, parse_prepare, parse_run

STANDARD = ("oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only",
            "oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete", "select_random_points",
            "select_random_ranges")
LUA_DIR = Path(str(resources.files("dbexp.workloads") / "lua"))


def project_scripts() -> list[str]:
    return sorted(p.stem for p in LUA_DIR.glob("*.lua") if not p.stem.startswith("_"))


def script_path(name: str) -> str:
    """A standard oltp_* script (found by sysbench itself) or one of the project's Lua scripts."""
    if name in STANDARD:
        return name
    local = LUA_DIR / f"{name}.lua"
    if local.exists():
        return str(local)
    raise DbexpError(f"unknown sysbench script {name!r}: valid are {choices(list(STANDARD) + project_scripts())}")


def sysbench_binary() -> str:
    path = shutil.which("sysbench")
    if path is None:
        raise DbexpError("sysbench is not installed; run `make setup` (Debian: apt-get install sysbench)")
    return path


@dataclass(frozen=True)
class Workload:
    """One sysbench invocation's parameters (everything but the server)."""

    script: str = "oltp_point_select"
    threads: int = 4
    duration_s: float = 10
    tables: int = 1
    table_size: int = 10000
    report_interval: int = 1
    cpuset: str | None = "0"  # client CPUs; None: unpinned
    options: tuple[tuple[str, str], ...] = ()  # extra --key=value for the script
    database: str = "sbtest"

    def __post_init__(self):
        script_path(self.script)
        check_cpuset(self.cpuset, "client cpuset")
        for name, value, low in (("threads", self.threads, 1), ("tables", self.tables, 1),
                                 ("table_size", self.table_size, 1), ("duration_s", self.duration_s, 1)):
            if not isinstance(value, (int, float)) or value < low:
                raise DbexpError(f"bad workload {name} {value!r}: expected a number >= {low}")

    def params(self) -> dict:
        return {"script": self.script, "threads": self.threads, "duration_s": self.duration_s,
                "tables": self.tables, "table_size": self.table_size, "client_cpuset": self.cpuset,
                "options": dict(self.options), "report_interval": self.report_interval}

    def dataset_key(self) -> tuple:
        """Runs with equal keys can share a prepared dataset."""
        return (self.database, self.tables, self.table_size)


def command(workload: Workload, server, phase: str) -> list[str]:
    """The exact command line; what a person would type to reproduce the run by hand."""
    cmd = []
    if workload.cpuset:
        cmd += ["taskset", "-c", workload.cpuset]
    cmd += [sysbench_binary(), script_path(workload.script)]
    cmd += server.flavor.sysbench_args(server.port, workload.database)
    cmd += [f"--tables={workload.tables}", f"--table-size={workload.table_size}"]
    cmd += [f"--{k}={v}" for k, v in workload.options]
    if phase == "run":
        cmd += [f"--threads={workload.threads}", f"--time={int(workload.duration_s)}",
                f"--report-interval={workload.report_interval}", "--percentile=95", "--histogram=on",
                "--rand-type=uniform"]
        if "db-ps-mode" not in dict(workload.options):  # prepared statements unless the workload says
            cmd.append("--db-ps-mode=auto")
    elif phase == "prepare":
        cmd += [f"--threads={min(workload.tables, 4)}"]
    cmd.append(phase)
    return cmd


@dataclass
class Finished:
    result: SysbenchResult | None
    output: str
    returncode: int
    wall_s: float
    client_cpu_s: float  # user + system CPU of the sysbench process
    client_cs: float  # voluntary + involuntary context switches
    cmd: list[str] = field(default_factory=list)


class Running:
    """A sysbench process in flight; several can run against one server at once."""

    def __init__(self, cmd: list[str]):
        self.cmd = cmd
        self._out = tempfile.TemporaryFile(mode="w+")
        self.started = time.monotonic()
        self.proc = process.Child(cmd, stdout=self._out, stderr=subprocess.STDOUT, text=True, group=True)

    def wait(self, timeout_s: float | None = None) -> Finished:
        try:
            if not self.proc.reap(timeout_s):
                raise DbexpError(f"sysbench ran past {timeout_s:.0f} s and was stopped: {' '.join(self.cmd)}")
        except BaseException:
            self.kill()  # Ctrl-C, SIGTERM or a timeout: no sysbench is left running
            raise
        usage = self.proc.usage
        self._out.seek(0)
        text = self._out.read()
        self._out.close()
        return Finished(None, text, self.proc.returncode, time.monotonic() - self.started,
                        usage.ru_utime + usage.ru_stime, float(usage.ru_nvcsw + usage.ru_nivcsw), self.cmd)

    def has_started(self) -> bool:
        """sysbench has started its threads (its run is under way), judged from its output so far."""
        return "Threads started!" in os.pread(self._out.fileno(), 1 << 16, 0).decode(errors="replace")

    def running(self) -> bool:
        """Still running (asked without reaping it: wait() collects its exit and resource use)."""
        return self.proc.running()

    def kill(self) -> None:
        self.proc.end()


def start_run(workload: Workload, server) -> Running:
    return Running(command(workload, server, "run"))


def finish_run(running: Running, workload: Workload) -> Finished:
    done = running.wait(timeout_s=workload.duration_s + 120)
    if done.returncode != 0:
        raise DbexpError(f"sysbench {workload.script} failed (exit {done.returncode}): "
                         f"{_last_error(done.output)}")
    done.result = parse_run(done.output)
    return done


def run(workload: Workload, server) -> Finished:
    return finish_run(start_run(workload, server), workload)


def _last_error(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if "FATAL" in ln or "error" in ln.lower()]
    return (lines or text.strip().splitlines() or ["(no output)"])[-1].strip()


def prepare(workload: Workload, server) -> dict[str, float]:
    """Create the dataset from scratch (cleanup, then prepare); returns rows and seconds taken."""
    server.ensure_database(workload.database)
    process.run(command(workload, server, "cleanup"), capture_output=True, text=True)
    started = time.monotonic()
    proc = process.run(command(workload, server, "prepare"), capture_output=True, text=True)
    if proc.returncode != 0:
        raise DbexpError(f"sysbench prepare for {workload.script} failed: {_last_error(proc.stdout + proc.stderr)}")
    out = parse_prepare(proc.stdout)
    out["prepare_s"] = time.monotonic() - started
    out["settle_timed_out"] = float(not settle(server, workload.database))
    out["settle_s"] = time.monotonic() - started - out["prepare_s"]
    return out


def settle(server, database: str) -> bool:
    """Leave no background work from loading behind for the first measured run (the flavor's own
    way: PostgreSQL vacuums and checkpoints, InnoDB flushes its dirty pages); False if the flavor
    gave up waiting."""
    conn = server.connect(database)
    try:
        return bool(server.flavor.settle(conn))
    finally:
        conn.close()
