"""Mechanism value objects, closed-form routing, report object, calibration, bad input."""

import json
import math

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.mechanisms import (
    ApproxDP, Composed, Gaussian, Laplace, PureDP, RandomizedResponse, Repeated, Subsampled,
    dpsgd, mechanism_from_dict, mechanism_from_json,
)

ALL = [
    Gaussian(2.0), Gaussian(1.0, sensitivity=2.0), Laplace(0.5), RandomizedResponse(1.0),
    PureDP(0.5), ApproxDP(1.0, 1e-6), Subsampled(Gaussian(1.0), 0.1),
    Composed([Gaussian(1.0), Laplace(2.0)]), Repeated(Gaussian(3.0), 9), dpsgd(1.0, 0.01, 10),
]


@pytest.mark.parametrize("mech", ALL, ids=lambda m: m.kind)
def test_dict_and_json_round_trip(mech):
    assert mechanism_from_dict(mech.to_dict()) == mech
    assert mechanism_from_json(json.dumps(mech.to_dict())) == mech


def test_dpsgd_spec_shorthand():
    assert mechanism_from_dict({"kind": "dpsgd", "noise_multiplier": 1.0, "sample_rate": 0.01, "steps": 10}) == dpsgd(1.0, 0.01, 10)


def test_closed_forms_where_exact():
    assert fp.tradeoff_curve(Repeated(Gaussian(3.0), 9)).mu == pytest.approx(1.0)
    assert fp.tradeoff_curve(Composed([Gaussian(1.0), Gaussian(1.0)])).mu == pytest.approx(math.sqrt(2))
    assert isinstance(fp.tradeoff_curve(Laplace(0.5)), fp.LaplaceCurve)
    assert fp.tradeoff_curve(ApproxDP(1.0, 1e-6)).delta == 1e-6
    assert fp.tradeoff_curve(Subsampled(Gaussian(1.0), 1.0)).mu == 1.0
    assert fp.account(Subsampled(Gaussian(1.0), 0.1), discretization=1e-3).method == "PLD"


def test_numeric_laplace_matches_closed_form():
    num = fp.tradeoff_curve(Composed([Laplace(1.0)]), discretization=1e-4)
    exact = fp.LaplaceCurve(1.0)
    a = np.linspace(0.001, 0.999, 500)
    assert np.all(num.tpr(a) >= exact.tpr(a) - 1e-12)
    np.testing.assert_allclose(num.tpr(a), exact.tpr(a), rtol=2e-3)


def test_report_object_is_json_ready():
    r = fp.privacy_report(dpsgd(2.0, 0.05, 200), discretization=2e-3)
    d = r.to_dict()
    text = json.dumps(d)
    assert d["schema_version"] == "1.0"
    assert set(d) >= {"guarantee", "epsilon_at_delta", "tpr_at_fpr", "advantage", "failure_mode",
                      "posterior", "warnings", "provenance", "curve", "mechanism"}
    assert d["provenance"]["dp_accounting_version"] == "0.6.0"
    assert d["provenance"]["discretization"] == 2e-3
    assert any("Coarse discretization" in w for w in d["warnings"])
    assert "NaN" not in text
    for row in d["tpr_at_fpr"]:
        assert row["tpr"] >= row["fpr"]


def test_report_for_catastrophic_mechanism():
    r = fp.privacy_report(ApproxDP(1.0, 1e-5))
    assert r.mu == math.inf and r.failure_mode == "catastrophic"
    d = r.to_dict()
    assert d["guarantee"]["mu"] == "inf"
    assert any("Blatant disclosure" in w for w in r.warnings)
    json.dumps(d)


def test_calibrate_round_trip_and_safe_side():
    r = fp.calibrate_dpsgd(mu=1.0, sample_rate=0.05, steps=200, discretization=1e-3)
    assert r.unknown == "noise_multiplier" and r.converged
    assert r.achieved_mu <= 1.0 and r.achieved_mu > 0.99
    back = fp.calibrate_dpsgd(noise_multiplier=r.value, sample_rate=0.05, steps=200, discretization=1e-3)
    assert back.value == pytest.approx(r.achieved_mu)
    q = fp.calibrate_dpsgd(mu=1.0, noise_multiplier=r.value, steps=200, discretization=1e-3)
    assert q.achieved_mu <= 1.0 and q.value == pytest.approx(0.05, rel=2e-3)
    t = fp.calibrate_dpsgd(mu=1.0, noise_multiplier=r.value, sample_rate=0.05, discretization=1e-3)
    assert t.achieved_mu <= 1.0 and abs(t.value - 200) <= 2 and isinstance(t.value, int)


