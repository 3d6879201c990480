"""Server lifecycle against real containers: start, version, pinning, options, teardown."""

from __future__ import annotations

import re
import sys
import textwrap

import pytest

from conftest import MYSQL, POSTGRES, assert_catalog_version, labelled_containers, scratch_table
from dbexp import process
from dbexp.catalog import parse_spec
from dbexp.errors import DbexpError
from dbexp.metrics.procfs import cpus_allowed

pytestmark = pytest.mark.docker


def test_postgres_runs_pinned_with_its_exact_version(pg):
    assert_catalog_version(pg.version, pg.build)  # SHOW server_version: 16.14 for postgres:16@offline
    assert pg.version_full.startswith(f"PostgreSQL {pg.version} on ")  # SELECT VERSION()
    assert cpus_allowed(pg.main_pid()) == "1"  # the kernel's view, read from /proc/PID/status
    assert pg.query("SELECT 1") == [(1,)]
    assert pg.container.labels["dbexp"] == "1"


def test_mysql_runs_pinned_with_its_exact_version(my):
    assert_catalog_version(my.version, my.build)  # SELECT VERSION(): 8.0.15 for mysql:8.0@offline
    assert cpus_allowed(my.main_pid()) == "1"
    settings = my.effective_settings()
    assert settings["bind_address"] == "127.0.0.1" and int(settings["port"]) == my.port


def test_settings_reach_the_server():
    from dbexp.servers import ServerConfig, running
    with running(ServerConfig(POSTGRES, cpuset="1", settings={"max_connections": "321",
                                                               "shared_buffers": "64MB"})) as srv:
        assert srv.query("SHOW max_connections") == [("321",)]
        assert srv.query("SHOW shared_buffers") == [("64MB",)]


@pytest.mark.parametrize("spec,key", [(POSTGRES, "innodb_buffer_pool_size"), (MYSQL, "shared_buffers")])
def test_unknown_option_is_rejected_before_the_run(spec, key):
    from dbexp.servers import ServerConfig, start
    before = {c.id for c in labelled_containers()}
    with pytest.raises(DbexpError) as err:
        start(ServerConfig(spec, settings={key: "1"}))
    msg = str(err.value)
    assert key in msg and "does not know the option" in msg and "\n" not in msg
    assert {c.id for c in labelled_containers()} == before  # nothing was started


def test_a_valid_mysql_option_with_dashes_passes():
    from dbexp.images import ensure, resolve
    from dbexp.catalog import parse_spec
    from dbexp.servers.registry import flavor_for
    from dbexp.servers.options import check_settings, known_options
    build = resolve(parse_spec(MYSQL))
    image = ensure(build)
    flavor = flavor_for(build)
    known = known_options(flavor, image.ref, image.id)
    check_settings(flavor, {"innodb-buffer-pool-size": "256M", "skip-log-bin": "1",
                            "loose-no-such-thing": "1"}, known, build.version)


def test_no_container_left_after_an_exception():
    from dbexp.servers import ServerConfig, running
    before = {c.id for c in labelled_containers()}
    with pytest.raises(RuntimeError):
        with running(ServerConfig(POSTGRES, cpuset="1")) as srv:
            assert srv.container.id not in before
            raise RuntimeError("boom")
    assert {c.id for c in labelled_containers()} == before


def test_no_container_left_after_ctrl_c(tmp_path):
    """A process interrupted by SIGINT while it holds a server removes the container."""
    script = tmp_path / "hold.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys
        from dbexp.servers import ServerConfig, running
        # a shell's background job inherits SIGINT ignored; a terminal's Ctrl-C is what is tested
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with running(ServerConfig({POSTGRES!r}, cpuset="1")) as srv:
            print(srv.container.id, flush=True)
            os.kill(os.getpid(), signal.SIGINT)
    """))
    proc = process.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "KeyboardInterrupt" in proc.stderr
    cid = proc.stdout.strip().splitlines()[0]
    assert cid not in {c.id for c in labelled_containers(mine=False)}


def test_cli_server_start_and_stop():
    def cli(*args):
        return process.run([sys.executable, "-m", "dbexp.cli", *args], capture_output=True, text=True,
                           timeout=300)
    from dbexp.images import resolve
    from dbexp.servers import interactive_containers

    build = resolve(parse_spec(POSTGRES))
    started = cli("server", "start", POSTGRES, "--cpuset", "1")
    assert started.returncode == 0, started.stderr
    said = re.fullmatch(r"(\S+) \((\S+), image (\S+)\) on 127\.0\.0\.1:(\d+), CPUs 1, container (\S+)",
                        started.stdout.splitlines()[0])
    assert said, started.stdout
    version, spec, image, port, name = said.groups()
    assert (spec, image) == (build.spec, build.image)
    assert_catalog_version(version, build)
    assert f"connect: psql -h 127.0.0.1 -p {port} -U postgres" in started.stdout
    listed = [line.split() for line in cli("server", "list").stdout.splitlines()]
    assert [name, spec, "port", port, "CPUs", "1", "running"] in listed
    # by name: servers that others started by hand stay
    stopped = cli("server", "stop", name)
    assert stopped.stdout.strip() == f"stopped {name} ({spec})"
    assert name not in {c.name for c in interactive_containers()}


def test_bad_cli_input_is_one_line():
    proc = process.run([sys.executable, "-m", "dbexp.cli", "server", "start", "oracle:19"],
                       capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: bad server spec 'oracle:19'")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("spec,setting,needle", [
    ("mysql:8.0@offline", {"innodb_buffer_pool_size": "banana"}, r"\[ERROR\].*innodb[-_]buffer[-_]pool[-_]size"),
    ("mariadb:10.11@offline", {"innodb_buffer_pool_size": "banana"}, r"\[ERROR\].*innodb[-_]buffer[-_]pool[-_]size"),
    ("postgres:16@offline", {"shared_buffers": "banana"}, r"FATAL.*shared_buffers"),
    ("postgres:16@offline", {"shared_buffers": "64GB"}, r"FATAL.*(shared memory|memory)"),
])
def test_a_server_that_exits_while_starting_says_why(spec, setting, needle):
    """The log lines that explain (ERROR, FATAL) are in the one-line error, and nothing is left behind;
    64GB of shared_buffers is larger than the container's 2g memory limit."""
    from dbexp.servers import ServerConfig, start

    before = {c.id for c in labelled_containers()}  # this module's own fixtures may be running
    with pytest.raises(DbexpError, match=needle) as err:
        start(ServerConfig(spec, cpuset="1", memory="2g", settings=setting))
    assert "exited while starting" in str(err.value) and "\n" not in str(err.value)
    assert {c.id for c in labelled_containers()} <= before


