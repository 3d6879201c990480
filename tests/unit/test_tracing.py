"""Why a probe did not attach, in one line, from what bpftrace 0.17 really printed (fixtures captured on
a 2-CPU Debian 12 VM, kernel 6.18, as root without CAP_SYS_RESOURCE, tracefs not mounted)."""

from pathlib import Path

import pytest

from dbexp.metrics import tracing
from dbexp.metrics.uprobe import attach_mismatch, missing_symbols

FIXTURES = Path(__file__).parent / "fixtures" / "tracing"
pytestmark = pytest.mark.unit


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_the_rlimit_warning_is_never_the_cause():
    text = read("missing-symbol.stderr")
    assert "RLIMIT_MEMLOCK" in text
    assert tracing.cause(text, "no message") == "no message"


def test_a_missing_tracepoint_names_tracefs(monkeypatch):
    monkeypatch.setattr(tracing, "tracefs_mounted", lambda root=tracing.TRACEFS: False)
    why = tracing.cause(read("missing-tracepoint.stderr"))
    assert why.startswith("tracepoint sched:sched_switch not found: tracefs is not mounted at /sys/kernel/tracing")
    assert "mount -t tracefs nodev /sys/kernel/tracing" in why
    assert "\n" not in why and "RLIMIT" not in why


def test_a_missing_tracepoint_with_tracefs_mounted_is_the_kernel(monkeypatch):
    monkeypatch.setattr(tracing, "tracefs_mounted", lambda root=tracing.TRACEFS: True)
    assert tracing.cause(read("missing-tracepoint.stderr")) == "this kernel has no tracepoint sched:sched_switch"


def test_a_detach_without_tracefs():
    assert tracing.cause(read("detach-without-tracefs.stderr")).startswith(
        "tracefs is not mounted at /sys/kernel/tracing")


def test_a_missing_binary():
    assert tracing.cause(read("missing-binary.stderr")) == (
        "the binary to probe, /nonexistent/mysqld, does not exist (did the server exit?)")


def test_an_unknown_error_keeps_its_error_line_without_the_program_position():
    text = "ERROR: Unknown error -1: couldn't set RLIMIT_MEMLOCK for bpftrace.\nstdin:1:1-5: ERROR: something new\n"
    assert tracing.cause(text) == "ERROR: something new"


def test_a_missing_symbol_is_named_from_the_binary():
    # bpftrace attached BEGIN only and said nothing on stderr but the RLIMIT line: the count shows it
    libc = tracing.libc_path()
    program = f'uprobe:{libc}:no_such_function_xyz {{ @x = count(); }} BEGIN {{ printf("ready\\n"); }}'
    lines = read("missing-symbol.stdout").splitlines()
    why = attach_mismatch("a test", lines, 2, program)
    assert why == (f"bpftrace did not attach to a test: 1 of 2 probes attached "
                   f"({libc} defines no symbol no_such_function_xyz)")
    assert missing_symbols(f"uprobe:{libc}:getpid {{ }} uretprobe:{libc}:getpid {{ }}") == ""


@pytest.mark.parametrize("chapter", ["readview"])  # group_commit's: tests/unit/test_group_commit.py
def test_a_chapter_that_cannot_probe_leaves_its_probe_points_out_and_says_why(chapter, monkeypatch):
    import importlib

    from dbexp.experiments.chapter import Cpus

    mod = importlib.import_module(f"dbexp.chapters.{chapter}")
    monkeypatch.setattr(tracing, "unavailable", lambda: "probes need root: run as root or with password-less sudo")
    sc = mod.CHAPTER.scale("default")
    points = [p for part in mod.CHAPTER.design(sc, Cpus()) for p in part.points]
    probed = [p for p in points if p.params.probe and (p.server.spec.startswith(("mysql", "postgres")))]
    assert points and probed == []
    assert mod.probe_note() == ("The probe runs were skipped where these results were measured, since probes "
                                "cannot work there: probes need root: run as root or with password-less sudo.")
    monkeypatch.setattr(tracing, "unavailable", lambda: None)
    points = [p for part in mod.CHAPTER.design(sc, Cpus()) for p in part.points]
    assert any(p.params.probe for p in points) and mod.probe_note() == ""


def test_a_bpftrace_that_does_not_stop_fails_its_run_with_its_state_and_may_be_retried(monkeypatch):
    """A stand-in for bpftrace that ignores SIGINT: the stop's limit passes, the error says what the
    process was doing (its /proc state), and it is a RetryableError, so the sweep measures again."""
    import sys

    from dbexp.errors import RetryableError
    from dbexp.metrics import uprobe

    stub = ("import signal, sys, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            "print('{\"type\": \"attached_probes\", \"data\": {\"probes\": 1}}'); "
            "print('{\"type\": \"printf\", \"data\": \"ready\\\\n\"}'); "
            "sys.stdout.flush(); time.sleep(60)")
    monkeypatch.setattr(uprobe.Bpftrace, "command", lambda self: [sys.executable, "-c", stub])
    monkeypatch.setattr(uprobe.tracing, "ensure", lambda: None)
    monkeypatch.setattr(uprobe, "STOP_TIMEOUT_S", 0.5)
    with pytest.raises(uprobe.BpftraceStopError) as caught:
        with uprobe.Bpftrace("BEGIN { }", 1, "a stub", attach_timeout_s=10):
            pass
    assert isinstance(caught.value, RetryableError)
    assert "did not stop within 0.5 s (a stub): status: State:" in str(caught.value)


def test_the_handshake_sees_ready_when_it_arrives_in_one_read_with_the_attach_count(monkeypatch):
    """Under a starved CPU bpftrace's first two lines reach the pipe together: the handshake must not
    wait for more output (it once timed out so), and the maps printed at the stop are read."""
    import sys

    from dbexp.metrics import uprobe

    stub = ("import signal, sys, time; "
            "signal.signal(signal.SIGINT, lambda *a: (print('{\"type\": \"map\", \"data\": {\"@calls\": 7}}'), "
            "sys.exit(0))); "
            "sys.stdout.write('{\"type\": \"attached_probes\", \"data\": {\"probes\": 1}}\\n"
            "{\"type\": \"printf\", \"data\": \"ready\\\\n\"}\\n'); sys.stdout.flush(); time.sleep(30)")
    monkeypatch.setattr(uprobe.Bpftrace, "command", lambda self: [sys.executable, "-c", stub])
    monkeypatch.setattr(uprobe.tracing, "ensure", lambda: None)
    probe = uprobe.Bpftrace("BEGIN { }", 1, "a stub", attach_timeout_s=10)
    with probe:
        pass
    assert uprobe.maps(probe.lines) == {"@calls": 7} and probe.stop_s < 10


def test_perf_names_the_tracepoint_it_could_not_find(monkeypatch):
    text = read("perf-missing-tracepoint.stderr")  # perf 6.1's own words: a syntax error line first
    monkeypatch.setattr(tracing, "tracefs_mounted", lambda root=tracing.TRACEFS: True)
    assert tracing.cause(text) == "this kernel has no tracepoint sched:sched_nonexistent"
    monkeypatch.setattr(tracing, "tracefs_mounted", lambda root=tracing.TRACEFS: False)
    assert tracing.cause(text).startswith("tracepoint sched:sched_nonexistent not found: tracefs is not mounted")
