"""The sources the chapters quote, each with its original URL, defined once."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    url: str
    title: str

    def cite(self, text: str, where: str = "source") -> str:
        """A paraphrased claim with a link to where it was made (HTML, for claims tables)."""
        return f'{text} (<a href="{self.url}">{where}</a>)'


BINWANG = Source("https://github.com/enhancedformysql/"
                 "The-Art-of-Problem-Solving-in-Software-Engineering_How-to-Make-MySQL-Better",
                 "The Art of Problem-Solving in Software Engineering: How to Make MySQL Better")
KERNELMAKER_MVCC = Source("https://kernelmaker.github.io/mysql-vs-pg-mvcc", "MySQL vs PostgreSQL MVCC")
KERNELMAKER_BLOB = Source("https://kernelmaker.github.io/mysql-blob",
                          "MySQL BLOB Internals - Partial Update Implementation and Multi-Versioning")
PG14_NOTES = Source("https://www.postgresql.org/docs/release/14.0/", "PostgreSQL 14 release notes")
CALLAGHAN_24 = Source("https://smalldatum.blogspot.com/2025/12/sysbench-for-mysql-56-through-95-on-2.html",
                      "Sysbench for MySQL 5.6 through 9.5 on a 2-socket, 24-core server")
CALLAGHAN_PG = Source("https://smalldatum.blogspot.com/2025/12/io-bound-sysbench-vs-postgres-on-48.html",
                      "IO-bound sysbench vs Postgres on a 48-core server")
KERNELMAKER_BUFFERPOOL = Source("https://kernelmaker.github.io/mysql-vs-pg-bufferpool",
                                "MySQL vs PostgreSQL Internals (Part 1): Buffer Pool")
CALLAGHAN_GTID = Source("https://smalldatum.blogspot.com/2025/12/performance-regressions-in-mysql-84-and.html",
                        "Performance regressions in MySQL 8.4 and 9.x with sysbench")
KERNELMAKER_REGRESSION = Source("https://kernelmaker.github.io/MySQL-regression-1",
                                "Dissecting the MySQL 8.0 Performance Regression on oltp_update_non_index")
KERNELMAKER_PGVECTOR_RR = Source("https://kernelmaker.github.io/pgvector_rr",
                                 "Is pgvector breaking PostgreSQL's Repeatable Read isolation?")
PGHACKERS_PINS = Source("https://www.postgresql.org/message-id/"
                        "CAE8JnxNTETEUiAOF31%3D_yo%3DpvyAi9npOeJfcTvEJJbi4vomtYA%40mail.gmail.com",
                        "Addressing buffer private reference count scalability issue (pgsql-hackers, March 2026)")
CALLAGHAN_VECTORS_1 = Source("https://smalldatum.blogspot.com/2025/01/evaluating-vector-indexes-in-mariadb.html",
                             "Evaluating vector indexes in MariaDB and pgvector: part 1")
CALLAGHAN_VECTORS_2 = Source("https://smalldatum.blogspot.com/2025/01/evaluating-vector-indexes-in-mariadb_13.html",
                             "Evaluating vector indexes in MariaDB and pgvector: part 2")
