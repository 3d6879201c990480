"""The effective settings that still differ between the servers a chapter compares: the default drift.

Chapters start every server with the same durability, logging and instrumentation settings
(``Flavor.comparable_settings``); what is left to differ is what the versions' own defaults change.
From the effective settings every run stored (``settings_effective``, one row per run as
``chapter.tidy`` makes them), :func:`drift` builds the table a chapter shows: a row per setting
whose value differs between servers of one flavor, a column per server. :func:`unsteady` lists a
separate problem: a setting that differs between runs of the same server.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from functools import lru_cache
from typing import Iterable

import pandas as pd

from dbexp.catalog.versions import version_key
from dbexp.servers.registry import flavor_class

MISSING = "—"  # the server has no such setting
SEP = " | "  # between the values runs of one server disagree on
BARE = "bare"  # the server_kind of a host process (its column says so)
EMPTY = "(empty)"  # a setting whose value is the empty string (MySQL 5.7's unset innodb_flush_method)
# PostgreSQL's "setting unit" as effective_settings() stores it: '16384 8kB', '600000 ms'
_WITH_UNIT = re.compile(r"^(\d+) (\d*)(B|kB|MB|GB|TB|us|ms|s|min|h|d)$")
_DECIMAL = re.compile(r"^-?\d+\.\d+$")
_UNITS = ([("B", 1), ("kB", 2**10), ("MB", 2**20), ("GB", 2**30), ("TB", 2**40)],
          [("us", 1), ("ms", 10**3), ("s", 10**6), ("min", 60 * 10**6), ("h", 3600 * 10**6), ("d", 86400 * 10**6)])


@lru_cache(maxsize=None)  # a few hundred distinct values, read for every run of every server
def readable(value: str) -> str:
    """A value with a unit in the largest unit that divides it ('16384 8kB' -> '128 MB', '600000 ms'
    -> '10 min'), a decimal without its trailing zeros ('75.000000' -> '75'); '' as EMPTY; anything else
    as it is."""
    if value == "":
        return EMPTY
    if _DECIMAL.match(value):  # MySQL prints its floating-point settings with six decimals: 75.000000 -> 75
        return value.rstrip("0").rstrip(".")
    m = _WITH_UNIT.match(value)
    if not m:
        return value
    units = next(u for u in _UNITS if m.group(3) in dict(u))
    amount = int(m.group(1)) * int(m.group(2) or 1) * dict(units)[m.group(3)]
    name, size = next(((n, s) for n, s in reversed(units) if amount and amount % s == 0), (m.group(3), 1))
    return f"{amount // size} {name}"


def _settings(value) -> dict[str, str]:
    """A run's effective settings, stored as a dict or as its JSON text."""
    if isinstance(value, str):
        value = json.loads(value)
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _parsed(values) -> list[dict[str, str]]:
    """_settings of each value, each distinct text parsed once (runs of one server mostly store the same
    settings): runs with equal settings share one dict."""
    done: dict = {}
    out = []
    for v in values:
        key = v if isinstance(v, str) else None
        if key is None:
            out.append(_settings(v))
        else:
            if key not in done:
                done[key] = _settings(v)
            out.append(done[key])
    return out


def _config_labels(configs: list[dict]) -> list[str]:
    """Per requested configuration of one server, the settings that set it apart from the others."""
    if len({json.dumps(c, sort_keys=True) for c in configs}) < 2:
        return [""] * len(configs)
    items = [{(str(k), str(v)) for k, v in c.items()} for c in configs]
    common = set.intersection(*items)
    return [" [" + (", ".join(f"{k}={v}" for k, v in sorted(own - common)) or "no extra settings") + "]"
            for own in items]


