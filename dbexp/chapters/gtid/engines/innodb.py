"""The gtid chapter's part for MySQL (InnoDB): its binary log, GTIDs and performance_schema as the
chapter sets and reads them: the settings of each configuration, GTIDs switched on a running server,
the binlog's size."""

from __future__ import annotations

import re

from dbexp.chapters.gtid.configs import CONFIGS
from dbexp.chapters.gtid.engines import GtidEngine
from dbexp.errors import DbexpError
from dbexp.experiments import binlog as mysql_binlog
from dbexp.servers.options import same_setting
from dbexp.servers.registry import flavor_of_spec
from dbexp.servers.sql import query
from dbexp.waits import wait_until


class MySQLBinlog(GtidEngine):
    """The gtid chapter's part for MySQL, built with the server's flavor."""

    GTID_STEPS = ("OFF", "OFF_PERMISSIVE", "ON_PERMISSIVE", "ON")

    def binlog_settings(self) -> dict[str, str]:
        """The binlog on, everything it writes stated, GTIDs off, the write-set options at the server's
        defaults, as the sources ran them (dbexp.experiments.binlog)."""
        return mysql_binlog.binlog_settings(self.flavor, write_sets="default")

    gtid_settings = staticmethod(mysql_binlog.gtid_settings)

    def configurations(self) -> dict[str, dict[str, str]]:
        """The settings of each configuration (CONFIGS), commits relaxed in all of them."""
        relaxed = self.flavor.capability("relaxed_commit").settings()
        binlog = {**self.binlog_settings(), **relaxed}
        settings = {"binlog off": relaxed, "binlog": binlog,
                    "binlog + GTID": {**binlog, **self.gtid_settings(True)},
                    "binlog, P_S off": {**binlog, "performance_schema": "OFF"},
                    "binlog, twin": {**binlog, "server_id": "2"}}
        return {config: settings[config] for config in CONFIGS}

    def gtid_table_per_commit(self) -> bool:
        """Whether InnoDB writes each commit's GTID into mysql.gtid_executed (the series' fact): the
        persistence the GTID source's extra context switches and writes can come from."""
        return self.flavor.capability("series").gtid_table_per_commit

    def has_log_writer_threads_option(self) -> bool:
        """Whether the series has innodb_log_writer_threads (the regression source's second factor)."""
        return bool(self.flavor.capability("series").supported({"innodb_log_writer_threads": "ON"}))

    def binlog_on(self, conn) -> bool:
        return str(query(conn, "SELECT @@GLOBAL.log_bin")[0][0]) in ("1", "ON")

    VARIED = ("log_bin", "gtid_mode", "performance_schema")  # what the configurations change (checked where set)

    def declared_state(self, conn, settings: dict[str, str]) -> dict[str, tuple[bool, object]]:
        """The configuration's binlog, GTID and performance_schema settings in effect, and purge caught up
        (the flavor's "cleanup" capability: the history list under its limit)."""
        wanted = {"log_bin": "ON" if "log_bin" in settings else "OFF",
                  **{name: settings[name] for name in self.VARIED if name in settings and name != "log_bin"}}
        out = {}
        for name, value in wanted.items():
            seen = str(query(conn, f"SELECT @@GLOBAL.{name}")[0][0])
            out[f"{name} {value}"] = (same_setting(seen, value), seen)
        return {**out, **self.flavor.capability("cleanup").state(conn, "sbtest1")}

    def binlog_bytes(self, conn) -> float | None:
        """Bytes in the binlog files now (SHOW BINARY LOGS), or None with the binlog off."""
        if not self.binlog_on(conn):
            return None
        return float(sum(int(r[1]) for r in query(conn, "SHOW BINARY LOGS")))

    def binlog_end(self, conn) -> tuple[str, int] | None:
        """The last binlog file and its size (SHOW BINARY LOGS: the end of the log when no commit is being
        written, an event boundary), or None with the binlog off."""
        if not self.binlog_on(conn):
            return None
        rows = query(conn, "SHOW BINARY LOGS")
        return str(rows[-1][0]), int(rows[-1][1])

    def binlog_events(self, conn, start: tuple[str, int], limit: int) -> dict[str, float]:
        """SHOW BINLOG EVENTS from ``start`` (at most ``limit`` events, in that file), counted by event type up
        to the last transaction's end (an ``Xid`` event: InnoDB's commit), with "transactions": how many ended.
        A read of what each commit wrote, not of its bytes (:meth:`binlog_bytes`)."""
        name, pos = start
        if not re.fullmatch(r"[\w.-]+", name):
            raise DbexpError(f"bad binlog file name {name!r}: expected letters, digits, '.', '_' or '-'")
        rows = query(conn, f"SHOW BINLOG EVENTS IN '{name}' FROM {int(pos)} LIMIT {int(limit)}")
        return count_events([str(r[2]) for r in rows])

    def compiled_defaults(self, server) -> dict[str, bool]:
        """gtid_mode and enforce_gtid_consistency as the server binary's own defaults print them (its options
        probe, ``mysqld --no-defaults --verbose --help``, run in the server's container): True where ON."""
        entrypoint, user, args = self.flavor.options_probe
        if server.container is None:
            raise DbexpError(f"{self.flavor.name} {self.flavor.version}: its compiled defaults are read in its "
                             "container, and this server runs without one")
        code, out = server.container.exec_run([*entrypoint, *args], **({"user": user} if user else {}))
        found = parse_defaults(out.decode("utf-8", "replace"), ("gtid_mode", "enforce_gtid_consistency"))
        missing = [name for name, v in found.items() if v is None]
        if code != 0 or missing:
            raise DbexpError(f"{self.flavor.name} {self.flavor.version}: its options probe (exit {code}) printed "
                             f"no default for {', '.join(missing) or 'every option'}")
        return {name: same_setting(v, "ON") for name, v in found.items()}

    def gtids_executed(self, conn) -> float:
        """The GTIDs in ``gtid_executed`` (every transaction committed with one, since the server started),
        counted from the set's intervals (:func:`count_gtids`)."""
        return float(count_gtids(str(query(conn, "SELECT @@GLOBAL.gtid_executed")[0][0] or "")))

    def set_gtid(self, conn, on: bool, timeout_s: float = 30.0) -> None:
        """gtid_mode and enforce_gtid_consistency ON (or OFF) on a running server, one step at a
        time as MySQL requires, waiting before the last step for transactions of the old kind to end."""
        now = str(query(conn, "SELECT @@GLOBAL.gtid_mode")[0][0])
        steps = list(self.GTID_STEPS) if on else list(reversed(self.GTID_STEPS))
        if on:
            query(conn, "SET GLOBAL enforce_gtid_consistency = ON")
        for i, mode in enumerate(steps[steps.index(now) + 1:], start=steps.index(now) + 1):
            if i == len(steps) - 1:  # the last step needs the other kind of transaction gone
                counter = "Ongoing_anonymous_transaction_count" if on else "Ongoing_automatic_gtid_violating_transaction_count"

                def ongoing() -> int:
                    rows = query(conn, f"SHOW GLOBAL STATUS LIKE '{counter}'")
                    return int(rows[0][1]) if rows else 0

                wait_until(lambda: ongoing() == 0, timeout_s, f"gtid_mode reaching {mode}",
                           detail=lambda: f"{counter} stayed {ongoing()}")
            query(conn, f"SET GLOBAL gtid_mode = {mode}")
        if not on:
            query(conn, "SET GLOBAL enforce_gtid_consistency = OFF")


