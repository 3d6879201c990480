"""The chapter's knobs and points: per server and independently started instance, REPEATABLE READ trials
that each ask a query of their own twice while a paced writer commits rows between (the main sweep: k, the
candidate list and pgvector's iterative scan under rows written around the query; rows from the data set's
mixture; another reader between the writes and the second search), the two controls (no writer; an exact
scan under the same writer), and the throughput alone (queries per second with no writer, inserts per second
with no reader); on the same servers, the graph trials (pgvector's neighbour lists around a writer's rows), the
B-tree trials (btree.py) and seed 002's ann runs (ann.py: an index per storage and m, every ef_search asked).

At default the vector trials took 12.6 minutes for three servers on two instances each (the issue-43 design,
published on an AMD EPYC VM); the graph, B-tree and ann parts add what the page's minutes show beyond that."""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, replace

from dbexp.catalog import OFFLINE, lookup, parse_spec
from dbexp.chapters.vector_isolation import dataset
from dbexp.chapters.vector_isolation.ann import AnnPoint, ann_set, measure_ann
from dbexp.chapters.vector_isolation.btree import KeyedPoint, measure_keyed
from dbexp.chapters.vector_isolation.engines import mariadb, postgres
from dbexp.chapters.vector_isolation.measure import VectorPoint, measure_point, point_stream
from dbexp.errors import DbexpError, choices
from dbexp.experiments.chapter import Chapter, Cpus, Part, check_whole
from dbexp.experiments.measure import Measured
from dbexp.experiments.sweep import Point
from dbexp.servers.engines import Engines
from dbexp.servers.registry import flavor_class, flavor_of_spec

PARTS = Engines("vector_isolation", {"postgres": postgres.Pgvector, "mariadb": mariadb.MariaDBVector},
                skipped={"mysql": "MySQL's community server has no vector index (9.x's VECTOR type cannot be "
                                  "indexed)"})


def vector_builds() -> list:
    """The offline builds whose engine part serves them (pgvector builds, MariaDB 11.7 and later)."""
    out = []
    for b in OFFLINE:
        if PARTS.measures(flavor_class(b.flavor)) and PARTS.part_for_name(b.flavor).serves(b):
            out.append(b)
    return out


DEFAULT_SERVERS = tuple(b.spec for b in vector_builds())


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    rows: int  # the data set's rows (ids 1..rows)
    dims: int
    m: tuple[int, ...]  # HNSW m values (each its own index, on its own servers); the first gets every point,
    # the others the main near-writer point, its no-writer control and the query rate
    ef_construction: int  # pgvector's (MariaDB has no such setting)
    transactions: int  # trials per reader point, each its own transaction with its own query
    gap_writes: int  # rows the writer commits between a trial's two searches
    rate: float  # the writer's pace in rows per second, the same on every engine
    ks: tuple[int, ...]
    ef_searches: tuple[int, ...]
    iteratives: tuple[str, ...]  # pgvector's iterative scan modes swept (engines without one: off only)
    writers: tuple[str, ...]  # writers beside the main two (near, insert), at the first k and candidate list
    between: bool  # a point with another reader's query between the writes and the second search
    instances: int  # independently started servers per server spec
    seconds: float  # throughput points' length
    repeats: int = 1
    graph_trials: int = 0  # trials reading the index's neighbour lists around a writer's rows (engines showing pages)
    keyed_rows: int = 0  # the B-tree trials' table (0: none)
    keyed_groups: int = 1  # its distinct keys
    keyed_trials: int = 0
    ann_rows: int = 0  # the ann-benchmarks-style set's rows (0: no ann part)
    ann_dims: int = 0
    ann_queries: int = 0
    ann_m: tuple[int, ...] = ()
    ann_efs: tuple[int, ...] = ()
    ann_passes: int = 1
    ann_ef_construction: int = 64  # pgvector's, for the ann builds


ANN_K = 10  # the post's runs: LIMIT 10, ann-benchmarks' default count
ANN_SETS: dict = {}  # the ann sets' rows, queries and exact answers, computed once per process
OTHER_WRITERS = ("update", "delete")  # writers a scale may add beside the main two
MAIN_WRITER = "near"  # rows written around the trial's query: the writes the search walks through
MIXTURE_WRITER = "insert"  # rows drawn from the data set's mixture, anywhere


