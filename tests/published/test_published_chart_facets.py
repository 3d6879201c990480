"""The buffer_eviction page's faceted charts, drawn from its published data/: each panel holds the rows of
its labels (run by `make published`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chart_panels import check
from dbexp.book import charts
from published_support import has_facet, notebook_charts, published

REPO = Path(__file__).resolve().parents[2]


def test_buffer_eviction_panels_hold_the_rows_of_their_labels():
    from dbexp.chapters import buffer_eviction as be

    if not (REPO / "data" / "buffer_eviction").is_dir():
        pytest.skip("no published buffer_eviction results")
    res = published("buffer_eviction")
    specs = [c.to_dict() for c in notebook_charts("buffer_eviction", {"be": be, "res": res, "tl": be.timeline(res)})]
    specs = [s for s in specs if has_facet(s)]
    # hot QPS and residency for each engine, and PostgreSQL's usage counts
    assert len(specs) == 5, [s.get("title") for s in specs]
    checked = {spec["title"]["text"]: check(spec) for spec in specs}
    for spec in specs:
        title = spec["title"]["text"]
        assert spec["title"]["subtitle"][0] == charts.measured_on(res), title  # the hardware, as before
        for facet in checked[title]:
            assert facet.fields == ("series_name", "variant"), title
            ran = set(facet.data[["series_name", "variant"]].itertuples(index=False, name=None))
            for p in facet.panels:
                if p.labels in ran:
                    assert p.rows and charts.NOT_RUN not in p.texts, (title, p.labels)
                else:  # a variant this server did not run: an empty panel that says so
                    assert not p.rows and p.texts == [charts.NOT_RUN], (title, p.labels, p.texts)
            if title.startswith("PostgreSQL"):  # the servers that ran two variants of four are there
                assert {"postgres 16.14", "postgres 18.4"} <= {p.labels[0] for p in facet.panels}, title
