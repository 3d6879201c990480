"""The chapter's knobs, which engine part serves which server (``PARTS``), its points and how one is
measured: per server and variant (the updated column, and the heap's fillfactor where the engine has
one), one point per V with an old snapshot, and at the largest V a control without one; every repeat
walks the points in its own random order. A part of its own observes each engine's versions step by step
(MechanicsPoint: engines/page_mechanics.py, engines/undo_mechanics.py), twice per server, once per instance."""

from __future__ import annotations

from dataclasses import dataclass


from dbexp.catalog import offline_series
from dbexp.chapters.mvcc_chains.engines import VersionStore, innodb, mariadb, page_mechanics, postgres, undo_mechanics
from dbexp.chapters.mvcc_chains.measure import ChainPoint, measure_point
from dbexp.experiments.chapter import Chapter, Cpus, Part, check_whole
from dbexp.experiments.measure import Measured
from dbexp.experiments.sweep import Point
from dbexp.servers.engines import Engines
from dbexp.servers.registry import flavor_of_spec

# which engine part serves which server: InnoDB's undo for MySQL and MariaDB, the heap for PostgreSQL
PARTS: Engines[VersionStore] = Engines("mvcc_chains", {"mysql": innodb.Undo, "mariadb": mariadb.MariaDBUndo,
                                                       "postgres": postgres.Heap})


@dataclass(frozen=True)
class Scale:
    servers: tuple[str, ...]
    versions: tuple[int, ...]
    samples: int  # timed point selects per reader and point (after as many again / 4 unrecorded)
    repeats: int
    gc_timeout_s: float
    hot_rows: int = 2  # each takes V commits
    columns: tuple[str, ...] = ("v", "k")  # undo engines: the updated column
    # heap engines: (updated column, fillfactor). v at 70: room on the page for a HOT chain; k at 70: the
    # same page room, an indexed column, never HOT, so v against k at 70 changes the column alone (a HOT
    # against a non-HOT update); k at 100 against k at 70 changes the page's room alone.
    heap_variants: tuple[tuple[str, int], ...] = (("v", 70), ("k", 70), ("k", 100))
    # heap engines: lookups per timed statement, looped at the server (EXPLAIN's clock counts whole
    # microseconds; a short HOT chain adds a fraction of one to a lookup)
    heap_loop: int = 25
    instances: int = 1  # independently started servers per server, the repeats spread over them


# the catalog's offline series, PostgreSQL 13, 15, 16 and 17 not measured (full scale adds 16)
DEFAULT_SERVERS = offline_series(without=("postgres:13", "postgres:15", "postgres:16", "postgres:17"))


def settings_for(spec: str) -> dict[str, str]:
    """Durability relaxed so that thousands of commits per hot row take seconds, not minutes (it
    changes when a commit reaches the disk, not how versions are kept), a collector that reacts
    within seconds, and a statement clock at the server."""
    flavor = flavor_of_spec(spec)
    part = PARTS.of(flavor)
    return {**flavor.capability("relaxed_commit").settings(), **part.prompt_gc_settings(), **part.statement_timing_settings()}


@dataclass(frozen=True)
class MechanicsPoint:
    """How an engine keeps and collects versions, observed step by step (engines/page_mechanics.py for the
    heap, engines/undo_mechanics.py for undo): facts of the code, so two runs per server, one on each instance."""
    mechanics: bool = True  # tells these runs apart from the chain points' in the results
    steps: int = 3  # the probes' version: raised when their steps change, so that a resumed sweep observes again


MECHANICS_REPEATS = 2
# each kind of version store's step-by-step probe: {measurement: (value, unit)} from one table of a server
MECHANICS = {"heap": page_mechanics.observe, "undo": undo_mechanics.observe}


