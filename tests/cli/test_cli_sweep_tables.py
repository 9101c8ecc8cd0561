"""``fdpkit sweep regret-map`` and ``rule-of-thumb`` print tables an 80-column terminal shows
whole, as the design table does: short headers (σ, q, T, μ, regret, ε) explained below the
table, δ and the discretization said once above it. Before, their library column names cut every
header and some cells at 80 columns ("noise_m…", "sample_…", "discret…", "0.0023…")."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from fdpkit.cli import app
from fdpkit.report.model import fmt

GRID = ["--noise-multiplier", "1,2", "--steps", "100", "--sample-rate", "0.01,0.1", "--discretization", "1e-3",
        "--executor", "inprocess"]


def _table(output: str) -> list[str]:
    return [line for line in output.splitlines() if line[:1] in "┏┃┡│└"]


def _rows(output: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("│").split("│")] for line in _table(output) if line.startswith("│")]


def _whole_at_80(output: str) -> None:
    table = _table(output)
    assert table and "…" not in output and max(len(line) for line in table) <= 80, output


def test_regret_map_is_whole_at_80_columns():
    from fdpkit.sweep import regret_map

    res = CliRunner().invoke(app, ["--quiet", "sweep", "regret-map", *GRID], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    _whole_at_80(res.output)
    assert _table(res.output)[1].split("┃")[1:-1] == [" σ ", " q    ", " T   ", " μ       ", " regret   ", " ε      "]
    assert "δ 1e-05; discretization 0.001" in res.output and "σ noise multiplier" in res.output
    want = regret_map([1, 2], [100], [0.01, 0.1], discretization=1e-3, executor="inprocess").rows
    assert _rows(res.output) == [[fmt(r["noise_multiplier"]), fmt(r["sample_rate"]), str(r["steps"]),
                                  fmt(r["mu"], up=True), fmt(r["regret"]), fmt(r["epsilon"], up=True)] for r in want]


def test_rule_of_thumb_counter_examples_are_whole_at_80_columns():
    res = CliRunner().invoke(app, ["--quiet", "sweep", "rule-of-thumb", "--noise-multiplier", "2", "--steps", "400",
                                   "--sample-rate", "0.05,0.1", "--threshold", "0.001", "--discretization", "1e-3",
                                   "--executor", "inprocess"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "Counter-examples" in res.output
    _whole_at_80(res.output)
    regrets = [float(row[4]) for row in _rows(res.output)]
    assert len(regrets) == 2 and all(r >= 0.001 for r in regrets)


def test_the_sweep_table_is_whole_at_80_columns_with_every_metric():
    res = CliRunner().invoke(app, ["--quiet", "sweep", *GRID], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    _whole_at_80(res.output)
    assert re.search(r"┃ σ ┃ q +┃ T +┃ μ +┃ regret +┃ ε +┃ TPR@0\.001 ┃ adv\. +┃ s +┃", res.output), res.output
    assert "μ holds for FPR and FNR ≥ 1e-10" in res.output
