"""What each panel of a faceted Altair chart draws, read from the chart as Vega renders it.

The chart's spec is compiled and laid out by vl-convert (the Vega-Lite the book bundles), with each
mark told to describe the row of the chart's data it draws (its index in the data, and its own facet
labels). A panel's labels are the headers a reader sees beside it (row header at its height, column
header above it, or a wrapped facet's own title), so a panel that draws rows under another panel's
labels is found as the reader would find it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

import altair as alt
import pandas as pd
import vl_convert as vlc

ROW_ID = "__row"
PROBE = "__probe"
SEP = "\u241f"  # a visible unit separator: a control character is not valid in an expression


@dataclass
class Panel:
    labels: tuple  # the header labels beside the panel, in the facet's channels' order (row, column)
    rows: set = field(default_factory=set)  # indexes of the data rows it draws
    drawn_labels: set = field(default_factory=set)  # the facet labels of what it draws
    texts: list = field(default_factory=list)  # text marks drawn in the panel (not axes nor titles)


@dataclass
class Facet:
    channels: tuple  # the facet's channels with a field: ("row", "column") or ("facet",)
    fields: tuple
    data: pd.DataFrame  # the rows the facet splits, indexed as Panel.rows
    panels: list
    own_data_layers: list  # paths of layers inside the facet with data of their own


def _vl_version() -> str | None:
    from dbexp.book.vega import _vl_version_for_bundle

    return _vl_version_for_bundle(str(alt.VEGALITE_VERSION))


def _facets(spec: dict, inherited: dict | None, path: str = ""):
    """(path, facet spec, its data) for every facet in a spec tree (concatenations walked)."""
    data = spec.get("data", inherited)
    if "facet" in spec and "spec" in spec:
        yield path, spec, data
        return
    enc = spec.get("encoding", {})
    if "mark" in spec and {"row", "column", "facet"} & set(enc):  # facet channels of one mark: as a facet
        inner = {k: v for k, v in spec.items() if k not in ("data", "encoding", "columns", "spacing", "title")}
        inner["encoding"] = {k: v for k, v in enc.items() if k not in ("row", "column", "facet")}
        facet = enc["facet"] if "facet" in enc else {k: enc[k] for k in ("row", "column") if k in enc}
        yield path, {"facet": facet, "spec": inner, **{k: spec[k] for k in ("columns", "spacing") if k in spec}}, data
        return
    for key in ("vconcat", "hconcat", "concat", "layer"):
        for i, sub in enumerate(spec.get(key, [])):
            yield from _facets(sub, data, f"{path}/{key}[{i}]")


def _leaves(spec: dict, path: str = "spec"):
    """(path, unit spec) for every mark inside a facet's spec, layers walked."""
    if "layer" in spec:
        for i, sub in enumerate(spec["layer"]):
            yield from _leaves(sub, f"{path}/layer[{i}]")
    else:
        yield path, spec


def _fields(facet: dict) -> tuple[tuple, tuple]:
    f = facet["facet"]
    if "field" in f:  # a wrapped facet: {"facet": {"field": ...}, "columns": n}
        return ("facet",), (f["field"],)
    channels = tuple(c for c in ("row", "column") if c in f)
    return channels, tuple(f[c]["field"] for c in channels)


def _text(node) -> str | None:
    """The title drawn under a scenegraph node (a header's label, a wrapped panel's title); axes skipped."""
    stack = [node]
    while stack:
        n = stack.pop(0)
        if n.get("role") in ("axis", "legend"):
            continue
        if n.get("marktype") == "text" and n.get("role") == "title-text":
            for it in n.get("items", []):
                if "text" in it:
                    t = it["text"]
                    return " ".join(t) if isinstance(t, list) else str(t)
        stack.extend(n.get("items", []))
    return None


def _headers(group: dict, name: str, axis: str) -> dict:
    """Position (x for columns, y for rows) -> label of a facet's header mark."""
    out = {}
    for mark in group.get("items", []):
        if mark.get("name") == name:
            for it in mark.get("items", []):
                label = _text(it)
                if label is not None:
                    out[round(it.get(axis, 0), 3)] = label
    return out


def _walk_items(mark: dict):
    for it in mark.get("items", []):
        yield mark, it
        for sub in it.get("items", []):
            yield from _walk_items(sub)


def _label_str(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "null"
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v)