@pytest.mark.parametrize("call, match", [
    (lambda: Gaussian(-1.0), r"sigma must be > 0, got -1.0"),
    (lambda: Gaussian(float("nan")), r"sigma must not be NaN"),
    (lambda: Subsampled(Gaussian(1.0), 1.5), r"sample_rate must be in \(0, 1\], got 1.5"),
    # subnormal rates: dp_accounting's loss inverse raised "a must be greater than b" (no name)
    (lambda: Subsampled(Gaussian(1.0), 1e-320), r"sample_rate must be at least 2.23e-308 .*got 1e-320"),
    (lambda: fp.dpsgd(1.0, 5e-324, 100), r"sample_rate must be at least 2.23e-308 .*got 5e-324"),
    (lambda: Repeated(Gaussian(1.0), 2.5), r"times must be a positive integer, got 2.5"),
    (lambda: Composed([]), r"parts must be a non-empty list"),
    (lambda: ApproxDP(1.0, 2.0), r"delta must be in \[0, 1\], got 2.0"),
    (lambda: mechanism_from_dict({"kind": "nope"}), r"mechanism kind must be one of"),
    (lambda: mechanism_from_dict({"kind": "gaussian", "sigma": 1, "bogus": 2}), r"unknown field\(s\) for 'gaussian': bogus"),
    (lambda: mechanism_from_json("{"), r"not valid JSON"),
    (lambda: fp.account(Subsampled(PureDP(1.0), 0.1)), r"subsampling is supported for Gaussian and Laplace"),
    # a composition inside was refused as "mechanism must be an fdpkit mechanism, got Composed"
    (lambda: fp.privacy_report(Subsampled(Composed([Gaussian(1.0), Gaussian(1.0)]), 0.1)),
     r"subsampling is supported for Gaussian and Laplace inner mechanisms, got Composed; Gaussian releases"),
    (lambda: fp.privacy_report(Subsampled(Repeated(Gaussian(1.0), 2), 0.1)), r"got Repeated"),
    (lambda: fp.account(Gaussian(1.0), discretization=0.0), r"discretization must be in"),
    (lambda: fp.privacy_report(Gaussian(1.0), deltas=[2.0]), r"deltas must be in \(0, 1\)"),
    (lambda: fp.calibrate_dpsgd(mu=1.0, sample_rate=0.1), r"exactly one of noise_multiplier, sample_rate \(or batch_size\), steps \(or epochs\) must be left out"),
    (lambda: fp.calibrate_dpsgd(mu=-1.0, sample_rate=0.1, steps=10), r"mu must be a positive finite number"),
    (lambda: fp.calibrate_dpsgd(noise_multiplier=1.0, sample_rate=2.0, steps=10), r"sample_rate must be in \(0, 1\], got 2.0"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("noise, rate, steps, mu_max", [(1e12, 0.01, 1000, 1e-8), (1.0, 1e-14, 100, 1e-7),
                                                        (1e10, 0.01, 1000, 2e-8)])
def test_a_run_whose_loss_sits_at_zero_gets_no_atom_at_fpr_0(noise, rate, steps, mu_max):
    """Nearly all the composed loss on the grid point 0: the mirror image of the zero-loss
    segment's end put the null mass the PMF leaves out at FPR 0 (f(0) = 1 - 3e-11), an atom
    the profile does not imply, and mu read 0.04 (sigma 1e12) and 0.048 (q 1e-14) where
    sigma 1e10 read 8e-9 (1.25e-8 since the tilts' cap at the window's top is applied: the
    saddle point solver had returned an unevaluated guess beyond its cap, leaving tilts
    uncapped). The profile is unchanged; the curve is the one it implies."""
    from fdpkit.accounting._resolution import choose_discretization

    m = fp.dpsgd(noise, rate, steps)
    r = fp.privacy_report(m)
    assert r.curve.f0 == 1.0 and 0.0 < r.mu < mu_max
    # the curve still implies the accountant's privacy profile, never a smaller delta
    acc = fp.account(m, discretization=choose_discretization(m)[0])
    for eps in (0.0, 1e-9, 1e-7, 1e-5):
        assert float(r.curve.delta_for_epsilon(eps)) >= float(acc.delta_for_epsilon(eps)) * (1 - 1e-12)


@pytest.mark.parametrize("noise", [1e16, 1e50, 1e100, 1e308])
@pytest.mark.parametrize("kw", [dict(sample_rate=0.01), dict(sample_rate=0.01, relation="replace-one"),
                                dict(batch_size=100, dataset_size=10000, sampling="fixed-size", relation="zero-out")])
def test_huge_noise_gets_no_infinity_mass_from_a_grid_ending_at_0(noise, kw):
    """Noise of 1e16 and more: the step's top loss (about q / sigma^2) rounded to 0 or below,
    the single step's grid ended at 0 and the round-off envelope of delta(0) (2.6e-14)
    became a mass at +inf: after 1000 steps delta(eps) = 2.6e-11 for every eps, f(0) =
    1 - 2.6e-11 and mu 0.036 where sigma 1e12 reads 5e-9 (and at sigma 1e200 and more the
    variance underflowed to 0 and the default 1e-4 grid read 2e-5). The grid's top is now at
    least d; the curve still implies the accountant's profile, never a smaller delta."""
    from fdpkit.accounting._resolution import choose_discretization

    m = fp.dpsgd(noise_multiplier=noise, steps=1000, **kw)
    d = choose_discretization(m)[0]
    assert d == 1e-8
    r = fp.privacy_report(m)
    assert r.curve.f0 == 1.0 and 0.0 < r.mu < 1e-8
    acc = fp.account(m, discretization=d)
    for direction in acc._profile.directions:  # noqa: SLF001
        assert direction.m_inf < 1e-30
    for eps in (0.0, 1e-9, 1e-7, 1e-5, 1.0):
        assert float(r.curve.delta_for_epsilon(eps)) >= float(acc.delta_for_epsilon(eps)) * (1 - 1e-12)


def test_a_non_private_part_makes_the_composition_non_private():
    """ApproxDP(0, 1) (dp_event's NonPrivate, and GaussianDpEvent(0)) inside a composition
    raised OverflowError in the cost estimate; the composition is perfectly distinguishing:
    f = 0 exactly, mu and epsilon infinite, a blatant disclosure."""
    from dp_accounting import dp_event as E

    for m in (Composed([Gaussian(1.0), ApproxDP(0.0, 1.0)]), Repeated(ApproxDP(0.0, 1.0), 2),
              fp.from_dp_event(E.ComposedDpEvent([E.GaussianDpEvent(1.0), E.NonPrivateDpEvent()]))):
        r = fp.privacy_report(m)
        assert r.curve.bound == "exact" and float(r.curve.beta(0.0)) == 0.0
        assert r.mu == float("inf") and r.epsilons[0][1] == float("inf") and r.failure_mode == "catastrophic"
