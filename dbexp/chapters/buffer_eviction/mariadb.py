"""MariaDB's InnoDB buffer pool: MySQL's (innodb.py) but for the one option it has dropped."""

from __future__ import annotations

from .innodb import BufferPool


class MariaDBBufferPool(BufferPool):
    def buffer_pool_settings(self, mb: int) -> dict[str, str]:
        settings = super().buffer_pool_settings(mb)
        del settings["innodb_buffer_pool_instances"]  # one instance always since 10.5: the option is gone
        return settings
