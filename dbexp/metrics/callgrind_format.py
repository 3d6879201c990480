"""callgrind's output files, read: the events counted per function, self and inclusive, and the calls.

The format is valgrind's own (https://valgrind.org/docs/manual/cl-format.html): a header (``events:``
names the counted events, ``summary:``/``totals:`` their totals, ``desc: Trigger:`` what wrote the
dump), then cost lines per function: ``ob=``/``fl=``/``fn=`` set the object, file and function a
cost line belongs to, and ``cfn=`` (with ``cob=``/``cfi=``) then ``calls=N ...`` say that the next
cost line is a call's cost, the callee's inclusive cost at that call site. Names may be compressed:
``(id) name`` defines a number that later lines use alone (``(id)``), one table per kind (objects,
files, functions). Positions may be relative (``+N``, ``-N``, ``*``); the lab's builds have no line
information, so all of them are 0, but every form is read.

What a function costs is kept as callgrind_annotate computes it (valgrind's own reader, so that the
two agree): the exclusive cost is the function's own cost lines; the inclusive cost is the cost of
every call into it where any call into it was recorded, else its own cost plus its calls'. A function
that calls itself counts its nested calls again in its inclusive cost, as there. One difference: a call
still running when the dump was written (``calls=0``: the stack of each thread at a dump, the mark's
statement among them) is a call here, its caller's own cost there, so that here the functions' own
costs add up to the file's totals. Functions are told apart by object and name (callgrind_annotate by file and name: the
servers' builds have no file information, so ``???`` for all).

gprof2dot's parser (PyPI) reads this format too, but keeps only the first event, and the lab needs
them all (instructions, data reads and writes, simulated cache misses, branches and mispredictions).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from dbexp.errors import DbexpError

# The events callgrind counts: instructions (always), and with --cache-sim=yes data reads and writes
# and the simulated caches' misses (I1/D1 first level, LL last level; r read, w write), with
# --branch-sim=yes conditional and indirect branches and their mispredictions.
EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim")

Fn = tuple[str, str]  # (object, function): an object is a binary's path as the process saw it


def fn_label(fn: Fn) -> str:
    """'do_command(THD*) (mysqld)': the function and its binary's file name."""
    obj, name = fn
    return f"{name} ({os.path.basename(obj) or '???'})"


def _add(into: list[int], cost: list[int]) -> None:
    for i, v in enumerate(cost):
        into[i] += v


