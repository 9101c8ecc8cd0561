"""An independent exact reference (issue 29, items 1, 3 and 5): T-fold randomized response.

The privacy loss of randomized response at epsilon is +-epsilon, so the T-fold composition's
loss is epsilon (2K - T) with K ~ Bin(T, p) under the alternative and K ~ Bin(T, 1 - p) under
the null (p = e^eps / (1 + e^eps)). Its trade-off curve is exactly the piecewise-linear
curve through alpha_k = Q[K >= k], beta_k = P[K < k] (Neyman-Pearson), computed here in
50-digit mpmath. fdpkit's numeric curve (tilted composition of dp_accounting's pure-DP PLD)
must be below it at every vertex, in the deep tail too (FPR down to 1e-200), and its mu
must be at least the exact mu on the same FPR range and within 1e-6 of it. At T = 400 the
exact mu (19.6) is beyond what a range of FPR >= 1e-15 can certify (2 z(1e-15) = 15.9):
the diagonal crossing is at FPR 4e-23, and fdpkit states alpha_min = 1e-23 (before issue 29
its curve had beta = 0 up to the diagonal and mu read inf)."""

import math

import mpmath as mp
import numpy as np
import pytest

from fdpkit.accounting import account
from fdpkit.fit import fit_gdp, fit_gdp_adapted
from fdpkit.mechanisms import RandomizedResponse, Repeated

DISC = 1e-3
#: fdpkit's mu at most this far (relative) above the exact mu on the same range
MU_RTOL = 1e-6


def _exact(eps: float, steps: int):
    """Exact vertices (alpha_k, beta_k, TPR_k) as mpmath numbers, k = 0 .. T + 1."""
    with mp.workdps(50):
        p = mp.e ** eps / (1 + mp.e ** eps)
        pk = [mp.binomial(steps, k) * p ** k * (1 - p) ** (steps - k) for k in range(steps + 1)]
        qk = [mp.binomial(steps, k) * (1 - p) ** k * p ** (steps - k) for k in range(steps + 1)]
        alpha = [mp.fsum(qk[k:]) for k in range(steps + 2)]
        beta = [mp.fsum(pk[:k]) for k in range(steps + 2)]
        tpr = [mp.fsum(pk[k:]) for k in range(steps + 2)]
    return alpha, beta, tpr


def _isf(x) -> float:
    with mp.workdps(50):
        return float(-mp.sqrt(2) * mp.erfinv(2 * x - 1))


@pytest.mark.parametrize("eps, steps", [(1.0, 50), (1.0, 400)])
def test_curve_below_the_exact_curve_at_every_vertex(eps, steps):
    curve = account(Repeated(RandomizedResponse(eps), steps), discretization=DISC).curve
    alpha, beta, tpr = _exact(eps, steps)
    # the steep side (alpha <= beta): beta is read where it is small, TPR where beta is not;
    # the other side is its mirror image (both curves are symmetric), and its alpha near 1
    # cannot be compared in float
    a = np.array([float(x) for x in alpha])
    sel = (a > 1e-200) & np.array([x <= y for x, y in zip(alpha, beta)])
    b_ref = np.array([float(x) for x in beta])[sel]
    t_ref = np.array([float(x) for x in tpr])[sel]
    ours_b, ours_t = curve.beta(a[sel]), curve.tpr(a[sel])
    small = b_ref < 0.5
    assert np.all(ours_b[small] <= b_ref[small] * (1 + 1e-12))  # sound, FNR down to 1e-200
    assert np.all(ours_t[~small] >= t_ref[~small] * (1 - 1e-12))
    # and tight: within 1e-3 where the FNR is above 1e-250
    tight = small & (b_ref > 1e-250)
    assert np.all(ours_b[tight] >= b_ref[tight] * (1 - 1e-3))


@pytest.mark.parametrize("eps, steps, alpha_min", [(1.0, 50, 1e-10), (1.0, 400, 1e-23)])
def test_mu_against_the_exact_mu_on_the_stated_range(eps, steps, alpha_min):
    curve = account(Repeated(RandomizedResponse(eps), steps), discretization=DISC).curve
    fit = fit_gdp_adapted(curve)
    assert fit.alpha_min == alpha_min
    alpha, beta, _ = _exact(eps, steps)
    exact = max(_isf(x) + _isf(y) for x, y in zip(alpha, beta)
                if x >= alpha_min and y >= alpha_min and 0 < x < 1)
    assert exact <= fit.mu <= exact * (1 + MU_RTOL)
    if steps == 400:
        assert exact > 2 * _isf(1e-15) and math.isinf(fit_gdp(curve, alpha_min=1e-15).mu)