class VectorIsolation(Chapter):
    name = "vector_isolation"
    Scale = Scale
    scales = {
        # runs of a few seconds: the noise rule reads steal over each run's window, and over a 1 s window a
        # few ticks of steal were enough to fail a point three times in a row (a fresh clone's make test)
        "smoke": Scale(("postgres:17+pgvector@offline", "mariadb:11.8@offline"), 2000, 16, (16,), 64, 12, 10,
                       50.0, (10,), (10,), ("off", "relaxed_order"), (), True, 1, 3.0),
        "default": Scale(DEFAULT_SERVERS, 10000, 32, (16,), 64, 60, 10, 50.0, (10,), (10, 40),
                         ("off", "relaxed_order"), (), True, 2, 3.0),
        "full": Scale(DEFAULT_SERVERS, 50000, 64, (16, 8, 32), 64, 200, 10, 50.0, (10, 40), (10, 20, 40, 100),
                      ("off", "relaxed_order", "strict_order"), ("update", "delete"), True, 3, 5.0),
    }
    # the parts this wave added: the neighbour lists, the B-tree trials and the ann-benchmarks comparison
    scales["smoke"] = replace(scales["smoke"], graph_trials=3, keyed_rows=2000, keyed_groups=100, keyed_trials=6,
                              ann_rows=2000, ann_dims=32, ann_queries=40, ann_m=(4, 16), ann_efs=(10, 40), ann_passes=2)
    scales["default"] = replace(scales["default"], graph_trials=5, keyed_rows=10000, keyed_groups=500,
                                keyed_trials=20, ann_rows=10000, ann_dims=64, ann_queries=200, ann_m=(4, 8, 16),
                                ann_efs=(10, 20, 40, 80, 160), ann_passes=3)
    scales["full"] = replace(scales["full"], graph_trials=20, keyed_rows=50000, keyed_groups=2500, keyed_trials=100,
                             ann_rows=50000, ann_dims=128, ann_queries=1000, ann_m=(4, 6, 8, 12, 16, 32),
                             ann_efs=(10, 20, 40, 80, 120, 200, 400), ann_passes=5)
    order = "grouped"  # a point's state is made before it (the pristine table), not inherited
    engines = PARTS
    knob_help = {
        "servers": 'the servers, e.g. ["postgres:17+pgvector", "mariadb:11.8"]',
        "rows": "the data set's rows", "dims": "the vectors' dimensions",
        "m": "HNSW m values, e.g. [8, 16]", "ef_construction": "pgvector's ef_construction",
        "transactions": "trials per reader point (each its own transaction and query)",
        "gap_writes": "rows the writer commits between a trial's two searches",
        "rate": "the writer's pace, rows per second (the same on every engine)",
        "ks": "the k values, e.g. [10, 40]", "ef_searches": "the candidate-list sizes, e.g. [40, 100]",
        "iteratives": 'pgvector\'s iterative scan modes, e.g. ["off", "relaxed_order"]',
        "writers": 'writers beside the main two, e.g. ["update", "delete"]',
        "between": "whether to run the point with another reader between the writes and the second search",
        "instances": "servers started per spec",
        "seconds": "the throughput points' length (s)", "repeats": "the repeats",
        "graph_trials": "trials reading the index's neighbour lists around a writer's rows (0: none)",
        "keyed_rows": "the B-tree trials' rows (0: no B-tree trials)", "keyed_groups": "the B-tree key's distinct values",
        "keyed_trials": "the B-tree trials", "ann_rows": "the ann set's rows (0: no ann part)",
        "ann_dims": "the ann set's dimensions", "ann_queries": "the ann set's queries",
        "ann_m": "the ann part's m values, e.g. [8, 16]", "ann_efs": "the ann part's ef_search values, e.g. [10, 40]",
        "ann_passes": "passes over the ann queries per ef_search",
        "ann_ef_construction": "pgvector's ef_construction in the ann part",
    }

    def adjust(self, sc, scale, cpus, overrides):
        check_whole(sc.transactions, "transactions")
        check_whole(sc.gap_writes, "gap_writes")
        check_whole(list(sc.ks), "k")
        check_whole(list(sc.ef_searches), "ef_search")
        for name in ("graph_trials", "keyed_rows", "keyed_trials", "ann_rows", "ann_queries"):
            check_whole(getattr(sc, name), name)
        check_whole(list(sc.ann_m), "ann m")
        check_whole(list(sc.ann_efs), "ann ef_search")
        if sc.ann_rows and not (sc.ann_m and sc.ann_efs and sc.ann_dims > 0):
            raise DbexpError(f"bad ann part: {sc.ann_rows} rows need ann_m, ann_efs and ann_dims (got "
                             f"{list(sc.ann_m)}, {list(sc.ann_efs)}, {sc.ann_dims})")
        if sc.keyed_rows and not 1 <= sc.keyed_groups <= sc.keyed_rows:
            raise DbexpError(f"bad keyed_groups {sc.keyed_groups!r}: expected 1 to keyed_rows ({sc.keyed_rows})")
        if isinstance(sc.rate, bool) or not isinstance(sc.rate, (int, float)) or not sc.rate > 0:
            raise DbexpError(f"bad rate {sc.rate!r}: expected rows per second above 0")
        bad = [w for w in sc.writers if w not in OTHER_WRITERS]
        if bad:
            raise DbexpError(f"bad writers {bad[0]!r}; valid are {choices(list(OTHER_WRITERS))}")
        for spec in sc.servers:
            part = PARTS.part_for_name(flavor_of_spec(spec).name) if PARTS.measures(flavor_of_spec(spec)) else None
            builds = lookup(parse_spec(spec))
            if part is not None and not any(part.serves(b) for b in builds):
                have = [b.spec for b in vector_builds() if b.flavor == builds[0].flavor]
                raise DbexpError(f"chapter vector_isolation cannot measure {spec!r}: it has no vector index; "
                                 f"valid are {choices(have)}")
        return sc

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        out = []
        for spec, m, instance in itertools.product(sc.servers, sc.m, range(sc.instances)):
            part = PARTS.of(flavor_of_spec(spec))
            cfg = self.server_config(spec, cpus.server, part.start_settings())
            group = f"vector {spec} m={m} #{instance}"

            def point(kind="readers", writer=MAIN_WRITER, k=sc.ks[0], ef=sc.ef_searches[0], iterative="off",
                      exact=False, between=False, trials=None):
                n = trials if trials is not None else sc.transactions if kind == "readers" else 0
                return Point(cfg, VectorPoint(kind, writer, sc.gap_writes, sc.rate, k, ef, iterative, exact, between,
                                              n, sc.seconds, sc.rows, sc.dims, m, sc.ef_construction, instance,
                                              cpus.client),
                             group=group)

            its = [i for i in sc.iteratives if i in part.iterative_modes] or ["off"]
            if m != sc.m[0]:
                # another graph degree: the main near-writer point, its no-writer control and the query rate
                out += [point(writer="none"), point(kind="query_rate", writer="none"), point()]
                continue
            # the points without a writer first: they leave the pristine table as it is (no rebuild)
            # the no-writer control at every iterative-scan setting the main sweep asks: a search that repeats itself
            pts = [point(writer="none", iterative=it) for it in its]
            pts += [point(kind="query_rate", writer="none", ef=ef, iterative=it)
                    for ef, it in itertools.product(sc.ef_searches, its)]
            pts += [point(exact=True)]
            # a candidate list shorter than k cannot return k rows: only ef_search >= k is asked
            pts += [point(k=k, ef=ef, iterative=it) for k, ef, it in itertools.product(sc.ks, sc.ef_searches, its)
                    if ef >= k]
            pts += [point(writer=MIXTURE_WRITER)]
            if sc.between:
                pts += [point(between=True)]
            pts += [point(writer=w) for w in sc.writers]
            pts += [point(kind="insert_rate", writer=MIXTURE_WRITER)]
            if sc.graph_trials and part.shows_pages:
                pts += [point(kind="graph", trials=sc.graph_trials)]
            if sc.keyed_rows and sc.keyed_trials:
                pts += [Point(cfg, KeyedPoint(sc.keyed_rows, sc.keyed_groups, sc.ks[0], sc.keyed_trials,
                                              sc.gap_writes, sc.rate, instance, cpus.client), group=group)]
            if sc.ann_rows:
                # seed 002's comparison: an index per storage and m, each built anew on the ann table
                pts += [Point(cfg, AnnPoint(storage, am, sc.ann_ef_construction, tuple(sc.ann_efs), ANN_K,
                                            sc.ann_queries, sc.ann_passes, sc.ann_rows, sc.ann_dims, instance,
                                            cpus.client), group=group)
                        for am, storage in itertools.product(sc.ann_m, part.ann_storages)]
            out += pts
        return [Part(out, sc.repeats)]

    def timed(self, point: Point) -> bool:
        """Reader, B-tree and graph trials count answers, rows and entries whatever the CPU's speed: only the
        throughput points and the ann runs (queries per second, build seconds) are rates."""
        return point.params.kind not in ("readers", "btree", "graph")

    @contextlib.contextmanager
    def session(self, server):
        """The pristine data set and its index, made once per server instance (the points restore it), and how
        often each point was measured on this server (a measurement's trials draw streams of their own)."""
        yield {"made": {}, "dirty": False, "measured": {}}

    def measure(self, server, point: Point, state) -> Measured:
        p = point.params
        part = PARTS.of(server.flavor)
        before = state["measured"].get(p, 0)
        if isinstance(p, AnnPoint):
            rows, queries, truth = ann_set(p, ANN_SETS)
            if state.get("ann") != (p.rows, p.dims):  # the ann table, loaded once per server start
                part.ann_load(server, rows)
                state["ann"] = (p.rows, p.dims)
            state["measured"][p] = before + 1
            return measure_ann(part, server, p, rows, queries, truth)
        if isinstance(p, KeyedPoint):  # a table of its own, made anew by the point
            state["measured"][p] = before + 1
            return measure_keyed(part, server, p, dataset.stream(server.config.spec, "btree", p.instance, before))
        rows = dataset.base_rows(dataset.Shape(p.rows, p.dims))
        key = (p.rows, p.dims, p.m, p.ef_construction)
        if key not in state["made"]:
            state["made"] = {key: part.prepare(server, rows, p.m, p.ef_construction)}
            state["dirty"] = False
        was_dirty, state["dirty"] = state["dirty"], True  # until this point ends clean
        state["measured"][p] = before + 1
        got = measure_point(part, server, p, dataset.checksum(rows), was_dirty,
                            point_stream(server.config.spec, p, before))
        state["dirty"] = p.writer != "none"
        got.measurements.update({k: (v, "s" if k.endswith("_s") else "bytes")
                                 for k, v in state["made"][key].items()})
        return got


CHAPTER = VectorIsolation()
