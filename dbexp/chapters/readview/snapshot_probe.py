"""PostgreSQL 14+ reuses a snapshot while no transaction has ended since it was built: a timed
``GetSnapshotData`` is then either a rebuild (the running xids walked and copied) or a reuse (a few
fields set), and a mean over both says little about either. This probe times the two apart.

Every rebuild stores the transaction-completion count it was built at in the snapshot
(``snapXactCompletionCount``); a reuse leaves it as it was. So bpftrace reads that field of the
snapshot the function was given (its first argument) when the call enters and when it returns: a
call that changed it rebuilt, one that did not reused. The field's offset is the engine part's
(postgres.Snapshots.completion_count_offset: it sits 16 bytes earlier from PostgreSQL 18 on). What the counter went through during a run (``counter_span``) is checked against the writer's
commits by the real-server tests, so a wrong offset shows.

A call during which its thread was switched out is set aside as in dbexp.metrics.uprobe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dbexp.metrics.uprobe import PROBES, Bpftrace, Timed, maps, only_server, server_pid

SCRIPT = """
uprobe:{path}:{symbol} /{only}/ {{
  @start[tid] = nsecs; @switched[tid] = 0; @snap[tid] = arg0;
  @before[tid] = *(uint64 *)uptr(arg0 + {offset});
}}
tracepoint:sched:sched_switch /@start[args->prev_pid]/ {{ @switched[args->prev_pid] = 1; }}
uretprobe:{path}:{symbol} /@start[tid]/ {{
  $d = nsecs - @start[tid];
  $after = *(uint64 *)uptr(@snap[tid] + {offset});
  if (@switched[tid]) {{ @out_calls = count(); @out_ns = sum($d); }}
  else if ($after != @before[tid]) {{
    @calls = count(); @ns = sum($d); @hist = hist($d); @count_min = min($after); @count_max = max($after);
  }}
  else {{ @reused_calls = count(); @reused_ns = sum($d); @reused_hist = hist($d); }}
  delete(@start[tid]); delete(@switched[tid]); delete(@snap[tid]); delete(@before[tid]);
}}
BEGIN {{ printf("ready\\n"); }}
END {{ clear(@start); clear(@switched); clear(@snap); clear(@before); }}
"""


@dataclass
class Split:
    """The calls that rebuilt (``rebuilt``) and those that reused (``reused``), each timed, with the
    calls switched out set aside (counted in ``rebuilt.switched_calls``: their path is not told)."""

    rebuilt: Timed = field(default_factory=Timed)
    reused: Timed = field(default_factory=Timed)
    counter_span: int | None = None  # transactions completed between the first and last rebuild seen

    @property
    def calls(self) -> int:
        return self.rebuilt.calls + self.reused.calls + self.rebuilt.switched_calls

    @property
    def rebuilt_share(self) -> float | None:
        timed = self.rebuilt.calls + self.reused.calls
        return self.rebuilt.calls / timed if timed else None


def script(path: str, symbol: str, offset: int) -> str:
    return SCRIPT.format(path=path, symbol=symbol, offset=offset, only=only_server(server_pid(path)))


def parse(lines: list[str]) -> Split:
    """bpftrace's ``-f json`` lines after SIGINT -> Split (no line for a map: zero calls)."""
    m = maps(lines)
    rebuilt = Timed(calls=int(m.get("@calls", 0)), total_ns=int(m.get("@ns", 0)),
                    switched_calls=int(m.get("@out_calls", 0)), switched_ns=int(m.get("@out_ns", 0)),
                    hist=list(m.get("@hist", [])))
    reused = Timed(calls=int(m.get("@reused_calls", 0)), total_ns=int(m.get("@reused_ns", 0)),
                   hist=list(m.get("@reused_hist", [])))
    span = int(m["@count_max"]) - int(m["@count_min"]) if "@count_max" in m and "@count_min" in m else None
    return Split(rebuilt, reused, span)


class SplitTimer(Bpftrace):
    """``with SplitTimer(path, symbol, offset) as t: ...`` then ``t.result``: every call in the block
    timed, rebuilds apart from reuses."""

    def __init__(self, path: str, symbol: str, offset: int, pin: str | None = None,
                 attach_timeout_s: float = 60.0):
        super().__init__(script(path, symbol, offset), PROBES, f"{symbol} in {path}", pin, attach_timeout_s)
        self.result: Split | None = None

    def finished(self) -> None:
        self.result = parse(self.lines)
