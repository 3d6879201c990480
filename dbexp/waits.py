"""One way to wait for a condition: poll it until it holds or a deadline passes.

Every polling loop in the lab (a server accepting connections, a settle step, a purge thread
catching up, a session appearing) goes through :func:`poll` or :func:`wait_until`, so the deadline,
the pause between checks and the error on timeout are written once.

:func:`wait_until` raises ``"<what> did not happen within N s"``; :func:`poll` returns None on timeout
for a caller whose error says more than that (the last error seen, a server's log, a counter's last
value). A check may raise to stop waiting at once (a server that exited will not start answering).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from dbexp.errors import DbexpError

T = TypeVar("T")


class WaitTimeout(DbexpError):
    """A condition did not hold within its deadline."""


def poll(check: Callable[[], T], timeout_s: float, interval_s: float = 0.1) -> T | None:
    """Call ``check`` until it returns a truthy value (returned) or ``timeout_s`` passes (None).
    ``check`` is called at least once; exceptions from it propagate."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(interval_s, left))


def wait_until(check: Callable[[], T], timeout_s: float, what: str, interval_s: float = 0.1,
               detail: Callable[[], str] | None = None) -> T:
    """Like :func:`poll`, but a timeout raises :class:`WaitTimeout` naming ``what`` (and
    ``detail()``, e.g. the last log lines, if given)."""
    value = poll(check, timeout_s, interval_s)
    if value:
        return value
    extra = detail() if detail else ""
    raise WaitTimeout(f"{what} did not happen within {timeout_s:g} s" + (f": {extra}" if extra else ""))
