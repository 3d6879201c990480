"""PostgreSQL's heap pages step by step, read with pageinspect: what the source says of HOT chains,
observed on one table of the server under test (autovacuum off on it, so only what the steps do happens).

1. **Whole tuples.** One row of a 400-byte text column (stored inline) and an integer gets one update of
   the integer while an old snapshot is open: the old and the new tuple's lengths (``lp_len``). A version
   holding only the changed column would be a few bytes plus a header; a whole tuple is as long as the old.
2. **A HOT chain needs room on its page.** The same row is updated again and again (the integer, which
   no index covers: HOT-eligible), the old snapshot still open so nothing can be pruned, until the new
   version lands on another page. Before each update the page's free space (``upper - lower`` of
   ``page_header``) is read; the chain should leave the page exactly when that free space is less than
   the new tuple plus its line pointer.
3. **A broken chain gets a new index entry, and no reader crosses pages.** After it left the page, the primary
   key's leaf holds the key's heap pointers (``bt_page_items``; from 13 on a posting list counts each of its
   pointers): one per chain, so two. The last version on the first page points (``t_ctid``) to the one on the
   next page, but is not marked HOT-updated, and the next is not heap-only; a lookup of the key through the
   index (EXPLAIN ANALYZE, checked to be a probe of the primary key) by a new snapshot and by the old one should
   return one row each: a reader that followed ``t_ctid`` across the page would reach the newest version from
   both entries and return it twice.
4. **Reads prune.** The old snapshot ends; the first page is full of versions no snapshot needs. A plain
   read of the table (no VACUUM) by a session that connects afterwards visits it, and the page's normal line
   pointers are counted before and after: pruning turns them into dead and unused ones. (In trials on 14
   and 18, though not on 12, the session that made the updates, reading at once, left the page as it was;
   likely because from 14 on a backend reuses the visibility horizon it last computed while no transaction
   has ended since, which our reading of procarray.c suggests but this probe does not test.)
5. **LP_REDIRECT.** A second row gets three HOT updates with no snapshot holding them, then VACUUM prunes
   its page: the chain's first line pointer should now redirect (``lp_flags`` 2) to the surviving version,
   the key's index entries stay one, and a lookup through the index still finds the row.
6. **An xid without a snapshot.** A READ COMMITTED transaction takes a transaction id and, between its
   statements, holds no snapshot (``pg_stat_activity``: ``backend_xid`` set, ``backend_xmin`` null). Ten
   committed updates of another row later, VACUUM VERBOSE says how many dead versions it could not remove
   yet; after the transaction ends, how many it removed.
7. **The visibility map.** A table of a few hundred pages is vacuumed (every page all-visible), one row is
   updated, and VACUUM VERBOSE says how many pages it scanned out of how many.
8. **Readers and writers do not wait for each other.** A writer updates a row and keeps its transaction
   open; a reader (a statement timeout of 2 s) reads the row and should get the committed value at once.
   Then a reader's REPEATABLE READ snapshot stays open while a writer (a lock timeout of 2 s) updates the
   row it read.
9. **Transaction tags.** A transaction inserts two rows and commits; a REPEATABLE READ snapshot is taken; a second
   transaction updates the first row and commits, a third deletes the second row and commits, each reading its
   id (``txid_current()``). On the page: the first version's ``t_xmin`` is the inserter's id and its ``t_xmax``
   the updater's, its ``t_ctid`` names the new version, whose ``t_xmin`` is the updater's and whose ``t_ctid``
   names itself; the deleted tuple's ``t_xmax`` is the deleter's, its ``t_ctid`` itself (no next version). And
   the rule: for the old snapshot and for a new one, of the first row's two versions exactly one has its
   inserter visible and its deleter not (``txid_visible_in_snapshot``, the server's own test of a tag), and it
   is the one the snapshot reads (its ``ctid``).
"""

from __future__ import annotations

import re
import time

from dbexp.servers.sql import query

from .postgres import lookup_probes, parse_vacuum_verbose, vacuum_verbose

