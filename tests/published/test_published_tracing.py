"""The readview page from its published data/ with the probe runs left out, as where probes could not
work (run by `make published`)."""

from __future__ import annotations

from dataclasses import replace

from dbexp.chapters import readview as rv
from published_support import published


def test_readview_reads_results_without_probe_runs():
    """A page measured where probes could not work still analyses and states its claims."""
    res = published("readview")
    keep = ~(res.wide["probe"].astype(bool) & res.wide["flavor"].isin(["mysql", "postgres"]))
    res = replace(res, wide=res.wide[keep], runs=res.runs[res.runs["run_id"].isin(res.wide.loc[keep, "run_id"])])
    assert len(rv.claims(res)) and rv.findings(res)
    assert rv.view_slopes(res).empty
