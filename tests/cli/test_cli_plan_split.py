"""`fdpkit plan` with several tests (budget split) and two-sample Laplace power (issue 15)."""

import json
import math

import pytest
from typer.testing import CliRunner

from fdpkit.cli import app

CLOSED_FORM_RTOL = 1e-9
runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def test_privacy_first_two_sample_laplace_and_split():
    r = run("plan", "privacy-first", "--effect", "0.1", "--n", "200", "--sd", "0.25", "--groups", "2",
            "--tests", "4", "--max-attack-power", "5%", "--format", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    gauss, lap = d["options"]
    assert lap["power"] is not None and 0 < lap["power"] < 1
    assert gauss["value_per_test"] == pytest.approx(gauss["value"] / 2, rel=CLOSED_FORM_RTOL)
    assert lap["value_per_test"] == pytest.approx(lap["value"] / 4, rel=CLOSED_FORM_RTOL)
    assert d["sigma"] == pytest.approx((1 / 200) / (gauss["value"] / 2), rel=CLOSED_FORM_RTOL)
    assert d["laplace_scale"] == pytest.approx((1 / 200) / (lap["value"] / 4), rel=CLOSED_FORM_RTOL)
    assert d["budget_split"]["alpha_per_test"] == pytest.approx(0.0125)
    assert "exact" in d["analysis"]["laplace_power_method"]


def test_text_says_per_test_and_the_rule():
    r = run("plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--tests", "5",
            "--required-power", "0.9")
    assert r.exit_code == 0, r.output
    assert "per test" in r.output and "mu_total" in r.output and "sqrt" in r.output
    d = json.loads(run("plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--tests", "5",
                       "--required-power", "0.9", "--format", "json").stdout)
    assert d["mu_total"] == pytest.approx(math.sqrt(5) * d["mu_min"], rel=CLOSED_FORM_RTOL)


def test_bad_tests_is_one_line():
    r = run("plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--tests", "0",
            "--required-power", "0.9")
    assert r.exit_code == 2 and "tests" in r.output and "Traceback" not in r.output


def test_privacy_first_relative_risk_that_cannot_bind_says_so():
    # FPR 0.1, R = 50: no attack at FPR >= 0.1 exceeds TPR/FPR <= 10; the plan printed
    # "sd σ = 0.0 (μ = inf)" and its JSON a relative risk of inf against the limit 50
    args = ("plan", "privacy-first", "--effect", "0.1", "--n", "1000", "--sd", "1", "--fpr", "0.1",
            "--max-relative-risk", "50")
    r = run(*args, "--format", "json")
    assert r.exit_code == 0, r.output
    gauss, lap = json.loads(r.stdout)["options"]
    assert gauss["value"] == "inf" and gauss["relative_risk"] == pytest.approx(10.0) and gauss["attack_power"] == 1.0
    assert lap["relative_risk"] <= 50
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert "σ = 0.0" not in r.output and "none needed" in r.output and "does not bind" in r.output
    assert "relative risk (FPR ≥ 0.1)" in r.output