def _expected_effective(settings: dict[str, str]) -> dict[str, str]:
    """What effective_settings() should report for requested settings: a skip_ option (MySQL's
    prefix for "off") as its option OFF, PostgreSQL's values without their unit."""
    return {(k[len("skip_"):] if k.startswith("skip_") else k): ("OFF" if k.startswith("skip_") else v).lower()
            for k, v in settings.items()}


@pytest.mark.parametrize("spec", ["mysql:5.7@offline", MYSQL, "mariadb:10.11@offline", POSTGRES])
def test_comparable_settings_are_accepted_and_effective(spec):
    """Every comparable setting is accepted and in effect: one start per flavor family, 5.7 and 8.0
    apart (their binlog defaults differ); PostgreSQL 12-18 take the same settings."""
    from dbexp.servers import ServerConfig, running
    from dbexp.servers.registry import flavor_of_spec

    wanted = flavor_of_spec(spec).comparable_settings()
    with running(ServerConfig(spec, cpuset="1", memory="2g", settings=wanted)) as srv:
        effective = srv.effective_settings()
    got = {k: effective.get(k, "(not reported)").split(" ")[0].lower() for k in _expected_effective(wanted)}
    assert got == _expected_effective(wanted)
    assert effective.get("data_checksums", "on") == "on"  # PostgreSQL's initdb option, every version


def test_set_global_reaches_new_postgres_sessions_over_the_command_line(pg):
    """commit_delay is on the command line (the baseline's 0); set at run time it must still reach a new
    session (ALTER SYSTEM would not: the command line outranks a configuration file)."""
    from dbexp.servers.sql import query

    conn = pg.connect()
    try:
        pg.flavor.capability("set_global").set(conn, "commit_delay", "300")
    finally:
        conn.close()
    fresh = pg.connect()
    try:
        assert str(query(fresh, "SHOW commit_delay")[0][0]) == "300"
    finally:
        pg.flavor.capability("set_global").set(fresh, "commit_delay", "0")
        fresh.close()


def test_set_global_on_mysql_takes_integers_on_off_and_default_and_refuses_other_words(my):
    """The versions ablation switches innodb_flush_log_at_trx_commit (a number) and the adaptive hash
    index (ON / OFF) on a running server; anything else is refused in one line before the server sees it."""
    from dbexp.servers.sql import query

    setter = my.flavor.capability("set_global")
    conn = my.connect()
    try:
        setter.set(conn, "innodb_adaptive_hash_index", "ON")
        assert str(query(conn, "SELECT @@GLOBAL.innodb_adaptive_hash_index")[0][0]) == "1"
        setter.set(conn, "innodb_adaptive_hash_index", "off")
        assert str(query(conn, "SELECT @@GLOBAL.innodb_adaptive_hash_index")[0][0]) == "0"
        setter.set(conn, "innodb_flush_log_at_trx_commit", "0")
        assert str(query(conn, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")[0][0]) == "0"
        with pytest.raises(DbexpError, match="bad value 'fast' for SET GLOBAL innodb_flush_log_at_trx_commit"):
            setter.set(conn, "innodb_flush_log_at_trx_commit", "fast")
    finally:
        setter.set(conn, "innodb_flush_log_at_trx_commit", "DEFAULT")
        setter.set(conn, "innodb_adaptive_hash_index", "DEFAULT")
        conn.close()


@pytest.mark.parametrize("fixture", ["pg", "my"])
def test_cleanup_catches_up_with_old_versions_and_says_so(fixture, request):
    """The "cleanup" capability before a run that must not inherit earlier writes: after updates, PostgreSQL's
    VACUUM leaves every page all-visible; InnoDB's purge brings the history list under its limit."""
    from dbexp.servers.sql import query

    srv = request.getfixturevalue(fixture)
    cleanup = srv.flavor.capability("cleanup")
    with scratch_table(srv, "cleanup_t", "id int PRIMARY KEY, v int") as conn:
        for i in range(0, 2000, 500):
            query(conn, "INSERT INTO cleanup_t VALUES " + ", ".join(f"({j}, 0)" for j in range(i, i + 500)))
        for _ in range(3):
            query(conn, "UPDATE cleanup_t SET v = v + 1")
        cleanup.catch_up(conn, "cleanup_t")
        state = cleanup.state(conn, "cleanup_t")
        assert state and all(ok for ok, _ in state.values()), state