@dataclass
class Profile:
    """One dump: the events' totals, and per function its own cost, the cost of the calls into it and
    out of it (each a list of ints in the order of ``events``) and how often it was called."""

    events: tuple[str, ...]
    totals: list[int]
    header: dict[str, str] = field(default_factory=dict)  # pid, part, cmd, trigger, ...
    own: dict[Fn, list[int]] = field(default_factory=dict)
    called: dict[Fn, list[int]] = field(default_factory=dict)  # the inclusive cost of every call into it
    calling: dict[Fn, list[int]] = field(default_factory=dict)  # the inclusive cost of its calls out
    calls: dict[Fn, int] = field(default_factory=dict)  # calls into it
    callers: dict[Fn, set[Fn]] = field(default_factory=dict)  # the functions recorded calling it
    # (caller, callee) of the calls still running when the dump was written ('calls=0': made before it, their
    # cost so far in it): the stack of every thread at the dump. callgrind_annotate (3.19) reads such a
    # call's cost as the caller's own; here it is the call's, so that the functions' own costs add up to
    # the totals
    running: set[tuple[Fn, Fn]] = field(default_factory=set)

    @property
    def trigger(self) -> str:
        """What wrote the dump: 'Program termination', 'dump LABEL' (a vgdb ``dump LABEL``), ..."""
        return self.header.get("trigger", "")

    def total(self, event: str = "Ir") -> int:
        return self.totals[self._index(event)]

    def _index(self, event: str) -> int:
        try:
            return self.events.index(event)
        except ValueError:
            raise DbexpError(f"callgrind counted no event {event!r}: this profile has "
                             f"{', '.join(self.events)}") from None

    def functions(self) -> set[Fn]:
        return set(self.own) | set(self.called) | set(self.calling)

    def exclusive(self, fn: Fn) -> list[int]:
        return list(self.own.get(fn, [0] * len(self.events)))

    def inclusive(self, fn: Fn) -> list[int]:
        """callgrind_annotate's inclusive cost (module docstring)."""
        if fn in self.called:
            return list(self.called[fn])
        out = self.exclusive(fn)
        _add(out, self.calling.get(fn, [0] * len(self.events)))
        return out

    def find(self, name: str) -> list[Fn]:
        """The functions called ``name``, or whose name starts with ``name(`` (a C++ function by its
        unqualified signature's start: 'do_command' finds 'do_command(THD*)')."""
        return sorted(fn for fn in self.functions() if fn[1] == name or fn[1].startswith(name + "("))

    def above(self, fns) -> set[Fn]:
        """The functions that called ``fns``, directly or through others (their callers' callers...), less
        ``fns`` themselves: where the entry function of a toggled collection was called from."""
        out: set[Fn] = set()
        todo = list(fns)
        while todo:
            for caller in self.callers.get(todo.pop(), ()):
                if caller not in out:
                    out.add(caller)
                    todo.append(caller)
        return out - set(fns)

    def minus(self, earlier: "Profile") -> "Profile":
        """What was counted in this profile and not in ``earlier`` (two windows of one kind, the longer
        less the shorter): every cost and count subtracted, function by function."""
        if earlier.events != self.events:
            raise DbexpError(f"profiles of different events cannot be subtracted: {self.events} and {earlier.events}")
        n = len(self.events)

        def diff(a: dict, b: dict) -> dict:
            out = {}
            for key in set(a) | set(b):
                x, y = a.get(key, [0] * n), b.get(key, [0] * n)
                out[key] = [u - v for u, v in zip(x, y)]
            return out

        return Profile(self.events, [a - b for a, b in zip(self.totals, earlier.totals)],
                       {**self.header, "minus": earlier.header.get("trigger", "")},
                       diff(self.own, earlier.own), diff(self.called, earlier.called),
                       diff(self.calling, earlier.calling),
                       {k: self.calls.get(k, 0) - earlier.calls.get(k, 0) for k in set(self.calls) | set(earlier.calls)},
                       {k: self.callers.get(k, set()) | earlier.callers.get(k, set())
                        for k in set(self.callers) | set(earlier.callers)})

    def top(self, event: str = "Ir", n: int = 30, inclusive: bool = True,
            leave_out: set[Fn] = frozenset()) -> list[tuple[Fn, int]]:
        """The ``n`` functions with the largest cost of ``event`` (in absolute value: a difference of two
        profiles may go below 0), largest first, ties by name; none of ``leave_out``."""
        i = self._index(event)
        cost = self.inclusive if inclusive else self.exclusive
        rows = [(fn, cost(fn)[i]) for fn in self.functions() - set(leave_out)]
        rows.sort(key=lambda r: (-abs(r[1]), r[0]))
        return rows[:n]


# --- reading ------------------------------------------------------------------------------------

_NAME_KINDS = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
               "jfi": "fl", "fn": "fn", "cfn": "fn", "jfn": "fn"}


class _Names:
    """The compressed names of one file: '(id) name' defines, '(id)' refers, 'name' is itself."""

    def __init__(self):
        self.tables: dict[str, dict[str, str]] = {"ob": {}, "fl": {}, "fn": {}}

    def read(self, kind: str, text: str, where: str) -> str:
        text = text.strip()
        if not text.startswith("("):
            return text
        end = text.find(")")
        if end < 0:
            raise DbexpError(f"{where}: bad compressed name {text!r}: expected '(id)' or '(id) name'")
        ident, name = text[1:end], text[end + 1:].strip()
        table = self.tables[_NAME_KINDS[kind]]
        if name:
            table[ident] = name
            return name
        if ident not in table:
            raise DbexpError(f"{where}: name ({ident}) used before it was defined")
        return table[ident]


