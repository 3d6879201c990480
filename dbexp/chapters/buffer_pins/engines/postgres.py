"""PostgreSQL's part: the pinbench extension, the two tables, pinbench_prewarm, and pg_buffercache for
what shared buffers hold."""

from __future__ import annotations

from dbexp.chapters.buffer_pins import queries
from dbexp.chapters.buffer_pins.engines import PinsPart


class Postgres(PinsPart):
    def install(self, conn) -> None:
        with conn.cursor() as cur:
            cur.execute("CREATE EXTENSION IF NOT EXISTS pinbench")
            cur.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")

    def make_block_table(self, conn, blocks: int) -> None:
        queries.make_block_table(conn, blocks)

    def make_query_table(self, conn, rows: int) -> None:
        queries.make_sbtest(conn, rows)

    def prewarm(self, conn, relations) -> None:
        with conn.cursor() as cur:
            for rel in relations:
                cur.execute("SELECT pinbench_prewarm(%s::regclass)", (rel,))

    def resident_pages(self, conn, table: str) -> tuple[int, int]:
        with conn.cursor() as cur:
            cur.execute("SELECT (SELECT count(*) FROM pg_buffercache b JOIN pg_class c "
                        "ON b.relfilenode = pg_relation_filenode(c.oid) WHERE c.relname = %s), "
                        "pg_relation_size(%s::regclass) / current_setting('block_size')::int", (table, table))
            resident, pages = cur.fetchone()
        return int(resident), int(pages)

    def tagged(self, settings: dict[str, str], tag: str) -> dict[str, str]:
        """The cluster's name (shown in its processes' titles only)."""
        return {**settings, "cluster_name": tag.replace(" ", "_")}
