"""Where results are stored: DuckDB runs with provenance, and the Parquet the book publishes."""

from dbexp.results.export import export, load
from dbexp.results.provenance import hardware_label, host_facts
from dbexp.results.store import Store

__all__ = ["Store", "export", "hardware_label", "host_facts", "load"]
