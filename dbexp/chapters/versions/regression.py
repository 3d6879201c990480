"""The regression source's ablation as the versions chapter measures it: its factors (what each
changes from the source's baseline, on the server or the client), its steps one on top of the other,
every configuration measured, what the ablation cannot change on the lab's versions, and the source's
gap (8.0.45's TPS over 5.7.44's, its tables; dbexp.experiments.ledger holds its numbers) beside each
configuration it measured. The settings of each configuration per server come from the engine part
(engines/innodb.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dbexp.experiments import ledger as source


@dataclass(frozen=True)
class Factor:
    """One of the regression ablation's factors: what it changes from the source's baseline, on the
    server (settings; ``binlog_off`` takes the binlog's own settings away) or on the client (sysbench
    options)."""

    settings: dict[str, str] = field(default_factory=dict)
    client: tuple[tuple[str, str], ...] = ()
    binlog_off: bool = False


# the regression source's factors, in the order its table of steps takes them away (each step on top of
# the ones before), then the others the issue names, each of which is only changed alone
FACTORS: dict[str, Factor] = {
    "writer threads off": Factor({"innodb_log_writer_threads": "OFF"}),
    "P_S off": Factor({"performance_schema": "OFF"}),
    "binlog off": Factor(binlog_off=True),
    "prepared statements": Factor(client=(("db-ps-mode", "auto"),)),
    "flush_log_at_trx_commit=0": Factor({"innodb_flush_log_at_trx_commit": "0"}),
    "doublewrite off": Factor({"innodb_doublewrite": "OFF"}),
    "latin1": Factor({"character_set_server": "latin1", "collation_server": "latin1_swedish_ci"}),
    "AHI on": Factor({"innodb_adaptive_hash_index": "ON"}),
}
STEPS = ("writer threads off", "P_S off", "binlog off", "prepared statements", "flush_log_at_trx_commit=0")
BASELINE = "source baseline"
BASELINE_CLIENT = (("db-ps-mode", "disable"),)  # the source's: every statement sent as text


def step_name(k: int) -> str:
    """The configuration with the source's first ``k`` steps taken (step 1 is its first factor alone)."""
    return STEPS[0] if k == 1 else f"steps 1-{k}"


def configurations() -> dict[str, tuple[str, ...]]:
    """Every configuration of the ablation and the factors it takes away from the source's baseline:
    the baseline, the source's steps one on top of the other, and each factor alone (the first step is
    its first factor alone)."""
    out: dict[str, tuple[str, ...]] = {BASELINE: ()}
    for k in range(1, len(STEPS) + 1):
        out[step_name(k)] = STEPS[:k]
    for name in FACTORS:
        out.setdefault(name, (name,))
    return out


# the configurations the regression source measured (its baseline, its steps, its factors alone): the default
# scale's ablation; the others (the doublewrite buffer, latin1, the adaptive hash index) run at full scale
SOURCE_CONFIGS = tuple(c for c, factors in configurations().items()
                       if not factors or factors == STEPS[:len(factors)] or (len(factors) == 1 and factors[0] in STEPS))


# what the ablation cannot change on the lab's versions, and why
NOT_CHANGED = {
    "innodb_log_writer_threads on 5.7.22 and 8.0.15": "an option from 8.0.22: 5.7 has no log writer threads, "
                                                      "8.0.15 always runs them, so step 1 changes 9.7 only",
    "the redo log's layout and undo tablespaces": "each version's own format, not a setting: 8.0.30+ sizes redo "
                                                  "by innodb_redo_log_capacity, 5.7 by files",
    "the change buffer": "it buffers changes to secondary index pages not in the pool; update-nonindex changes "
                         "column c, which no secondary index holds, and the table is cached",
}


# the ablation's factors -> the source's rows of its independent ablation (each factor alone)
ALONE_ROWS = {"writer threads off": "writer_threads=OFF", "P_S off": "performance_schema=0",
              "binlog off": "skip-log-bin", "prepared statements": "db-ps-mode=auto",
              "flush_log_at_trx_commit=0": "flush_log_at_trx_commit=0"}


def source_gap(config: str) -> float | None:
    """8.0 / 5.7 in the source for ``config``, or None where the source did not measure it."""
    factors = configurations()[config]
    if factors == STEPS[:len(factors)]:
        return source.step_gap(len(factors))
    if len(factors) == 1 and factors[0] in ALONE_ROWS:
        return source.gap(ALONE_ROWS[factors[0]])
    return None