TABLE = "mech"
PAD = 400  # bytes of the text column: the tuple's bulk, which an update of the integer leaves alone
MAX_UPDATES = 500  # a chain that never leaves its page is an error, not a loop forever
LP_NORMAL, LP_REDIRECT = 1, 2
HOT_UPDATED, HEAP_ONLY = 0x4000, 0x8000  # t_infomask2's bits: a HOT-updated tuple, a heap-only one


def _align(n: int) -> int:
    return (n + 7) // 8 * 8  # MAXALIGN on 64-bit servers


def _items(conn, block: int) -> list[tuple]:
    return query(conn, f"SELECT lp, lp_flags, lp_off, lp_len, t_ctid::text FROM heap_page_items(get_raw_page('{TABLE}', {block}))")


def _free(conn, block: int) -> int:
    return int(query(conn, f"SELECT upper - lower FROM page_header(get_raw_page('{TABLE}', {block}))")[0][0])


def _ctid(conn, row_id: int) -> tuple[int, int]:
    """The (block, line pointer) of the version of ``row_id`` this connection sees."""
    block, lp = query(conn, f"SELECT ctid::text FROM {TABLE} WHERE id = %s", (row_id,))[0][0].strip("()").split(",")
    return int(block), int(lp)


def _block_of(conn, row_id: int) -> int:
    return _ctid(conn, row_id)[0]


def _scanned_pages(text: str) -> tuple[int, int]:
    """The pages VACUUM VERBOSE scanned and the table's pages (15+: 'N remain, M scanned'; 12 to 14:
    'in M out of N pages')."""
    new = re.search(r"pages: \d+ removed, (\d+) remain, (\d+) scanned", text)
    if new:
        return int(new.group(2)), int(new.group(1))
    old = re.search(r"in (\d+) out of (\d+) pages", text)
    if old:
        return int(old.group(1)), int(old.group(2))
    raise RuntimeError(f"VACUUM VERBOSE did not say how many pages it scanned: {' '.join(text.split())[:300]!r}")


def _key_pointers(conn, key: int) -> int:
    """Heap pointers the primary key's leaf holds for ``key`` (a posting list, 13 and later, counts each)."""
    data = " ".join(f"{b:02x}" for b in key.to_bytes(8, "little"))
    version = int(query(conn, "SHOW server_version_num")[0][0])
    count = "coalesce(array_length(tids, 1), 1)" if version >= 130000 else "1"
    rows = query(conn, f"SELECT {count} FROM bt_page_items('{TABLE}_pkey', 1) WHERE data = %s", (data,))
    return int(sum(r[0] for r in rows))


