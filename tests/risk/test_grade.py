"""Graded verdicts, guarantee readings and plausibility warnings (issue 15)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdpkit as fp
from fdpkit._numerics import norm_isf, norm_sf
from fdpkit._inputs import parse_fraction, plausibility_warnings
from fdpkit.risk.grade import (COLOURS, DEFINITIONS, ICONS, LABELS, REFERENCE_FPR, REFERENCE_PRIOR, grade,
                               grade_for_tpr)
from fdpkit.risk.reading import check_guarantee_fields, read_guarantee

CLOSED_FORM_RTOL = 1e-9

#: The issue's cases: pure eps from strong to none, and mu on the same scale.
EPS_CASES = [(0.1, "strong"), (1.0, "strong"), (2.0, "moderate"), (3.0, "weak"), (5.0, "weak"),
             (8.0, "no meaningful protection"), (10.0, "no meaningful protection")]
MU_CASES = [(0.1, 0), (0.25, 0), (0.5, 1), (1.0, 1), (1.5669, 2), (2.0, 2), (3.0, 3)]


@pytest.mark.parametrize("eps,label", EPS_CASES)
def test_pure_epsilon_grades(eps, label):
    g = read_guarantee("epsilon", epsilon=eps).grade
    assert g.label == label and g.level == LABELS.index(label)


@pytest.mark.parametrize("mu,level", MU_CASES)
def test_mu_grades_from_closed_form_tpr(mu, level):
    g = grade(fp.GaussianCurve(mu))
    tpr = float(norm_sf(norm_isf(REFERENCE_FPR) - mu))  # 1 - G_mu(alpha) = Phi(mu - isf(alpha))
    assert g.tpr == pytest.approx(tpr, rel=CLOSED_FORM_RTOL)
    assert g.level == level
    post = REFERENCE_PRIOR * tpr / ((1 - REFERENCE_PRIOR) * REFERENCE_FPR + REFERENCE_PRIOR * tpr)
    assert g.posterior == pytest.approx(post, rel=CLOSED_FORM_RTOL)


def test_eps_delta_worst_case_is_graded_and_noted():
    r = read_guarantee("epsilon_delta", epsilon=8.0, delta=1e-5)
    assert r.grade.level == 3 and r.failure_mode == "catastrophic"
    assert r.notes[0].startswith("This is the worst case over every mechanism")
    assert read_guarantee("epsilon", epsilon=1.0).notes[0].startswith("This is the worst case")
    assert not read_guarantee("mu", mu=1.0).notes[0].startswith("This is the worst case")


def test_scale_presentation_differs_per_level():
    assert len(set(COLOURS)) == len(set(ICONS)) == len(set(LABELS)) == len(DEFINITIONS) == 4
    for d in DEFINITIONS:
        assert "FPR 0.1%" in d and "1% prior" in d
    assert grade_for_tpr(0.0).level == 0 and grade_for_tpr(1.0).level == 3
    with pytest.raises(ValueError, match="tpr"):
        grade_for_tpr(1.5)


def test_optimistic_curve_refused():
    pl = fp.GaussianCurve(1.0).to_piecewise()
    upper = fp.PiecewiseLinearCurve(pl.alphas, pl.betas, bound="upper")
    with pytest.raises(ValueError, match="upper"):
        grade(upper)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 6.0), st.floats(0.0, 6.0))
def test_grade_is_monotone_in_mu(a, b):
    lo, hi = sorted((a, b))
    assert grade(fp.GaussianCurve(lo)).level <= grade(fp.GaussianCurve(hi)).level


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 12.0))
def test_grade_is_never_lenient_against_the_certified_tpr(eps):
    """The grade's TPR is the certified TPR itself: never below any attack's TPR."""
    c = fp.LaplaceCurve(eps)
    g = grade(c)
    assert g.tpr >= float(c.tpr(REFERENCE_FPR)) - 1e-15


@pytest.mark.parametrize("kind,kw,names", [
    ("mu", {"mu": 1.0, "epsilon": 1.0}, "epsilon"),
    ("mu", {"mu": 1.0, "delta": 1e-5}, "delta"),
    ("mu", {"mu": 1.0, "epsilon": 1.0, "delta": 1e-5}, "epsilon and delta"),
    ("epsilon", {"epsilon": 1.0, "mu": 1.0}, "mu"),
    ("epsilon", {"epsilon": 1.0, "delta": 1e-5}, "delta"),
    ("epsilon_delta", {"epsilon": 1.0, "delta": 1e-5, "mu": 2.0}, "mu"),
])
def test_contradictory_fields_are_named(kind, kw, names):
    with pytest.raises(ValueError, match=f"^{names} do(es)? not apply"):
        check_guarantee_fields(kind, **kw)


def test_missing_and_allowed_fields():
    check_guarantee_fields("epsilon", epsilon=1.0, delta=0.0)  # delta = 0 is pure
    check_guarantee_fields("epsilon_delta", epsilon=1.0)  # delta defaults to 1e-5
    with pytest.raises(ValueError, match="^mu is required"):
        check_guarantee_fields("mu")
    with pytest.raises(ValueError, match="^guarantee must be"):
        check_guarantee_fields("rho", mu=1.0)


def test_plausibility_warnings():
    assert "Did you mean 1%" in plausibility_warnings(prior=1.0)[0]
    assert "Did you mean ε" in plausibility_warnings(mu=12.0)[0]
    assert "no protection" in plausibility_warnings(epsilon=25.0)[0]
    assert "1/n" in plausibility_warnings(delta=1e-3, n=1000)[0]
    assert "is large" in plausibility_warnings(delta=0.5)[0]
    assert plausibility_warnings(mu=10.0, epsilon=20.0, delta=1e-3, prior=0.5) == []
    # infinite values: "e^ε ≈ 10^inf" and "far beyond any meaningful protection" before
    (w,) = plausibility_warnings(epsilon=math.inf)
    assert w.startswith("ε = inf gives no protection at all") and "10^" not in w
    (w,) = plausibility_warnings(mu=math.inf)
    assert w.startswith("μ = inf gives no protection at all") and "Did you mean" not in w
    assert "10^4.34e+307" in plausibility_warnings(epsilon=1e308)[0]  # finite: e^ε's size stays
    r = read_guarantee("mu", mu=11.0, prior=1.0)
    assert len(r.warnings) == 2 and r.grade.level == 3


@pytest.mark.parametrize("text,value", [("5%", 0.05), (" 0.5 % ", 0.005), ("1e-5", 1e-5), (0.25, 0.25), ("100%", 1.0)])
def test_parse_fraction(text, value):
    assert parse_fraction(text, "prior") == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("text", ["five", "5%%", "", "nan", "1,5"])
def test_parse_fraction_refuses_with_hint(text):
    with pytest.raises(ValueError, match=r"prior must be a number such as 0.05 \(or 5%\)"):
        parse_fraction(text, "prior")


def test_reading_numbers_match_the_risk_functions():
    r = read_guarantee("mu", mu=1.0, prior=0.01, fpr=1e-3)
    c = fp.GaussianCurve(1.0)
    assert r.attack_power == pytest.approx(float(c.tpr(1e-3)), rel=CLOSED_FORM_RTOL)
    assert r.posterior == pytest.approx(float(fp.posterior(c, 0.01, 1e-3)), rel=CLOSED_FORM_RTOL)
    d = r.to_dict()
    assert set(d["grade"]) >= {"level", "label", "definition"} and math.isinf(r.relative_risk)
    assert np.isfinite(d["attack_power"])


def test_zero_rho_reads_as_no_risk_like_zero_mu():
    """rho = 0 zCDP (and RDP with every epsilon 0) is the diagonal TPR = FPR, as mu = 0 is:
    relative risk 1 and no failure mode (it read as an unbounded, 'graceful' risk)."""
    from fdpkit.curves import RDPCurve, ZCDPCurve
    from fdpkit.risk import failure_mode, relative_risk
    from fdpkit.risk.reading import read_guarantee

    zero_rho, zero_mu = read_guarantee("zcdp", rho=0.0), read_guarantee("mu", mu=0.0)
    assert (zero_rho.relative_risk, zero_rho.failure_mode) == (zero_mu.relative_risk, zero_mu.failure_mode) == (1.0, "none")
    assert "(μ = 0 = √(2ρ) at ρ = 0)" in zero_rho.headline
    assert relative_risk(RDPCurve([2.0, 8.0], [0.0, 0.0])) == 1.0 and RDPCurve([2.0], [0.0]).tpr(1e-3) == 1e-3
    assert failure_mode(ZCDPCurve(1e-12)) == "graceful" and relative_risk(RDPCurve([2.0], [1e-9])) == float("inf")


@pytest.mark.parametrize("n", [0.5, 2.7, 0, 1e13])
def test_people_must_be_a_whole_count(n):
    """n (people in the data) is a count: 0.5 silently skipped the delta >= 1/n warning."""
    with pytest.raises(fp.ParameterError, match=r"^n ") as info:
        read_guarantee("epsilon_delta", epsilon=1.0, delta=0.01, n=n)
    assert info.value.parameter == "n"
    assert any("1/n" in w for w in read_guarantee("epsilon_delta", epsilon=1.0, delta=0.01, n=1000.0).warnings)


def test_plain_times_has_the_tables_digits():
    """The sentence's "N times its false-positive rate" is the table's "relative risk for FPR >=
    a" (TPR(a) / a): it read ceil's "721" beside the table's 720.3; now the same 4 digits, up."""
    from fdpkit.report.model import fmt

    for mu, a in [(1.567, 1e-6), (1.0, 1e-3), (3.0, 1e-6), (0.5, 0.1)]:
        r = read_guarantee("mu", mu=mu, fpr=a)
        table = fmt(r.relative_risk_at_fpr, up=True)
        times = r.plain_language[0].split(" times its")[0].rsplit("(", 1)[1]
        assert float(times.replace(",", "")) == float(table), (mu, a, times, table)
        assert float(times.replace(",", "")) >= r.attack_power / a  # an upper bound, rounded up
    assert "(720.3 times" in read_guarantee("mu", mu=1.567, fpr=1e-6).plain_language[0]


