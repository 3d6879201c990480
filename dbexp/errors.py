"""Errors meant for people: one line, naming the bad value and what would be valid."""


class DbexpError(Exception):
    """An error the CLI prints as one line (``error: ...``) without a traceback."""


def choices(values, last: str = "or") -> str:
    """Format valid values for an error message: 'a, b or c' (``last``: the word before the last)."""
    values = [str(v) for v in values]
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + f" {last} " + values[-1]


def listed(values) -> str:
    """Values as a sentence lists them: 'a, b and c'."""
    return choices(values, "and")


class RetryableError(DbexpError):
    """A run failed for a cause the lab can retry (a probe that did not stop, a statement the
    server's history missed, a run the VM's steal swamped): the sweep keeps the failed run in the
    store, counts it, and measures the point again a bounded number of times; only a failure that
    persists fails the chapter."""