def observe(server, database: str = "sbtest") -> dict[str, tuple[float, str]]:
    """The nine steps on ``server``: {measurement: (value, unit)}."""
    admin = server.connect(database, autocommit=True)
    old = server.connect(database, autocommit=False)
    m: dict[str, tuple[float, str]] = {}
    try:
        query(admin, "CREATE EXTENSION IF NOT EXISTS pageinspect")
        query(admin, "SET synchronous_commit = on")  # committed rows hinted at once: VACUUM can set the map
        for table in (TABLE, "mech_x", "mech_vm", "mech_s"):
            query(admin, f"DROP TABLE IF EXISTS {table}")
        query(admin, f"CREATE TABLE {TABLE} (id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL) "
                     "WITH (fillfactor = 100, autovacuum_enabled = false)")
        query(admin, f"ALTER TABLE {TABLE} ALTER COLUMN pad SET STORAGE PLAIN")  # inline, uncompressed
        query(admin, f"INSERT INTO {TABLE} VALUES (1, 0, repeat('x', {PAD}))")
        # the declared starting state: a new table of one row, one tuple on its one page
        m["precondition_ok"] = (float([r[1] for r in _items(admin, 0)] == [LP_NORMAL]), "bool")
        query(old, "BEGIN ISOLATION LEVEL REPEATABLE READ")
        query(old, f"SELECT v FROM {TABLE} WHERE id = 1")  # the snapshot, kept to step 4

        # 1. whole tuples
        query(admin, f"UPDATE {TABLE} SET v = v + 1 WHERE id = 1")
        lens = {lp: length for lp, flags, _, length, _ in _items(admin, 0) if flags == LP_NORMAL}
        m["tuple_old_bytes"] = (float(lens[1]), "bytes")
        m["tuple_new_bytes"] = (float(lens[2]), "bytes")
        m["changed_bytes"] = (4.0, "bytes")  # one integer

        # 2. the chain grows on its page until the page has no room for the next version
        needs = _align(lens[2]) + 4  # the tuple and its line pointer
        updates, free_before = 1, _free(admin, 0)
        while _block_of(admin, 1) == 0:
            if updates >= MAX_UPDATES:
                raise RuntimeError(f"{MAX_UPDATES} updates of a {lens[2]}-byte row never left page 0")
            free_before = _free(admin, 0)
            query(admin, f"UPDATE {TABLE} SET v = v + 1 WHERE id = 1")
            updates += 1
        on_page = sum(1 for _, flags, *_ in _items(admin, 0) if flags == LP_NORMAL)
        m["hot_versions_on_page"] = (float(on_page), "versions")
        m["free_before_break"] = (float(free_before), "bytes")
        m["version_needs"] = (float(needs), "bytes")
        m["updates_to_break"] = (float(updates), "updates")

        # 3. the version off the page has an index entry of its own, and no lookup crosses from the first page
        m["key_index_pointers"] = (float(_key_pointers(admin, 1)), "pointers")
        _no_hop(admin, old, m)

        # 4. the snapshot ends; a plain read by a session that arrives afterwards prunes the full page (see the
        # module's docstring for why not the session that made the updates)
        old.rollback()
        before = _items(admin, 0)
        reader = server.connect(database, autocommit=True)
        try:
            query(reader, f"SELECT count(*) FROM {TABLE}")  # a sequential scan visits page 0
        finally:
            reader.close()
        after = _items(admin, 0)
        m["prune_normal_before"] = (float(sum(1 for r in before if r[1] == LP_NORMAL)), "line pointers")
        m["prune_normal_after"] = (float(sum(1 for r in after if r[1] == LP_NORMAL)), "line pointers")
        m["prune_free_after"] = (float(_free(admin, 0)), "bytes")

        # 5. a chain pruned in its middle: the root redirects to the survivor
        query(admin, f"INSERT INTO {TABLE} VALUES (2, 0, repeat('y', {PAD}))")
        root_block, root_lp = _ctid(admin, 2)
        for _ in range(3):
            query(admin, f"UPDATE {TABLE} SET v = v + 1 WHERE id = 2")
        live_block, live_lp = _ctid(admin, 2)
        query(admin, f"VACUUM {TABLE}")
        items = {r[0]: r for r in _items(admin, root_block)}
        flags, target = items[root_lp][1], items[root_lp][2]  # a redirect's lp_off is the lp it points to
        m["redirect_root_flags"] = (float(flags), "lp_flags")
        m["redirect_to_live"] = (float(flags == LP_REDIRECT and target == live_lp and live_block == root_block), "bool")
        m["redirect_key_pointers"] = (float(_key_pointers(admin, 2)), "pointers")
        query(admin, "SET enable_seqscan = off")  # the lookup goes through the index entry that points at the root
        found = query(admin, f"SELECT v FROM {TABLE} WHERE id = 2")
        m["redirect_lookup_found"] = (float(bool(found) and found[0][0] == 3), "bool")
        _xid_without_snapshot(server, admin, m, database)
        _visibility_map(admin, m)
        _no_waits(server, admin, m, database)
        _tags(server, admin, m, database)
    finally:
        old.close()
        admin.close()
    return m