def test_plain_reading_keeps_small_rates_readable():
    # at FPR 1e-6 and prior 1e-4 the sentences read "wrongly flags 0.00% of non-members ...
    # at most 0.08% of members (721 times its false-positive rate)" and "starts 0.0% sure"
    from fdpkit.risk.reading import read_guarantee

    r = read_guarantee("mu", mu=1.567, fpr=1e-6, prior=1e-4)
    first, second = r.plain_language[0], r.plain_language[1]
    assert first.startswith("An attack that wrongly accuses 0.0001% of the people who are not in the data "
                            "(1 in 1,000,000) catches at most 0.073% of those who are (720.3 times")
    assert "false-positive rate of 0.0001% or more" in first and "0.00%" not in first
    assert second.startswith("An attacker who starts 0.01% sure") and "at most 6.8% sure" in second
    assert r.attack_power <= 0.073 / 100 and r.posterior <= 0.068
    # the usual reference reads as before
    usual = read_guarantee("mu", mu=1.567)
    assert "wrongly accuses 0.10% of the people who are not in the data (1 in 1,000) catches at most 6.39%" \
        in usual.plain_language[0]
    assert "starts 1% sure" in usual.plain_language[1]


def test_fitted_mu_range_outside_gives_the_runs_bound():
    """A report's mu holds for FPR and FNR >= alpha_min only (beyond: TPR <= 1 - G_mu(FPR) + tau):
    read at FPR 1e-12 it gave mu-GDP's TPR 2.3e-08, below the run's certified 8.4e-07."""
    from fdpkit.risk.reading import read_guarantee

    rng = dict(mu_fpr_min=1e-10, mu_tau=8.159e-07)
    plain, carried = read_guarantee("mu", mu=1.567, fpr=1e-12), read_guarantee("mu", mu=1.567, fpr=1e-12, **rng)
    c = fp.GaussianCurve(1.567)
    assert carried.range["outside"] and carried.warnings[0] == carried.range["note"]
    assert "FPR and FNR ≥ 1e-10" in carried.range["note"] and "τ = 8.159e-07" in carried.range["note"]
    assert carried.attack_power == pytest.approx(float(c.tpr(1e-12)) + 8.159e-07, rel=1e-12)
    assert carried.attack_power > 30 * plain.attack_power and carried.posterior > plain.posterior
    assert carried.posterior == pytest.approx(0.01 * carried.attack_power / (0.99e-12 + 0.01 * carried.attack_power))
    assert carried.relative_risk_at_fpr >= carried.attack_power / 1e-12 > plain.relative_risk_at_fpr
    assert "at most 0.000084% of those who are (838,800 times" in carried.plain_language[0]
    # the FNR side: mu-GDP's TPR above 1 - 1e-10 (here 1 - 6.6e-12): the bound caps at 1
    fnr = read_guarantee("mu", mu=1.567, fpr=0.9999999, **rng)
    assert fnr.range["outside"] and fnr.attack_power == 1.0 and "FNR below 1e-10" in fnr.range["note"]
    # inside the range the reading at this FPR is mu's (the run-wide figures are the run's bound's:
    # tests/risk/test_range_bound.py)
    for a in (1e-10, 1e-3, 0.5):
        inside, usual = read_guarantee("mu", mu=1.567, fpr=a, **rng).to_dict(), read_guarantee("mu", mu=1.567, fpr=a).to_dict()
        assert inside.pop("range") == {"fpr_min": 1e-10, "tau": 8.159e-07, "outside": False, "note": "",
                                       "failure": "blatant disclosure not ruled out (probability ≤ τ = 8.159e-07): "
                                                  "catastrophic by the bound; μ-GDP alone: graceful"}
        assert usual.pop("range") is None and not inside["warnings"]
        for key in ("attack_power", "posterior", "relative_risk_at_fpr", "grade", "headline"):
            assert inside[key] == usual[key]
        assert inside["plain_language"][:2] == usual["plain_language"][:2]


@pytest.mark.parametrize("kwargs,name", [
    (dict(mu_fpr_min=1e-10), "mu_tau"), (dict(mu_tau=1e-6), "mu_fpr_min"),
    (dict(mu_fpr_min=0.0, mu_tau=1e-6), "mu_fpr_min"), (dict(mu_fpr_min=0.5, mu_tau=1e-6), "mu_fpr_min"),
    (dict(mu_fpr_min=1e-10, mu_tau=-1e-6), "mu_tau"), (dict(mu_fpr_min=1e-10, mu_tau=float("nan")), "mu_tau"),
])
def test_fitted_mu_range_refuses_bad_values(kwargs, name):
    from fdpkit.risk.reading import read_guarantee

    with pytest.raises(fp.ParameterError) as info:
        read_guarantee("mu", mu=1.0, **kwargs)
    assert info.value.parameter == name
    with pytest.raises(fp.ParameterError, match="mu-GDP guarantee only"):
        read_guarantee("epsilon", epsilon=1.0, mu_fpr_min=1e-10, mu_tau=1e-6)
