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


def test_epsilon_zero_beside_catastrophic_is_explained():
    """n = 10^6: the disclosure probability 6.3e-7 is below delta = 1e-5, so the report read
    "ε = 0 at δ = 1e-05" beside "catastrophic" with no word on why; it now says that delta
    covers the outright disclosures and epsilon describes only the other outputs."""
    from fdpkit.report import build_document

    r = fp.privacy_report(fp.UniformSampling(MU, 10**6))
    assert r.failure_mode == "catastrophic" and r.epsilon_for_delta(1e-5) == 0.0
    why = [w for w in r.warnings if w.startswith("Why ε = 0 at δ = 1e-05")]
    assert len(why) == 1 and "ε describes only the other outputs" in why[0] and "below 6.32e-07" in why[0]
    assert "δ = 1e-05 covers those outputs, so the ε above describes only the others" in r.statement()
    doc = build_document(r, representations=False)
    assert "ε = 0 at δ = 1e-05 (δ covers the outputs that reveal membership outright" in doc.summary
    head = dict(doc.section("headline").tables[0].rows)
    assert head["ε at δ = 1e-05"] == "0 (outright disclosures fall in δ)"
    # below the disclosure probability epsilon is infinite: nothing to explain
    small = fp.privacy_report(fp.UniformSampling(MU, N))
    assert not any(w.startswith("Why ε") for w in small.warnings) and "covers those outputs" not in small.statement()
    text = " ".join(CliRunner().invoke(app, ["report", "uniform-sampling", "--mu", "1", "--n", "1000000"]).output.split())
    assert "Why ε = 0 at δ = 1e-05" in text and "(δ covers the outputs that reveal membership outright" in text
