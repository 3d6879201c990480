"""performance_schema's statement clock against a real MySQL server: the reader's last statement of a
block is recorded before the history is read (the fence), and what the history cannot hold is said."""

from __future__ import annotations

import pytest

from dbexp.chapters.mvcc_chains.engines import StatementClockError
from dbexp.chapters.mvcc_chains.engines.innodb import PerfSchemaClock
from dbexp.errors import DbexpError, RetryableError

pytestmark = pytest.mark.docker

MARKER = "SELECT /* timed */"


@pytest.fixture()
def clock(my):
    reader, monitor = my.connect(), my.connect()
    try:
        yield PerfSchemaClock(reader, monitor, MARKER)
    finally:
        reader.close()
        monitor.close()


def block(clock, n: int, other=None, others: int = 0):
    clock.begin()
    cur = clock.reader.cursor()
    for i in range(n):
        cur.execute(clock.wrap(f"{MARKER} {i}"))
        cur.fetchall()
    cur.close()
    if other is not None:
        ocur = other.cursor()
        for _ in range(others):
            ocur.execute("DO 1")
        ocur.close()
    return clock.end(n)


def test_every_statement_of_many_short_blocks_is_timed(clock):
    """The server records a statement's end after the client has its result; read at once, the history
    missed the last statement of about 1 block in 200 on this lab's 2-CPU VM (the server on one CPU)
    before the reader ran its fence. Short blocks read back to back give the race the most chances."""
    short = [n for n in (len(block(clock, 3)["server_us"]) for _ in range(2000)) if n != 3]
    assert short == []


def test_a_history_filled_by_other_threads_is_a_retryable_error_that_says_so(my, clock):
    other = my.connect()
    try:
        with pytest.raises(StatementClockError, match=r"filled during the block \(\d+ of this reader's, "
                                                      r"\d+ of other threads'\)") as info:
            block(clock, 3, other, clock.history_size + 10)
        assert isinstance(info.value, RetryableError)
        assert len(block(clock, 3)["server_us"]) == 3  # the next block is whole again
    finally:
        other.close()


def test_a_block_larger_than_the_history_is_refused_plainly(clock):
    clock.history_size = 4  # the server's is read-only: a smaller one as if the server had it
    with pytest.raises(DbexpError, match="a block of 4 statements does not fit") as info:
        block(clock, 4)
    assert not isinstance(info.value, RetryableError)