def servers(wide: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its flavor, its server as a column header ('MySQL 8.0.15', 'PostgreSQL 16.14
    (bare)'; with the requested settings that tell servers of one version apart, where a chapter
    ran it with several), the column's sort key, and its effective settings as a dict.

    A server is a flavor, a version, how it ran (container or bare) and the settings asked of it."""
    wide = wide.reset_index(drop=True)
    kind = wide["server_kind"] if "server_kind" in wide else pd.Series("", index=wide.index)
    config = wide["config_requested"] if "config_requested" in wide else pd.Series(None, index=wide.index)
    runs = pd.DataFrame({
        "flavor": wide["flavor"].astype(str),
        "version": wide["version"].astype(str).str.split("-").str[0],
        "kind": kind.fillna("").astype(str),
        "config": [_settings(c) for c in config],
        "settings": _parsed(wide["settings_effective"]),
    }, index=wide.index)
    runs["server"] = [f"{flavor_class(f).title} {v}" + (f" ({BARE})" if k == BARE else "")
                      for f, v, k in zip(runs["flavor"], runs["version"], runs["kind"])]
    for _, idx in runs.groupby("server").groups.items():
        suffixes = _config_labels(list(runs.loc[idx, "config"]))
        runs.loc[idx, "server"] = [s + x for s, x in zip(runs.loc[idx, "server"], suffixes)]
    runs["order"] = [(flavor_class(f).title, version_key(v), k == BARE, s)
                     for f, v, k, s in zip(runs["flavor"], runs["version"], runs["kind"], runs["server"])]
    return runs.drop(columns=["config"])


def _seen(runs: pd.DataFrame) -> dict[str, dict[str, list[str]]]:
    """{server: {setting: the distinct values its runs had, MISSING where a run had none}}."""
    out = {}
    for server, group in runs.groupby("server", sort=False):
        dicts = list(group["settings"])
        values, having = defaultdict(set), defaultdict(int)  # per setting: its values, the runs that had it
        runs_of = Counter(id(d) for d in dicts)  # runs with the same settings share one dict (_parsed)
        for d in {id(d): d for d in dicts}.values():
            for n, v in d.items():
                values[n].add(readable(v))
                having[n] += runs_of[id(d)]
        out[server] = {n: sorted(v | {MISSING} if having[n] < len(dicts) else v) for n, v in values.items()}
    return out


def set_by_points(wide: pd.DataFrame) -> set[str]:
    """Settings a chapter's points change at run time by design (SET GLOBAL per variant): the names
    in a point parameter ``settings`` (pairs of name and value). Their values differ between runs of
    one server because the chapter asked, so neither drift table shows them."""
    if "settings" not in wide:
        return set()
    return {str(pair[0]).lower() for value in wide["settings"] if isinstance(value, (list, tuple))
            for pair in value if isinstance(pair, (list, tuple)) and pair}


def _columns(runs: pd.DataFrame) -> list[str]:
    first = runs.drop_duplicates("server")
    return [s for _, s in sorted(zip(first["order"], first["server"]))]


def _names(flavor: str, names: list[str] | None) -> list[str]:
    return list(flavor_class(flavor).performance_settings) if names is None else names


def _cell(seen: dict, server: str, name: str) -> str:
    return SEP.join(seen[server].get(name, [MISSING]))


def drift(wide: pd.DataFrame, names: Iterable[str] | None = None) -> pd.DataFrame:
    """Rows: the settings whose effective value differs between servers of the same flavor;
    columns: one per server (see :func:`servers`), by flavor and version. A cell is the server's
    value, MISSING where its version has no such setting, and the values joined by SEP where its
    runs disagree (:func:`unsteady`). ``names``: the settings to consider (default: each flavor's
    ``performance_settings``, the ones that change what a run measures)."""
    names = None if names is None else list(names)
    runs = servers(wide)
    seen = _seen(runs)
    columns = _columns(runs)
    asked = set_by_points(wide)
    flavor_of = dict(zip(runs["server"], runs["flavor"]))
    rows: list[str] = []
    for flavor in dict.fromkeys(flavor_of[c] for c in columns):
        mine = [c for c in columns if flavor_of[c] == flavor]
        for name in _names(flavor, names):
            if len({_cell(seen, c, name) for c in mine}) > 1 and name not in rows and name not in asked:
                rows.append(name)
    return pd.DataFrame({c: [_cell(seen, c, n) for n in rows] for c in columns},
                        index=pd.Index(rows, name="setting"), columns=columns, dtype=object)


def drift_by_flavor(wide: pd.DataFrame, names: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
    """:func:`drift` per flavor ({'MySQL': table, 'PostgreSQL': table}), each with that flavor's
    servers only; flavors with fewer than two servers, or none of whose settings differ, are left out."""
    out = {}
    for flavor, part in wide.groupby(wide["flavor"].astype(str), sort=False):
        table = drift(part, names)
        if len(table):
            out[flavor_class(flavor).title] = table
    return dict(sorted(out.items()))


def unsteady(wide: pd.DataFrame, names: Iterable[str] | None = None) -> pd.DataFrame:
    """The settings whose effective value differs between runs of the same server: something other
    than the version and the requested settings changed them. Columns: server, setting, values seen
    (joined by SEP), runs (how many runs that server has)."""
    names = None if names is None else list(names)
    runs = servers(wide)
    seen = _seen(runs)
    count = runs["server"].value_counts()
    flavor_of = dict(zip(runs["server"], runs["flavor"]))
    asked = set_by_points(wide)
    rows = [(server, name, SEP.join(seen[server][name]), int(count[server]))
            for server in _columns(runs) for name in _names(flavor_of[server], names)
            if len(seen[server].get(name, ())) > 1 and name not in asked]
    return pd.DataFrame(rows, columns=["server", "setting", "values seen", "runs"])
