"""What only some chapters ask of a server: capabilities asked for by name (dbexp.servers.capabilities)."""

from __future__ import annotations

import pytest

from dbexp.errors import DbexpError
from dbexp.servers import capabilities
from dbexp.servers.registry import FLAVORS

pytestmark = pytest.mark.unit

INTERFACES = {"relaxed_commit": capabilities.RelaxedCommit, "set_global": capabilities.SetGlobal,
              "sessions": capabilities.Sessions, "uprobes": capabilities.Uprobes,
              "series": capabilities.SeriesFacts, "cleanup": capabilities.Cleanup,
              "callgrind": capabilities.Callgrind}


def test_every_capability_name_has_its_interface():
    assert set(INTERFACES) == set(capabilities.NAMES)


@pytest.mark.parametrize("name", sorted(FLAVORS))
def test_a_flavor_builds_every_capability_it_lists_behind_its_interface(name):
    flavor = FLAVORS[name]("0")
    assert set(flavor.capabilities) <= set(capabilities.NAMES)
    for cap, cls in flavor.capabilities.items():
        if cls is None:
            continue
        got = flavor.capability(cap)  # an abstract method left out would fail here
        assert isinstance(got, INTERFACES[cap]) and got.flavor is flavor
    if "uprobes" in flavor.capabilities:
        assert flavor.capability("uprobes").executables


def test_a_missing_capability_is_one_line_naming_the_flavor_and_what_it_has():
    class Plain(FLAVORS["postgres"]):
        name = "plain"
        capabilities = {"relaxed_commit": FLAVORS["postgres"].capabilities["relaxed_commit"], "sessions": None}

    with pytest.raises(DbexpError) as err:
        Plain("1").capability("sessions")
    assert str(err.value) == "plain 1 has no capability 'sessions': it has relaxed_commit"
    with pytest.raises(DbexpError, match="^plain 1 has no capability 'series': it has relaxed_commit$"):
        Plain("1").capability("series")


def test_a_subclass_table_starts_from_its_parents_and_refuses_unknown_names():
    base = {"relaxed_commit": capabilities.RelaxedCommit, "sessions": capabilities.Sessions}
    assert capabilities.table(base, sessions=None) == {"relaxed_commit": capabilities.RelaxedCommit,
                                                       "sessions": None}
    with pytest.raises(ValueError, match="unknown capabilities"):
        capabilities.table(base, relaxed=None)



def test_a_setting_read_back_is_compared_with_the_declared_one_as_the_server_spells_it():
    from dbexp.servers.options import same_setting

    assert same_setting("1", "ON") and same_setting("ON", "on") and same_setting("OFF", "0")
    assert same_setting("300", "300") and same_setting("128 kB", "128")
    assert not same_setting("0", "300") and not same_setting("OFF_PERMISSIVE", "OFF")