def count_events(types: list[str]) -> dict[str, float]:
    """Binlog event types in the log's order, counted up to the last transaction's end (an ``Xid`` event:
    InnoDB's commit), with "transactions": how many ended."""
    ends = [i for i, t in enumerate(types) if t == "Xid"]
    counts: dict[str, float] = {"transactions": float(len(ends))}
    for t in types[:ends[-1] + 1] if ends else []:
        counts[t] = counts.get(t, 0.0) + 1
    return counts


def parse_defaults(text: str, names) -> dict[str, str | None]:
    """The value column of ``mysqld --verbose --help``'s table of defaults for each option of ``names`` (its
    line: the option's name with dashes, spaces, the value), None where it has no line."""
    out = {}
    for name in names:
        m = re.search(rf"^{re.escape(name.replace('_', '-'))}[ \t]+(\S+)[ \t]*$", text, re.M)
        out[name] = m.group(1) if m else None
    return out


def count_gtids(text: str) -> int:
    """The GTIDs a GTID set's text holds ('uuid:1-5:11,uuid2:1-27' -> 33; 8.3's tagged sets, 'uuid:1-5:tag:1-3',
    count their tags' intervals too)."""
    n = 0
    for member in text.replace("\n", "").split(","):
        for part in member.strip().split(":")[1:]:
            lo, _, hi = part.partition("-")
            if lo.isdigit():
                n += (int(hi) if hi else int(lo)) - int(lo) + 1
    return n


def of_series(name: str) -> MySQLBinlog:
    """The part for a results' server name ('mysql 8.0.15'), to ask what its series has."""
    return MySQLBinlog(flavor_of_spec(name.replace(" ", ":", 1)))
