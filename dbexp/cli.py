"""The `dbexp` command line."""

from __future__ import annotations

import signal
import sys

import click

from dbexp.errors import DbexpError
from dbexp.experiments.scales import SCALES


_stopping = False


def _stop(signum, frame):
    """^C and SIGTERM: a chapter's kernel (dbexp book) is interrupted first and its servers waited for
    (dbexp.book.execute.interrupt_chapters), then this process unwinds, removing its own servers; a second
    signal unwinds at once."""
    global _stopping
    if not _stopping:
        _stopping = True
        from dbexp.book.execute import interrupt_chapters

        if interrupt_chapters():
            click.echo("interrupted the chapter's kernel; its servers removed", err=True)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    sys.exit(128 + signum)


class _Group(click.Group):
    """Print DbexpError as one line and exit 2; Ctrl-C and SIGTERM unwind (servers are removed, a chapter's
    kernel's too: :func:`_stop`)."""

    def invoke(self, ctx):
        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        try:
            return super().invoke(ctx)
        except DbexpError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted; containers removed", err=True)
            sys.exit(130)


@click.group(cls=_Group)
def main():
    """Database Internals, Measured: servers in pinned containers, workloads, metrics, results, book."""


@main.command()
def doctor():
    """Report the engine, host, cpuset support and images."""
    from dbexp.doctor import report

    bad = 0
    for check, finding, ok in report():
        click.echo(f"{'ok ' if ok else 'NO '} {check:12} {finding}")
        bad += not ok
    sys.exit(1 if bad else 0)


@main.command()
def engine():
    """Make sure a Docker engine answers (installing and starting dockerd on Debian as root)."""
    from dbexp.engine import start

    v = start().version()
    click.echo(f"Docker engine {v.get('Version')} (API {v.get('ApiVersion')}) is up")


@main.group()
def images():
    """Server images: official (Docker Hub) or built offline from registry-shipped binaries."""


