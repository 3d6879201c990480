"""Errors meant for people: one line, naming the bad value and what would be valid."""


class DbexpError(Exception):
    """An error the CLI prints as one line (``error: ...``) without a traceback."""


def choices(values) -> str:
    """Format valid values for an error message: 'a, b or c'."""
    values = [str(v) for v in values]
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + " or " + values[-1]


class RetryableError(DbexpError):
    """A run failed for a cause the lab can retry (a probe that did not stop, a statement the
    server's history missed, a run the VM's steal swamped): the sweep keeps the failed run in the
    store, counts it, and measures the point again a bounded number of times; only a failure that
    persists fails the chapter."""
