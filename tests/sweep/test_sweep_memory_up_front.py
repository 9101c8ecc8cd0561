"""A sweep with one setting beyond this machine's memory is refused before any setting is
accounted, with the message :func:`fdpkit.account` gives for that setting alone. It was
refused only when its turn came: after the other settings had run (5.4 s of work thrown away
for three settings here; minutes on a real grid), their rows checkpointed beside ``--output``."""

from __future__ import annotations

import pytest

import fdpkit as fp
from fdpkit.accounting.cost import BudgetExceeded
from fdpkit.cli import run
from fdpkit.sweep import run_sweep

#: Needs about 8 TB at discretization 1e-4 (no test machine has it): steps is the parameter to change.
BEYOND = {"noise_multiplier": 0.5, "sample_rate": 0.5, "steps": 10**7}
FITS = [{"noise_multiplier": 1.0, "sample_rate": 0.01, "steps": 2000},
        {"noise_multiplier": 0.8, "sample_rate": 0.02, "steps": 3000}]


def test_a_setting_beyond_memory_is_refused_before_any_work(tmp_path):
    with pytest.raises(BudgetExceeded) as alone:
        fp.account(fp.dpsgd(**BEYOND), discretization=1e-4)
    out = tmp_path / "table.csv"
    with pytest.raises(BudgetExceeded) as info:
        run_sweep(rows=[*FITS, BEYOND], discretization=1e-4, executor="inprocess", output=out,
                  metrics=["mu", "epsilon"])
    assert info.value.parameter == "steps" and str(info.value) == str(alone.value)
    assert list(tmp_path.iterdir()) == []  # no table, and no checkpoint of the settings that fit: none ran


def test_cli_exit_2_one_line_and_nothing_written(tmp_path, capfd):
    out = tmp_path / "table.csv"
    code = run(["sweep", "--noise-multiplier", "1,0.5", "--sample-rate", "0.01,0.5", "--steps", "1000,10000000",
                "--discretization", "1e-4", "--executor", "inprocess", "-o", str(out)])
    err = capfd.readouterr().err
    assert code == 2 and err.startswith("error: --steps: this request needs about") and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_settings_answered_without_a_grid_are_not_checked():
    # shuffled batches have a closed form: no PLD, no memory to refuse (10**7 steps answered)
    r = run_sweep(rows=[{"noise_multiplier": 0.5, "steps": 10**7, "sampling": "shuffled", "relation": "replace-one", "batch_size": 5,
                         "dataset_size": 10}],
                  discretization=1e-4, executor="inprocess", metrics=["mu"])
    assert r.rows[0]["mu"] > 0