@images.command("list")
def images_list():
    """Every catalog version with its sources and status."""
    from dbexp.images import list_rows

    rows = list_rows()
    cols = ["flavor", "version", "source", "image", "status"]
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
    click.echo("  ".join(c.upper().ljust(widths[c]) for c in cols))
    for r in rows:
        click.echo("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in cols))


@images.command("build")
@click.argument("specs", nargs=-1)
@click.option("--source", type=click.Choice(["auto", "official", "offline"]), default=None,
              help="Override the source of every spec.")
def images_build(specs, source):
    """Build (or pull) images for SPECS (default: every offline build). Rebuilds only on change."""
    from dbexp import catalog, images as img

    builds = [img.resolve(catalog.parse_spec(s, source)) for s in specs] if specs else list(catalog.OFFLINE)
    for build in builds:
        info = img.ensure(build)
        click.echo(f"{build.spec:28} {info.ref}  {info.id[:19]}")


@main.group()
def server():
    """Keep a pinned server running to poke at it by hand."""


@server.command("start")
@click.argument("spec")
@click.option("--cpuset", default="1", show_default=True, help="CPUs the server may use ('' for all).")
@click.option("--memory", default="4g", show_default=True, help="Container memory limit.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="my.cnf option or postgresql.conf setting.")
@click.option("--source", type=click.Choice(["auto", "official", "offline"]), default=None)
def server_start(spec, cpuset, memory, settings, source):
    """Start SPEC (mysql:8.0, postgres:16, mariadb:10.11, or an exact version) and leave it running."""
    from dbexp.servers import ServerConfig, parse_settings, start

    config = ServerConfig(spec, cpuset or None, memory or None, parse_settings(settings), source)
    srv = start(config, role="interactive")
    from dbexp.servers.lifecycle import detach
    detach(srv)  # it is meant to outlive this command
    click.echo(f"{srv.version} ({srv.build.spec}, image {srv.image.ref}) on 127.0.0.1:{srv.port}, "
               f"CPUs {config.cpuset or 'all'}, container {srv.container.name}")
    click.echo(f"connect: {srv.flavor.connect_hint(srv.port)}")
    click.echo("stop:    dbexp server stop")


@server.command("list")
def server_list():
    """Servers started with `dbexp server start`."""
    from dbexp.servers import interactive_containers

    for c in interactive_containers():
        click.echo(f"{c.name:24} {c.labels.get('dbexp.spec'):28} port {c.labels.get('dbexp.port'):6} "
                   f"CPUs {c.labels.get('dbexp.cpuset') or 'all':6} {c.status}")


@server.command("stop")
@click.argument("names", nargs=-1)
def server_stop(names):
    """Stop servers started with `dbexp server start` (all of them, or the NAMES given)."""
    from dbexp.servers import interactive_containers

    found = [c for c in interactive_containers() if not names or c.name in names]
    if names and len(found) < len(names):
        known = ", ".join(c.name for c in interactive_containers()) or "none running"
        raise DbexpError(f"no running server named {', '.join(set(names) - {c.name for c in found})}; "
                         f"running: {known}")
    for c in found:
        c.remove(force=True, v=True)
        click.echo(f"stopped {c.name} ({c.labels.get('dbexp.spec')})")
    if not found:
        click.echo("no servers running")


@main.command()
def clean():
    """Remove every container the lab left behind (label dbexp) and end its orphaned load processes."""
    from dbexp.servers import clean as do_clean
    from dbexp.process import end_orphans

    click.echo(f"removed {do_clean()} container(s), ended {end_orphans()} orphaned load process(es)")


@main.command()
@click.argument("spec")
@click.option("--script", default="oltp_point_select", show_default=True)
@click.option("--threads", default=4, show_default=True)
@click.option("--time", "duration", default=10, show_default=True, help="Seconds per repeat.")
@click.option("--repeats", default=3, show_default=True)
@click.option("--tables", default=1, show_default=True)
@click.option("--table-size", default=10000, show_default=True)
@click.option("--server-cpuset", default="1", show_default=True)
@click.option("--client-cpuset", default="0", show_default=True)
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE")
@click.option("--force", is_flag=True, help="Measure again points already recorded.")
def bench(spec, script, threads, duration, repeats, tables, table_size, server_cpuset, client_cpuset,
          settings, force):
    """Measure one sysbench workload against SPEC and record it (experiment 'bench')."""
    from dbexp.experiments.sweep import Experiment, Point, Sweep
    from dbexp.servers import ServerConfig, parse_settings
    from dbexp.workloads import Workload

    point = Point(ServerConfig(spec, server_cpuset or None, settings=parse_settings(settings)),
                  workload=Workload(script, threads, duration, tables, table_size, cpuset=client_cpuset or None))
    sweep = Sweep(Experiment("bench"), [point], repeats, force=force)
    ids = sweep.run()
    wide = sweep.store.measurements_wide(sweep.store.runs("bench").query("run_id in @ids"))
    cols = ["version", "repeat", "qps", "lat_avg_ms", "lat_p95_ms", "cpu_per_op_us", "cs_per_op", "wkb_per_op"]
    click.echo(wide[[c for c in cols if c in wide]].to_string(index=False))


@main.command()
@click.argument("spec")
@click.option("--script", default="oltp_point_select", show_default=True)
@click.option("--events", default=1000, show_default=True,
              help="sysbench events counted (after a warm-up pass as long, on one client thread).")
@click.option("--tables", default=1, show_default=True)
@click.option("--table-size", default=10000, show_default=True)
@click.option("--sim/--no-sim", default=True, show_default=True,
              help="Simulate the caches and the branch predictor too (misses per operation; slower).")
@click.option("--twice", is_flag=True,
              help="Count on two separately started servers and say whether the counts agree within 0.5%.")
@click.option("--top", default=15, show_default=True, help="Functions shown, by inclusive instructions.")
@click.option("--server-cpuset", default="1", show_default=True)
@click.option("--client-cpuset", default="0", show_default=True)
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE")
@click.option("--force", is_flag=True, help="Count again points already recorded.")
def count(spec, script, events, tables, table_size, sim, twice, top, server_cpuset, client_cpuset, settings,
          force):
    """Count SPEC's instructions per statement under valgrind's callgrind and record them (experiment
    'count'): a cost that is the same on every x86-64 machine, with the functions it goes to."""
    from dbexp.experiments import counted
    from dbexp.results import Store
    from dbexp.servers import ServerConfig, parse_settings
    from dbexp.workloads import Workload

    config = ServerConfig(spec, server_cpuset or None, settings=parse_settings(settings))
    workload = Workload(script, 1, tables=tables, table_size=table_size, cpuset=client_cpuset or None)
    store = Store()
    point = counted.point(config, workload, "callgrind-sim" if sim else "callgrind")
    ids = counted.run(counted.Counted("count", events), [point], store, instances=2 if twice else 1, force=force)
    wide = store.measurements_wide(store.runs("count").query("run_id in @ids")).sort_values("instance")
    cols = {"version": "version", "instance": "server", "instructions_per_op": "instructions/op",
            "d1_misses_per_op": "D1 misses/op", "ll_misses_per_op": "LL misses/op",
            "branch_mispredicts_per_op": "mispredicts/op", "ops_counted": "ops", "valgrind_start_s": "start s",
            "count_ops_per_s": "ops/s counted"}
    shown = wide[[c for c in cols if c in wide]].rename(columns=cols)
    click.echo(shown.to_string(index=False, float_format=lambda v: f"{v:,.1f}"))
    table = counted.functions(store, wide["run_id"].iloc[0], "inclusive", top)
    click.echo(f"\ntop {len(table)} functions by inclusive instructions per statement (server {wide['instance'].iloc[0]}):")
    click.echo(table.to_string(index=False, formatters={"per_op": "{:,.0f}".format, "share": "{:.1%}".format,
                                                         "calls_per_op": "{:.2f}".format}))
    if twice:
        row = counted.agreement(store, ids).iloc[0]
        verdict = "agree" if row["agree"] else "do not agree"
        click.echo(f"\nthe two servers' counts differ by {row['spread']:.3%} of their mean: they {verdict} "
                   f"within {counted.AGREE:.1%}")


@main.command()
@click.option("--write-parameters", is_flag=True,
              help="Rewrite each chapter notebook's parameters cell from its chapter's Scale.")
@click.option("--write-derived", is_flag=True,
              help="Recompute the tables each published chapter derives from its runs (data/<chapter>/controls.parquet, "
                   "...) from data/, as publishing writes them.")
@click.option("--previous-from-history", is_flag=True,
              help="Recompute each published chapter's data/<chapter>/previous_claims.parquet from the publication "
                   "before the current one, as git keeps it, with this code's claims rules (what moved then "
                   "compares like with like).")
def chapters(write_parameters, write_derived, previous_from_history):
    """The chapters the registry finds (dbexp/chapters/<name>/): their knobs and the servers they skip."""
    import dataclasses

    from dbexp import chapters as registry
    from dbexp.book import parameters
    from dbexp.paths import project_root

    for name, chapter in registry.every().items():
        knobs = ", ".join(f.name for f in dataclasses.fields(chapter.Scale))
        skipped = chapter.engines.skipped_note() if chapter.engines else ""
        click.echo(f"{name:16} knobs: {knobs}" + (f"\n{'':16} {skipped}" if skipped else ""))
        if write_parameters:
            path = project_root() / "notebooks" / f"{name}.ipynb"
            if parameters.write(path, chapter):
                click.echo(f"{'':16} rewrote the parameters cell of {path.relative_to(project_root())}")
        if write_derived:
            for path in chapter.write_derived():
                click.echo(f"{'':16} wrote {path.relative_to(project_root())}")
        if previous_from_history:
            path = chapter.recompute_previous()
            click.echo(f"{'':16} " + (f"wrote {path.relative_to(project_root())}" if path
                                      else "no earlier publication in git"))


def minutes_block(root=None) -> str:
    """README.md's minutes table (dbexp.results.readme.minutes_markdown) from every published chapter's
    data/<chapter>/summary.parquet, in the book's order, with each chapter's ``Scale.fits`` (what its default
    scale does to fit its time; empty where the chapter's Scale has none)."""
    from dbexp import chapters as registry
    from dbexp.book import front
    from dbexp.results import readme

    fits = {name: getattr(chapter.Scale, "fits", "") for name, chapter in registry.every().items()}
    return readme.minutes_markdown(front.summaries(root), fits)


@main.command("readme")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a block differs from what data/ gives.")
def readme_blocks(check):
    """Rewrite README.md's blocks generated from every chapter's published data/: the minutes table (each
    chapter's measuring time, runs, sweeps and machine, from data/<chapter>/summary.parquet)."""
    from dbexp.results import readme

    body = minutes_block()
    if not readme.stale_block(readme.MINUTES_BLOCK, body):
        click.echo(f"README.md's {readme.MINUTES_BLOCK} block is up to date")
    elif check:
        click.echo(f"README.md's {readme.MINUTES_BLOCK} block differs from data/: run `dbexp readme`", err=True)
        sys.exit(1)
    else:
        readme.write_block(readme.MINUTES_BLOCK, body)
        click.echo(f"rewrote README.md's {readme.MINUTES_BLOCK} block from data/*/summary.parquet")


@main.command()
@click.option("--scale", type=click.Choice(SCALES), default="smoke", show_default=True)
@click.option("--render-only", is_flag=True, help="Render from the published data/ without running servers.")
@click.option("--publish", is_flag=True, help="Export the results the chapters use to data/.")
@click.option("--only", multiple=True, help="Execute only these chapters (by notebook name).")
@click.option("--force", is_flag=True, help="Measure again points already recorded (else a rerun resumes); "
              "with --render-only, execute every chapter again, changed or not.")
@click.option("--check/--no-check", default=True, help="Check in headless Chromium that every chart drew and every table fits a 1280 px page.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Chapters executed at once when rendering only, each worker in one kernel "
                   "(default: the CPUs available).")
@click.option("--screens", is_flag=True, help="Afterwards, say how many screens of 1280 x 900 each page and the "
              "whole book take, every page drawn in headless Chromium (also when the check fails).")
def book(scale, render_only, publish, only, force, check, jobs, screens):
    """Execute the chapters with papermill, then build the HTML book. With --render-only, only the
    chapters whose notebook, data/, code or environment changed since they were executed."""
    # Before papermill imports jsonschema: see SKIP_IRI_GRAMMARS in dbexp/book/execute.py.
    sys.modules.setdefault("rfc3987_syntax", None)
    from dbexp.book import build_book

    build_book(scale=scale, run=not render_only, publish=publish, only=list(only) or None, force=force,
               check=check, jobs=jobs, screens=screens)


if __name__ == "__main__":
    main()
