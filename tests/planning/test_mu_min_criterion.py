"""Issue 31: every mu_min states its criterion and test level; de Fondeville's printed
7.9 / 0.28 / 0.048 follow at level 0.01 with power >= 99% of the non-private power
(shared/reference/published.json, ztest_power_mu_min)."""

import json

import pytest
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit.cli import app


@pytest.mark.parametrize("n", ["15", "100", "500"])
def test_published_mu_min_with_criterion_and_level(published, n):
    ref = published["ztest_power_mu_min"]
    plan = fp.utility_first(analysis=fp.ZTestSpec(effect=0.2, n=float(n), sd=0.25, alpha=0.01),
                            max_relative_loss=0.01)
    assert plan.mu_min == pytest.approx(ref["value"][n], rel=1e-4)
    assert plan.criterion == "power >= 99% of the non-private power, one-sided Z-test at level 0.01"
    assert "level 0.01" in plan.to_dict()["notes"][0] and ref["published"][n] in plan.to_dict()["notes"][0]


def test_default_level_is_named(tmp_path):
    r = CliRunner().invoke(app, ["plan", "utility-first", "--effect", "0.2", "--n", "15", "--sd", "0.25",
                                 "--max-relative-loss", "0.01", "--format", "json"])
    d = json.loads(r.stdout)
    assert d["mu_min"] == pytest.approx(5.0097, abs=1e-3)
    assert "level 0.05" in d["criterion"] and "level 0.01" in d["notes"][0]
    r = CliRunner().invoke(app, ["plan", "utility-first", "--effect", "0.2", "--n", "15", "--sd", "0.25",
                                 "--required-power", "0.8", "--tests", "3", "--format", "json"])
    assert "level 0.0167 per test" in json.loads(r.stdout)["criterion"]


@pytest.mark.parametrize(("loss", "share"), [(0.025, "97.5%"), (0.005, "99.5%"), (0.001, "99.9%"), (0.2, "80%")])
def test_criterion_states_the_power_share_exactly(loss, share):
    # it was rounded to whole percents: --max-relative-loss 0.025 read "power >= 98% of the
    # non-private power" (the plan keeps 97.5%), 0.005 read "power >= 100%"
    plan = fp.utility_first(analysis=fp.ZTestSpec(effect=0.2, n=500, sd=1.0), max_relative_loss=loss)
    assert plan.criterion.startswith(f"power >= {share} of the non-private power")
