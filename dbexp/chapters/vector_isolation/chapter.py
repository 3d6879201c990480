"""The chapter's knobs and points: per server and independently started instance, REPEATABLE READ trials
that each ask a query of their own twice while a paced writer commits rows between (the main sweep: k, the
candidate list and pgvector's iterative scan under rows written around the query; rows from the data set's
mixture; another reader between the writes and the second search), the two controls (no writer; an exact
scan under the same writer), and the throughput alone (queries per second with no writer, inserts per second
with no reader)."""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass

from dbexp.catalog import OFFLINE, lookup, parse_spec
from dbexp.chapters.vector_isolation import dataset
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
    }

    def adjust(self, sc, scale, cpus, overrides):
        check_whole(sc.transactions, "transactions")
        check_whole(sc.gap_writes, "gap_writes")
        check_whole(list(sc.ks), "k")
        check_whole(list(sc.ef_searches), "ef_search")
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
                      exact=False, between=False):
                return Point(cfg, VectorPoint(kind, writer, sc.gap_writes, sc.rate, k, ef, iterative, exact, between,
                                              sc.transactions if kind == "readers" else 0, sc.seconds,
                                              sc.rows, sc.dims, m, sc.ef_construction, instance, cpus.client),
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
            out += pts
        return [Part(out, sc.repeats)]

    def timed(self, point: Point) -> bool:
        """Reader trials count answers (rows lost, kept, cut short) whatever the CPU's speed: only the
        throughput points are rates."""
        return point.params.kind != "readers"

    @contextlib.contextmanager
    def session(self, server):
        """The pristine data set and its index, made once per server instance (the points restore it), and how
        often each point was measured on this server (a measurement's trials draw streams of their own)."""
        yield {"made": {}, "dirty": False, "measured": {}}

    def measure(self, server, point: Point, state) -> Measured:
        p: VectorPoint = point.params
        part = PARTS.of(server.flavor)
        rows = dataset.base_rows(dataset.Shape(p.rows, p.dims))
        key = (p.rows, p.dims, p.m, p.ef_construction)
        if key not in state["made"]:
            state["made"] = {key: part.prepare(server, rows, p.m, p.ef_construction)}
            state["dirty"] = False
        was_dirty, state["dirty"] = state["dirty"], True  # until this point ends clean
        before = state["measured"].get(p, 0)
        state["measured"][p] = before + 1
        got = measure_point(part, server, p, dataset.checksum(rows), was_dirty,
                            point_stream(server.config.spec, p, before))
        state["dirty"] = p.writer != "none"
        got.measurements.update({k: (v, "s" if k.endswith("_s") else "bytes")
                                 for k, v in state["made"][key].items()})
        return got


CHAPTER = VectorIsolation()
