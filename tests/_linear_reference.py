"""A PLD-free lower-bound reference for DP-SGD (issue 29, item 5): the test that thresholds
the sum of the released noisy coordinates.

Every step releases N(g_t, sigma^2) in the direction of the target's gradient (clip 1). With
K ~ Bin(T, q) the number of steps that use the target (Poisson, or fixed-size batches drawn
afresh each step: the sampling does not depend on the data), S = sum_t x_t is N(a K, T sigma^2)
under one dataset and N(b K, T sigma^2) under the other: (a, b) = (1, 0) for add/remove and
zero-out, (1, -1) for replace-one (the gradient +1 against -1). The threshold test on S is
one test of the pair, so its trade-off points (alpha(c), beta(c)) lie on or above the true
curve: every certified curve must lie below them, hence

    mu >= z(alpha) + z(beta)   (alpha, beta >= the fitting range's alpha_min),
    delta(eps) >= 1 - beta - e^eps alpha,   eps(delta) >= log((1 - beta - delta) / alpha).

At large sigma the sum is nearly the likelihood-ratio statistic and the bound is tight; at
small sigma it is loose (the optimal test weighs large coordinates more)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

SHIFTS = {"add-remove": (1.0, 0.0), "zero-out": (1.0, 0.0), "replace-one": (1.0, -1.0)}


def linear_test_points(sigma: float, q: float, steps: int, relation: str = "add-remove",
                       n: int = 4001) -> tuple[np.ndarray, np.ndarray]:
    """(alpha, beta) of the threshold tests on S over a grid of thresholds."""
    a, b = SHIFTS[relation]
    m, sd = q * steps, math.sqrt(steps * q * (1 - q)) if q < 1 else 0.0
    k = np.arange(max(0, int(m - 14 * sd - 40)), min(steps, int(m + 14 * sd + 40)) + 1)
    w = stats.binom.pmf(k, steps, q)
    s = sigma * math.sqrt(steps)
    lo, hi = (b * k.min() - 40 * s), (a * k.max() + 40 * s)
    c = np.linspace(lo, hi, n)[:, None]
    alpha = np.sum(w * stats.norm.sf((c - b * k) / s), axis=1)
    beta = np.sum(w * stats.norm.cdf((c - a * k) / s), axis=1)
    return alpha, beta


def lower_bounds(sigma: float, q: float, steps: int, relation: str = "add-remove", *,
                 delta: float = 1e-5, alpha_min: float = 1e-10) -> tuple[float, float]:
    """(mu lower bound on the range FPR, FNR >= alpha_min; epsilon(delta) lower bound)."""
    alpha, beta = linear_test_points(sigma, q, steps, relation)
    ok = (alpha >= alpha_min) & (beta >= alpha_min)
    mu = float(np.max(stats.norm.isf(alpha[ok]) + stats.norm.isf(beta[ok]))) if ok.any() else 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = np.log((1 - beta - delta) / alpha)
    e = e[np.isfinite(e)]
    return max(mu, 0.0), max(float(e.max()) if e.size else 0.0, 0.0)