class MvccChains(Chapter):
    name = "mvcc_chains"
    Scale = Scale
    scales = {
        "smoke": Scale(("mysql:8.0@offline", "postgres:16@offline"), (0, 10, 100), 40, 1, 10),
        # 800 timed selects per reader: the short chains (V = 10) need them, and they take about half a second
        "default": Scale(DEFAULT_SERVERS, (0, 10, 100, 1000), 800, 5, 30, instances=2),
        "full": Scale(DEFAULT_SERVERS + ("postgres:16@offline",), (0, 10, 100, 1000, 10000), 1000, 6, 120,
                      heap_variants=(("v", 100), ("v", 70), ("k", 100), ("k", 70))),
    }
    # every point is a block of its own: each repeat walks them in its own random order, so neither
    # V nor the variant runs at the same time of a repeat twice
    order = "shuffled"
    # every run starts from a new table with the previous point's versions reclaimed (measure.measure_point)
    observed_check = "the earlier points' versions reclaimed before the run (the collector settled)"
    add_official = True
    engines = PARTS
    knob_help = {
        "servers": 'the servers, e.g. ["mysql:8.0", "postgres:17"]',
        "versions": "the V values, e.g. [0, 10, 100, 1000, 10000]",
        "samples": "the timed selects per reader and point (plus a quarter as warm-up)",
        "repeats": "the repeats",
        "gc_timeout_s": "how long the collector may take to reclaim the versions (s)",
        "hot_rows": "the number of hot rows (each gets V updates)",
        "columns": 'the updated columns of undo engines, e.g. ["v", "k"]',
        "heap_variants": 'the heap engines\' (column, fillfactor) pairs, e.g. [["v", 70], ["k", 70]]',
        "heap_loop": "the heap engines' lookups per timed statement, looped at the server (1: one each)",
        "instances": "independently started servers per server (the repeats spread over them)",
    }

    def adjust(self, sc: Scale, scale: str, cpus: Cpus, overrides: dict) -> Scale:
        for name in ("heap_loop", "instances"):
            check_whole(getattr(sc, name), name)
        return sc

    def design(self, sc: Scale, cpus: Cpus) -> list[Part]:
        out = []
        for spec in sc.servers:
            cfg = self.server_config(spec, cpus.server, settings_for(spec))
            heap = PARTS.of(flavor_of_spec(spec)).version_store == "heap"
            variants = sc.heap_variants if heap else tuple((c, None) for c in sc.columns)
            for column, ff in variants:
                for v in sc.versions:
                    params = ChainPoint(v, column, ff, sc.samples, sc.hot_rows, cpus.client,
                                        sc.gc_timeout_s if v == max(sc.versions) else 0.0,
                                        loop=sc.heap_loop if heap else 1, plan_check=heap)
                    out.append(Point(cfg, params, group=f"mvcc {spec}"))
                control = ChainPoint(max(sc.versions), column, ff, sc.samples, sc.hot_rows, cpus.client,
                                     sc.gc_timeout_s, snapshot=False, loop=sc.heap_loop if heap else 1,
                                     plan_check=heap)
                out.append(Point(cfg, control, group=f"mvcc {spec}"))
        parts = [Part(out, sc.repeats, min(sc.instances, sc.repeats))]
        mechanics = [Point(self.server_config(spec, cpus.server, settings_for(spec)), MechanicsPoint(),
                           group=f"mechanics {spec}")
                     for spec in sc.servers]
        if mechanics:
            repeats = min(MECHANICS_REPEATS, sc.repeats)
            parts.append(Part(mechanics, repeats, min(sc.instances, repeats)))
        return parts

    def measure(self, server, point: Point, state) -> Measured:
        part = PARTS.of(server.flavor)
        if isinstance(point.params, MechanicsPoint):
            server.ensure_database("sbtest")
            m = {**MECHANICS[part.version_store](server), **part.step_facts()}
            return Measured(m, [], [], f"{part.version_store} step by step")
        return measure_point(server, part, point.params)


CHAPTER = MvccChains()