def panels(chart) -> list[Facet]:
    """Every facet of ``chart`` (an Altair chart, or its dict) as rendered: its panels, each with
    its header labels and the data rows its marks draw."""
    spec = chart if isinstance(chart, dict) else chart.to_dict()
    out = []
    for fpath, facet, data in _facets(spec, None):
        channels, fields = _fields(facet)
        data = data or {}
        rows = data["values"] if "values" in data else spec.get("datasets", {}).get(data.get("name"))
        assert rows is not None, f"facet {fpath or '/'}: no data of its own nor inherited"
        single = copy.deepcopy({k: v for k, v in facet.items() if k != "data"})
        single.update({"$schema": spec.get("$schema"), "config": spec.get("config", {}),
                       "data": {"values": [dict(r, **{ROW_ID: i}) for i, r in enumerate(rows)]}})
        own = [p for p, _ in _layers_with_data(single["spec"])]
        # every mark describes what it draws: its row of the data and that row's facet labels
        probe = f" + '{SEP}' + ".join(f"datum[{json.dumps(f)}]" for f in (ROW_ID, *fields))
        for _, leaf in _leaves(single["spec"]):
            leaf["transform"] = [{"calculate": probe, "as": PROBE}] + leaf.get("transform", [])
            leaf.setdefault("encoding", {})["description"] = {"field": PROBE, "type": "nominal"}
        root = vlc.vegalite_to_scenegraph(single, vl_version=_vl_version())["scenegraph"]["items"][0]
        rows_at = _headers(root, "row_header", "y")
        cols_at = _headers(root, "column_header", "x")
        found = []
        for cell in (it for m in root.get("items", []) if m.get("name") == "cell" for it in m.get("items", [])):
            x, y = round(cell.get("x", 0), 3), round(cell.get("y", 0), 3)
            if channels == ("facet",):  # a wrapped facet: each panel carries its own title
                titles = [m for m in cell.get("items", []) if m.get("role") == "title"]
                labels = (_text(titles[0]) if titles else None,)
            else:
                labels = tuple(rows_at.get(y) if c == "row" else cols_at.get(x) for c in channels)
            p = Panel(labels)
            for m, it in _walk_items({"items": [{"items": cell.get("items", [])}]}):
                d = it.get("description")
                if isinstance(d, str) and SEP in d:
                    row, *labs = d.split(SEP)
                    if row not in ("undefined", "null", ""):  # a row the chart's transforms added
                        p.rows.add(int(float(row)))
                    p.drawn_labels.add(tuple(labs))
                if m.get("marktype") == "text" and m.get("role") == "mark" and "text" in it:
                    p.texts.append(str(it["text"]))
            found.append(p)
        out.append(Facet(channels, fields, pd.DataFrame(rows), found, own))
    return out


def _layers_with_data(spec: dict, path: str = "spec"):
    """Layers inside a facet's spec that bring data of their own."""
    for i, sub in enumerate(spec.get("layer", [])):
        p = f"{path}/layer[{i}]"
        if "data" in sub:
            yield p, sub
        yield from _layers_with_data(sub, p)


def check(chart) -> list[Facet]:
    """Assert that every facet of ``chart`` splits all it draws and that each panel draws exactly the
    rows of its labels: no layer brings data of its own (it would be drawn whole, or aggregated, in every
    panel, not split), no panel draws a row under another's labels, and every combination of labels in
    the data has a panel that draws its rows. Returns the facets, for further checks."""
    facets = panels(chart)
    assert facets, "the chart has no facet"
    for f in facets:
        where = f"facet over {', '.join(f.fields)}"
        assert not f.own_data_layers, f"{where}: layers with data the facet does not split: {f.own_data_layers}"
        labels = f.data[list(f.fields)].map(_label_str).apply(tuple, axis=1)
        seen = {}
        for p in f.panels:
            assert None not in p.labels, f"{where}: a panel with no header: {p}"
            assert p.labels not in seen, f"{where}: two panels labelled {p.labels}"
            seen[p.labels] = p
            wrong = {lab for lab in p.drawn_labels if lab != p.labels}
            assert not wrong, f"{where}: the panel labelled {p.labels} draws rows of {sorted(wrong)}"
            mine = set(labels.index[labels == p.labels])
            assert p.rows <= mine, (f"{where}: the panel labelled {p.labels} draws rows "
                                    f"{sorted(p.rows - mine)[:5]} that are not its labels'")
        drawn = set().union(*(p.rows for p in f.panels))
        for lab, idx in labels.groupby(labels).groups.items():
            assert lab in seen, f"{where}: no panel for {lab}, which the data holds"
            expected = set(idx) & drawn if drawn & set(idx) else set(idx)
            assert seen[lab].rows == expected, (
                f"{where}: the panel labelled {lab} draws {len(seen[lab].rows)} of its "
                f"{len(idx)} rows" + ("" if seen[lab].rows else " (none: it is blank)"))
    return facets