def _xid_without_snapshot(server, admin, m: dict, database: str) -> None:
    query(admin, "CREATE TABLE mech_x (id int PRIMARY KEY, v int NOT NULL) WITH (autovacuum_enabled = false)")
    query(admin, "INSERT INTO mech_x VALUES (1, 0), (2, 0)")
    holder = server.connect(database, autocommit=False)  # READ COMMITTED
    try:
        query(holder, "SELECT txid_current()")  # a transaction id, kept to the transaction's end
        pid = query(holder, "SELECT pg_backend_pid()")[0][0]
        xid, xmin = query(admin, "SELECT backend_xid IS NOT NULL, backend_xmin IS NOT NULL FROM pg_stat_activity "
                                 "WHERE pid = %s", (pid,))[0]
        m["xid_holder_has_xid"] = (float(xid), "bool")
        m["xid_holder_has_snapshot"] = (float(xmin), "bool")
        for _ in range(10):
            query(admin, "UPDATE mech_x SET v = v + 1 WHERE id = 2")
        m["xid_held_dead"] = (parse_vacuum_verbose(vacuum_verbose(admin, "mech_x"))["not_removable"], "dead tuples")
        holder.commit()
    finally:
        holder.close()
    m["xid_removed_after"] = (parse_vacuum_verbose(vacuum_verbose(admin, "mech_x"))["removed"], "dead tuples")


def _visibility_map(admin, m: dict) -> None:
    query(admin, "CREATE TABLE mech_vm (id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL) "
                 "WITH (fillfactor = 100, autovacuum_enabled = false)")
    query(admin, f"INSERT INTO mech_vm SELECT g, 0, repeat('z', {PAD}) FROM generate_series(1, 4000) g")
    query(admin, "VACUUM mech_vm")  # every page all-visible (commits are synchronous in this session)
    query(admin, "UPDATE mech_vm SET v = 1 WHERE id = 2000")
    scanned, pages = _scanned_pages(vacuum_verbose(admin, "mech_vm"))
    m["vm_scanned_pages"] = (float(scanned), "pages")
    m["vm_table_pages"] = (float(pages), "pages")


def _no_waits(server, admin, m: dict, database: str) -> None:
    """A reader of a row a writer holds, and a writer of a row a reader's snapshot holds: neither waits."""
    writer = server.connect(database, autocommit=False)
    reader = server.connect(database, autocommit=True)
    try:
        committed = query(admin, "SELECT v FROM mech_x WHERE id = 1")[0][0]
        query(writer, "UPDATE mech_x SET v = v + 100 WHERE id = 1")  # locked, not committed
        query(reader, "SET statement_timeout = '2s'")
        t = time.monotonic()
        seen = query(reader, "SELECT v FROM mech_x WHERE id = 1")[0][0]
        m["read_under_write_ms"] = ((time.monotonic() - t) * 1000, "ms")
        m["read_saw_committed"] = (float(seen == committed), "bool")
        writer.rollback()
        query(reader, "RESET statement_timeout")
        reader.autocommit = False
        query(reader, "BEGIN ISOLATION LEVEL REPEATABLE READ")
        query(reader, "SELECT v FROM mech_x WHERE id = 1")  # its snapshot, kept while the writer writes
        query(writer, "SET lock_timeout = '2s'")
        t = time.monotonic()
        query(writer, "UPDATE mech_x SET v = v + 1 WHERE id = 1")
        writer.commit()
        m["write_under_read_ms"] = ((time.monotonic() - t) * 1000, "ms")
        m["reader_still_sees_old"] = (float(query(reader, "SELECT v FROM mech_x WHERE id = 1")[0][0] == committed), "bool")
        reader.rollback()
    finally:
        writer.close()
        reader.close()


def _lookup_rows(conn) -> float:
    """The rows a lookup of key 1 through the primary key returns to ``conn``'s snapshot (EXPLAIN ANALYZE, its plan
    checked to be index probes: postgres.lookup_probes)."""
    for setting in ("enable_seqscan", "enable_bitmapscan", "enable_indexonlyscan"):
        query(conn, f"SET {setting} = off")
    doc = query(conn, f"EXPLAIN (ANALYZE, FORMAT JSON) SELECT v FROM {TABLE} WHERE id = 1")[0][0]
    probes, rows, _ = lookup_probes(doc, TABLE, f"{TABLE}_pkey")
    if probes != 1:
        raise RuntimeError(f"a lookup of key 1 ran {probes} probes of {TABLE}_pkey, not one")
    return rows