def _numbers(fields: list[str], n: int, where: str) -> list[int]:
    try:
        values = [int(x) for x in fields]
    except ValueError:
        raise DbexpError(f"{where}: bad cost line: expected integers, got {' '.join(fields)!r}") from None
    if len(values) > n:
        raise DbexpError(f"{where}: {len(values)} costs for {n} events")
    return values + [0] * (n - len(values))


def parse(text: str, source: str = "callgrind output") -> Profile:
    """A callgrind output file's text as a :class:`Profile`; a one-line error naming the line that is
    not of the format."""
    header: dict[str, str] = {}
    events: tuple[str, ...] = ()
    npos = 1
    totals: list[int] | None = None
    summary: list[int] | None = None
    names = _Names()
    profile: Profile | None = None
    ob = ""
    fn: Fn | None = None
    cob: str | None = None
    callee: Fn | None = None
    pending_calls: int | None = None  # the next cost line is the cost of this many calls to ``callee`` (0 too:
    # a call still running when the dump was written, made before it)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{source}, line {number}"
        head, sep, rest = line.partition(":")
        if sep and head in ("version", "creator", "pid", "cmd", "part", "thread", "positions", "events",
                            "summary", "totals", "desc", "event"):
            rest = rest.strip()
            if head == "events":
                events = tuple(rest.split())
            elif head == "positions":
                npos = len(rest.split())
            elif head in ("summary", "totals"):
                values = _numbers(rest.split(), len(events), where)
                if head == "totals":
                    totals = values
                else:
                    summary = values
            elif head == "desc":
                key, _, value = rest.partition(":")
                header[key.strip().lower()] = value.strip()
            elif head != "event":
                header[head] = rest
            continue
        if profile is None:
            if not events:
                raise DbexpError(f"{where}: cost data before an 'events:' line: not a callgrind output file")
            profile = Profile(events, [0] * len(events), header)
        key, eq, value = line.partition("=")
        if eq and key in _NAME_KINDS:
            name = names.read(key, value, where)
            if key == "ob":
                ob = name
            elif key == "fn":
                fn = (ob, name)
            elif key == "cob":
                cob = name
            elif key == "cfn":
                callee = (cob if cob is not None else ob, name)
            continue  # fl/fi/fe/cfi/cfl/jfi/jfn: files and jumps are not kept (the names are, for later lines)
        if eq and key == "calls":
            parts = value.split()
            if not parts or callee is None:
                raise DbexpError(f"{where}: 'calls=' without a count or before any 'cfn='")
            pending_calls = int(parts[0])
            continue
        if eq and key in ("jump", "jcnd"):
            continue  # jumps (--collect-jumps=yes) are not kept
        fields = line.split()
        if fn is None:
            raise DbexpError(f"{where}: a cost line before any 'fn=': {line[:80]!r}")
        cost = _numbers(fields[npos:], len(events), where)
        if pending_calls is not None:
            profile.calls[callee] = profile.calls.get(callee, 0) + pending_calls
            profile.callers.setdefault(callee, set()).add(fn)
            if pending_calls == 0:
                profile.running.add((fn, callee))
            _add(profile.called.setdefault(callee, [0] * len(events)), cost)
            _add(profile.calling.setdefault(fn, [0] * len(events)), cost)
            pending_calls = None
            cob = None  # a call's object is named before each call into another object
        else:
            _add(profile.own.setdefault(fn, [0] * len(events)), cost)
    if profile is None:
        if not events:
            raise DbexpError(f"{source}: no 'events:' line: not a callgrind output file (or one cut short)")
        profile = Profile(events, [0] * len(events), header)
    if totals is None and summary is None:
        raise DbexpError(f"{source}: no 'totals:' or 'summary:' line: the file was cut short")
    profile.totals = totals if totals is not None else summary
    return profile


def read(path: str | os.PathLike) -> Profile:
    with open(path, encoding="utf-8", errors="replace") as f:
        profile = parse(f.read(), str(path))
    profile.header["file"] = str(path)
    return profile


def complete(path: str | os.PathLike) -> bool:
    """Whether callgrind has finished writing the file: its last line is 'totals:' (written last)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 4096))
            tail = f.read().decode("utf-8", "replace").rstrip().splitlines()
    except OSError:
        return False
    return bool(tail) and tail[-1].startswith(("totals:", "summary:"))
