"""Numeric curves built from their symmetric half, and the factorised cumulants.

A PLD's certified curve stores its alpha <= beta half and builds the mirror half only when
something reads past the diagonal. Every reading the report and the sweep take (mu,
regret, epsilon, TPR, advantage, failure mode) must be the one the whole curve gives, to
the last digit (the advantage may only be larger: it is read from a superset of the
vertices), and reading it must not build the mirror half.
"""

import math

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.accounting import _pld_adapter, account, tilted
from fdpkit.accounting._cumulants import _Shape
from fdpkit.accounting.pld import _poisson_step
from fdpkit.curves.hull import _mirror_half
from fdpkit.curves.piecewise import PiecewiseLinearCurve
from fdpkit.fit import fit_gdp
from fdpkit.risk import advantage
from fdpkit.mechanisms import Composed, Gaussian, Laplace, Repeated, Subsampled
from fdpkit.risk.disclosure import failure_mode

MECHANISMS = [
    fp.dpsgd(2.0, 0.01, 400),
    fp.dpsgd(2.0, 0.01, 2000),
    fp.dpsgd(1.0, 0.5, 10),
    fp.dpsgd(5.0, 0.001, 100),
    fp.dpsgd(0.5, 0.9, 5),
    fp.dpsgd(3.0, 0.3, 50, relation="replace-one"),
    Repeated(Subsampled(Laplace(1.0), 0.1), 20),
    Composed((Repeated(Subsampled(Gaussian(1.0), 0.05), 100), Laplace(0.5))),
]


def _whole(curve: PiecewiseLinearCurve) -> PiecewiseLinearCurve:
    """The same curve built eagerly, as before the half was stored."""
    a, t, b = curve.__dict__["_raw_half"]
    ma, mt, mb = _mirror_half(a, t, b)
    return PiecewiseLinearCurve._from_hull_vertices(
        np.concatenate([a, ma]), np.concatenate([t, mt]), np.concatenate([b, mb]), "lower",
        symmetric=True)


def _readings(c: PiecewiseLinearCurve, alphas: np.ndarray, ds: np.ndarray) -> dict:
    fit = fit_gdp(c, alpha_min=1e-10)
    return {"f0": c.f0, "tpr": c.tpr(alphas), "beta": c.beta(alphas), "half": c._half_breakpoints(),
            "alpha_at_d": c._alpha_at_d(ds), "mu": fit.mu, "regret": fit.regret,
            "epsilon": c.epsilon_for_delta(1e-5), "mode": failure_mode(c)}


@pytest.mark.parametrize("mech", MECHANISMS, ids=[f"{type(m).__name__}{i}" for i, m in enumerate(MECHANISMS)])
@pytest.mark.parametrize("disc", [1e-4, 1e-2])
def test_half_stored_curve_reads_exactly_as_the_whole(mech, disc):
    c = account(mech, discretization=disc).curve
    assert "_raw_half" in c.__dict__, "a PLD curve stores its half"
    whole = _whole(c)
    half_a = c.__dict__["_half"][0]
    alphas = np.concatenate([[0.0, 1e-300, 1e-12, 1e-10, 1e-5, 1e-3], half_a[:40], half_a[-3:]])
    alphas = np.sort(alphas[alphas <= half_a[-1]])
    ends = c._half_breakpoints()
    ds = np.concatenate([[-1.0, 0.0, 1.0], np.linspace(float(np.min(ends[2] - ends[0])), 1.0, 60)])
    lazy = _readings(c, alphas, ds)
    adv = advantage(c)
    mirrored = "_raw_half" not in c.__dict__
    ref = _readings(whole, alphas, ds)
    for key, value in lazy.items():
        if key == "half":
            assert all(np.array_equal(x, y) for x, y in zip(value, ref[key])), key
        elif isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, ref[key], err_msg=key)
        elif isinstance(value, float) and math.isinf(value):
            assert math.isinf(ref[key]), key
        else:
            assert value == ref[key], key
    assert adv >= advantage(whole) and adv - advantage(whole) <= 1e-15
    # the mirror half, once built, is the eager one; readings do not change with it
    np.testing.assert_array_equal(c.alphas, whole.alphas)
    np.testing.assert_array_equal(c.tprs, whole.tprs)
    np.testing.assert_array_equal(c.betas, whole.betas)
    assert advantage(c) == adv and fit_gdp(c, alpha_min=1e-10).mu == lazy["mu"]
    if math.isfinite(lazy["mu"]) and c.__dict__["_half"][0][-1] > 1e-10:
        assert not mirrored, "mu, regret, epsilon, TPR and advantage read the half only"


def test_report_and_sweep_leave_the_mirror_half_unbuilt(monkeypatch):
    built = []
    mirror = PiecewiseLinearCurve._mirror
    monkeypatch.setattr(PiecewiseLinearCurve, "_mirror", lambda self: built.append(1) or mirror(self))
    fp.run_sweep([2.0], [0.01], [400, 2000], executor="inprocess")
    assert not built
    r = fp.privacy_report(fp.dpsgd(2.0, 0.01, 2000))
    assert not built
    assert "_raw_half" in r.curve.__dict__
    r.to_dict()  # samples past the diagonal: the mirror half is built on demand
    assert "_raw_half" not in r.curve.__dict__ and len(r.curve.alphas) > len(r.curve.__dict__["_half"][0])


def _shape(sigma: float, q: float, d: float) -> _Shape:
    a = _pld_adapter.pmf_arrays(_poisson_step(sigma, q, "add-remove", d))[0]
    return tilted._factor(a, 1).shape


def _direct(shape: _Shape, theta: float) -> tuple[float, float, float]:
    """Lambda, mean and variance with one exponential per mass (the reference)."""
    e = shape.losses * theta + shape.logp
    top = float(e.max())
    w = np.exp(np.maximum(e - top, -600.0))
    s = float(w.sum())
    mean = float(w @ shape.losses) / s
    return top + math.log(s), mean, float(w @ (shape.losses - mean) ** 2) / s


@pytest.mark.parametrize("sigma,q,d", [(2.0, 0.01, 1e-4), (1.0, 0.5, 1e-3), (0.8, 0.1, 1e-4)])
def test_factorised_cumulants_match_one_exponential_per_mass(sigma, q, d):
    shape = _shape(sigma, q, d)
    assert len(shape._block_losses) >= 16  # the factorised path is the one tested
    for theta in [-0.5, 0.0, 0.3, 2.0, 10.0, 40.0, 1e3]:
        got, ref = shape.lam(theta), _direct(shape, theta)
        assert got[0] == pytest.approx(ref[0], rel=1e-13, abs=1e-13)
        assert got[1] == pytest.approx(ref[1], rel=1e-9, abs=1e-15)
        assert got[2] == pytest.approx(ref[2], rel=1e-7)


def test_threads_only_for_wide_compositions():
    narrow = _pld_adapter.pmf_arrays(_poisson_step(2.0, 0.01, "add-remove", 1e-4))
    wide = _pld_adapter.pmf_arrays(_poisson_step(9.4, 0.32768, "add-remove", 1e-4))
    assert not tilted.threads_pay([(narrow[0], 2000)], [(narrow[1], 2000)])
    assert tilted.threads_pay([(wide[0], 2000)], [(wide[1], 2000)])