def _no_hop(admin, old, m: dict) -> None:
    """3. The chain's link across the page, its tuples' flags, and what a lookup of the key returns (see the
    module's docstring)."""
    rows = query(admin, f"SELECT lp, t_ctid::text, t_infomask2 FROM heap_page_items(get_raw_page('{TABLE}', 0)) "
                        "WHERE lp_flags = 1")
    across = [(lp, mask) for lp, ctid, mask in rows if ctid and int(ctid.strip("()").split(",")[0]) != 0]
    if len(across) != 1:
        raise RuntimeError(f"expected one version on page 0 pointing to another page, found {len(across)}")
    block, lp = _ctid(admin, 1)
    mask_new = query(admin, f"SELECT t_infomask2 FROM heap_page_items(get_raw_page('{TABLE}', {block})) "
                            "WHERE lp = %s", (lp,))[0][0]
    m["cross_ctid_other_page"] = (float(block != 0), "bool")
    m["cross_hot_updated"] = (float(bool(across[0][1] & HOT_UPDATED)), "bool")
    m["cross_next_heap_only"] = (float(bool(mask_new & HEAP_ONLY)), "bool")
    m["cross_lookup_rows_fresh"] = (_lookup_rows(admin), "rows")
    m["cross_lookup_rows_old"] = (_lookup_rows(old), "rows")


def _tags(server, admin, m: dict, database: str) -> None:
    """9. Each version's transaction tags (see the module's docstring)."""
    query(admin, "CREATE TABLE mech_s (id int PRIMARY KEY, v int NOT NULL) WITH (autovacuum_enabled = false)")
    writer = server.connect(database, autocommit=False)
    snap = server.connect(database, autocommit=False)
    try:
        def wrote(sql: str) -> int:
            query(writer, sql)
            xid = int(query(writer, "SELECT txid_current()")[0][0]) % 2 ** 32  # the tag on the page: 32 bits
            writer.commit()
            return xid

        inserter = wrote("INSERT INTO mech_s VALUES (1, 0), (2, 0)")
        query(snap, "BEGIN ISOLATION LEVEL REPEATABLE READ")
        old_snapshot = query(snap, "SELECT txid_current_snapshot()::text")[0][0]
        updater = wrote("UPDATE mech_s SET v = 1 WHERE id = 1")
        deleter = wrote("DELETE FROM mech_s WHERE id = 2")
        items = {lp: (xmin, xmax, tuple(int(x) for x in ctid.strip("()").split(",")))
                 for lp, xmin, xmax, ctid in query(
                     admin, "SELECT lp, t_xmin::text::bigint, t_xmax::text::bigint, t_ctid::text "
                            "FROM heap_page_items(get_raw_page('mech_s', 0)) WHERE lp_flags = 1")}

        def read(conn) -> tuple[int, int]:
            return tuple(int(x) for x in query(conn, "SELECT ctid::text FROM mech_s WHERE id = 1")[0][0]
                         .strip("()").split(","))

        old_at, new_at = read(snap), read(admin)
        first, newest, deleted = items[old_at[1]], items[new_at[1]], items[2]
        m["tag_insert_xmin"] = (float(first[0] == inserter), "bool")
        m["tag_update_xmax"] = (float(first[1] == updater), "bool")
        m["tag_new_xmin"] = (float(newest[0] == updater and newest[1] == 0), "bool")
        m["tag_ctid_to_new"] = (float(first[2] == new_at), "bool")
        m["tag_new_ctid_self"] = (float(newest[2] == new_at), "bool")
        m["tag_delete_xmax"] = (float(deleted[1] == deleter), "bool")
        m["tag_delete_ctid_self"] = (float(deleted[2] == (0, 2)), "bool")
        new_snapshot = query(admin, "SELECT txid_current_snapshot()::text")[0][0]

        def visible(xid: int, snapshot: str) -> bool:
            return bool(xid) and bool(query(admin, "SELECT txid_visible_in_snapshot(%s, %s::txid_snapshot)",
                                             (xid, snapshot))[0][0])

        for name, snapshot, at in (("old", old_snapshot, old_at), ("new", new_snapshot, new_at)):
            by_rule = {(0, lp) for lp in (old_at[1], new_at[1])
                       if visible(items[lp][0], snapshot) and not visible(items[lp][1], snapshot)}
            m[f"rule_{name}_snapshot"] = (float(by_rule == {at}), "bool")
        snap.rollback()
    finally:
        writer.close()
        snap.close()
