"""De Fondeville's uniform random sampling (Example 3) as a mechanism kind: spec, library
report and CLI (issue 11; the web in tests/web/test_web_uniform_sampling.py). It is the
worked example of catastrophic failure."""

import json
import math

import pytest
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit.cli import app

MU, N = 1.0, 5
P = -math.expm1(-MU) / N          # probability that the target's record is released


def test_spec_round_trip_and_curve():
    spec = {"kind": "uniform-sampling", "mu": MU, "n": N}
    mech = fp.mechanism_from_dict(spec)
    assert isinstance(mech, fp.UniformSampling) and mech.to_dict() == spec
    assert mech.disclosure_probability == pytest.approx(P, rel=1e-15)
    curve = fp.tradeoff_curve(mech)
    assert curve.f0 == pytest.approx(1 - P, rel=1e-15)                 # (0, p)-DP exactly
    assert curve.beta(0.3) == pytest.approx(1 - P - 0.3, rel=1e-12)


def test_report_says_catastrophic():
    r = fp.privacy_report(fp.UniformSampling(MU, N))
    assert r.failure_mode == "catastrophic" and math.isinf(r.mu)
    text = " ".join(r.warnings)
    assert "Example 3" in text and "catastrophic" in text
    assert math.isinf(r.epsilon_for_delta(1e-5))           # no epsilon below the disclosure probability
    curve = fp.tradeoff_curve(fp.UniformSampling(MU, N))
    assert curve.epsilon_for_delta(P * (1 + 1e-12)) == 0.0 and math.isinf(curve.epsilon_for_delta(P / 2))


def test_composes_with_other_mechanisms():
    mech = fp.Composed([fp.UniformSampling(MU, N), fp.Gaussian(2.0)])
    curve = fp.tradeoff_curve(mech, discretization=1e-3)
    assert curve.bound == "lower" and curve.f0 <= 1 - P + 1e-12


@pytest.mark.parametrize("spec,word", [
    ({"kind": "uniform-sampling", "mu": 0, "n": 5}, "mu"),
    ({"kind": "uniform-sampling", "mu": 1, "n": 2.5}, "n"),
    ({"kind": "uniform-sampling", "mu": 1, "n": 0}, "n"),
    ({"kind": "uniform-sampling", "mu": 1}, "n"),
])
def test_bad_spec(spec, word):
    with pytest.raises(ValueError, match=word):
        fp.mechanism_from_dict(spec)


def test_cli_report():
    runner = CliRunner()
    r = runner.invoke(app, ["report", "uniform-sampling", "--mu", str(MU), "--n", str(N)])
    assert r.exit_code == 0, r.output
    assert "catastrophic" in r.output and "Example 3" in r.output
    r = runner.invoke(app, ["report", "uniform-sampling", "--mu", str(MU), "--n", str(N), "--format", "json"])
    data = json.loads(r.stdout)
    assert data["mechanism"]["kind"] == "uniform-sampling"
    bad = runner.invoke(app, ["report", "uniform-sampling", "--mu", "-1", "--n", "5"])
    assert bad.exit_code == 2 and "mu" in bad.output and "Traceback" not in bad.output


def test_description_does_not_read_as_a_gdp_mu():
    # "Uniform random sampling (...; mu=0.01, n=1000000): μ = ∞ Gaussian DP" read as mu 0.01
    # and mu infinity side by side: the sampling parameter is named in words
    d = fp.privacy_report(fp.mechanism_from_dict({"kind": "uniform-sampling", "mu": 0.01, "n": 1000})).to_dict()
    assert "mu=" not in d["description"] and "sampling parameter 0.01, not a GDP μ" in d["description"]
