"""Design table: a target mu, or epsilon at delta -> the smallest noise multiplier per
(batch size, epochs), on the safe side of the target."""

from __future__ import annotations

import json

import pytest

import fdpkit as fp
from fdpkit.sweep import design_table

DISC = 1e-3
#: The calibrated noise is the smallest within the calibrator's relative tolerance: 2%
#: less noise must miss the target.
BELOW = 0.98


def test_epsilon_target_is_met_and_tight():
    rows = design_table(epsilon=2.0, delta=1e-5, batch_size=[600], epochs=[1, 3], dataset_size=60000,
                        discretization=DISC, executor="inprocess")
    assert [r["epochs"] for r in rows] == [1, 3]
    for r in rows:
        assert r["epsilon"] <= 2.0 and r["converged"]
        assert "epsilon" in r["target"]
        cal = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, sample_rate=r["sample_rate"], steps=r["steps"],
                                 discretization=DISC)
        assert r["noise_multiplier"] == cal.value
        looser = fp.privacy_report(fp.dpsgd(r["noise_multiplier"] * BELOW, r["sample_rate"], r["steps"]),
                                   deltas=(1e-5,), discretization=DISC)
        assert looser.epsilon_for_delta(1e-5) > 2.0
    assert rows[1]["noise_multiplier"] > rows[0]["noise_multiplier"]


def test_mu_target_keeps_its_keyword():
    rows = design_table(mu=0.5, batch_size=[600], epochs=[1], dataset_size=60000, discretization=DISC,
                        executor="inprocess")
    assert rows[0]["mu"] <= 0.5 and rows[0]["target"].startswith("mu")


@pytest.mark.parametrize("kwargs, match", [
    (dict(), "exactly one target"),
    (dict(mu=1.0, epsilon=1.0), "exactly one target"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"),
    (dict(epsilon=1.0, delta=2.0), "delta"),
])
def test_bad_targets(kwargs, match):
    with pytest.raises(ValueError, match=match):
        design_table(batch_size=[600], epochs=[1], dataset_size=60000, executor="inprocess", **kwargs)


def test_cli_design_table_epsilon(tmp_path):
    from typer.testing import CliRunner

    from fdpkit.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["sweep", "design-table", "--epsilon", "2", "--delta", "1e-5", "--batch-size", "600",
                              "--epochs", "1", "--dataset-size", "60000", "--discretization", str(DISC),
                              "--executor", "inprocess", "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["epsilon"] == 2.0 and data["rows"][0]["epsilon"] <= 2.0
    res = runner.invoke(app, ["sweep", "design-table", "--batch-size", "600", "--epochs", "1",
                              "--dataset-size", "60000"])
    assert res.exit_code == 2 and "exactly one target" in res.output
    # -o follows the output rules: an existing file is not replaced without --force (it was)
    out = tmp_path / "table.csv"
    out.write_text("x,y\n1,2\n")
    args = ["sweep", "design-table", "--mu", "1", "--batch-size", "600", "--epochs", "1", "--dataset-size", "60000",
            "--discretization", str(DISC), "--executor", "inprocess", "-o", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "--force" in res.output and out.read_text() == "x,y\n1,2\n"
    res = runner.invoke(app, ["--force", *args])
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("batch_size") or "noise_multiplier" in out.read_text()
    # --force belongs to its own invocation (it carried over to later ones in one process)
    assert runner.invoke(app, args).exit_code == 2


def test_design_plot_names_the_target_and_regret_map_skips_refused_rows():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fdpkit.report.sweep_plots import design_table_plot, regret_map_plot

    rows = [{"batch_size": 256, "epochs": e, "noise_multiplier": 1.0 + e, "target": "epsilon <= 2 at delta=1e-05"}
            for e in (1, 2)]
    fig, ax = plt.subplots()
    design_table_plot(ax, rows)
    assert "epsilon <= 2" in ax.get_title(loc="left")
    ax.clear()
    regret_map_plot(ax, [{"noise_multiplier": 2.0, "steps": 10, "sample_rate": 0.1, "regret": 0.02},
                         {"noise_multiplier": 2.0, "steps": 10, "sample_rate": 0.2, "note": "refused: ..."}])
    assert len(ax.lines[0].get_xdata()) == 1
    plt.close(fig)


def test_cli_design_table_prints_sigma_on_the_safe_side_whole_in_80_columns():
    # the text table printed σ to nearest: 0.5762 for the solved 0.57621 (batch 256 of 60,000, 1 epoch, μ ≤ 1),
    # and the run trained with 0.5762 has μ = 1.00002 > 1; its twelve columns also cut every cell to
    # "0.5…" in an 80-column terminal, σ included
    import re

    from typer.testing import CliRunner

    from fdpkit.cli import app

    res = CliRunner().invoke(app, ["sweep", "design-table", "--mu", "1", "--batch-size", "256", "--epochs", "1",
                                   "--dataset-size", "60000", "--discretization", str(DISC), "--executor",
                                   "inprocess"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    table = [line for line in res.output.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and "…" not in "".join(table) and max(len(line) for line in table) <= 80
    sigma = float(re.search(r"│ 256\s+│ 1\s+│ 235\s+│ ([0-9.]+)\s+│", res.output).group(1))
    solved = design_table(mu=1, batch_size=[256], epochs=[1], dataset_size=60000, discretization=DISC,
                          executor="inprocess")[0]["noise_multiplier"]
    assert sigma == 0.5763 and sigma >= solved
    run = fp.dpsgd(sigma, batch_size=256, dataset_size=60000, epochs=1)
    assert fp.privacy_report(run, discretization=DISC).mu <= 1.0
    assert "ε at δ =" in res.output and "1e-05" in res.output  # the header names its δ (wrapped at 80)
