"""The report's mu-based TPR column includes tau below alpha_min; large-epsilon Laplace reports."""

import math

import pytest
from scipy.stats import norm

import fdpkit as fp

#: FPRs below, at and above the default alpha_min = 1e-10.
FPRS = (1e-13, 1e-12, 1e-11, 1e-10, 1e-6, 1e-3)


@pytest.mark.parametrize("mechanism", [fp.dpsgd(9.4, 0.32768, 200), fp.dpsgd(2.0, 0.05, 100)])
def test_tpr_under_mu_is_never_below_the_certified_tpr(mechanism):
    r = fp.privacy_report(mechanism, fprs=FPRS, discretization=1e-3)
    for a, tpr, tpr_mu in r.tprs:
        assert tpr_mu >= tpr, (a, tpr, tpr_mu)
        if a < r.alpha_min:
            assert tpr_mu == pytest.approx(min(1.0, fp.GaussianCurve(r.mu).tpr(a) + r.tau), rel=1e-12)


@pytest.mark.parametrize("epsilon, mu", [(37.0, 11.4883), (60.0, 14.8993)])
def test_large_epsilon_laplace_has_a_finite_mu(epsilon, mu):
    # mu = 2 isf(e^{-eps/2} / 2), the symmetric point of the middle regime
    exact = 2.0 * norm.isf(math.exp(-epsilon / 2) / 2)
    r = fp.privacy_report(fp.Laplace(scale=1.0 / epsilon))
    assert math.isfinite(r.mu)
    assert r.mu >= exact * (1 - 1e-12)
    assert r.mu == pytest.approx(mu, abs=1e-4)
