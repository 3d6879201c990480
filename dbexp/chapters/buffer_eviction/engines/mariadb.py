"""MariaDB's InnoDB buffer pool: MySQL's (innodb.py) but for the one option it has dropped and
INNODB_BUFFER_PAGE_LRU's old-sublist flag (its type, and left NULL)."""

from __future__ import annotations

from .innodb import BufferPool


class MariaDBBufferPool(BufferPool):
    code_the_source_reads = False  # MariaDB's InnoDB, whose flushing and page cleaner were rewritten in 10.5
    is_old_sql = "IS_OLD = 1"  # an int(1) column here ('YES' would compare as 0 and count the young pages)
    # ... and NULL on every page (11.8.9): the old sublist is read by LRU position (innodb.OLD_BY_POSITION); the runs
    # sampled before that rule stored 0 old pages here
    fills_is_old = False

    def buffer_pool_settings(self, mb: int) -> dict[str, str]:
        settings = super().buffer_pool_settings(mb)
        del settings["innodb_buffer_pool_instances"]  # one instance always since 10.5: the option is gone
        return settings
