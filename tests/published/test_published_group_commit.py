"""The group_commit page's faceted charts, drawn from its published data/ (run by `make published`)."""

from __future__ import annotations

import pytest

from dbexp.chapters import group_commit as gc


def test_the_pages_faceted_charts_put_each_configurations_rows_in_its_panel():
    from pathlib import Path

    from chart_panels import check
    from published_support import has_facet, notebook_charts, published

    repo = Path(__file__).resolve().parents[2]
    if not (repo / "data" / "group_commit").is_dir():
        pytest.skip("no published group_commit results")
    res = published("group_commit")
    from unittest import mock

    from dbexp.book import tables

    with mock.patch.object(tables, "show", lambda *a, **k: None):
        specs = [c.to_dict() for c in notebook_charts("group_commit", {"gc": gc, "res": res, "c": gc.curves(res),
                                                                       "tables": tables})]
    specs = [s for s in specs if has_facet(s)]
    # group size, waits, efficiency bound, TPS and latency: one panel per configuration
    assert len(specs) == 5, [s.get("title") for s in specs]
    for spec in specs:
        for facet in check(spec):
            assert facet.fields == ("config",), spec["title"]
            ran = set(facet.data["config"])
            for p in facet.panels:
                assert bool(p.rows) == (p.labels[0] in ran), (spec["title"], p.labels)
                assert p.drawn_labels <= {p.labels}, (spec["title"], p.labels, p.drawn_labels)
