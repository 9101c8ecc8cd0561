"""Cumulant generating functions of composed privacy-loss PMFs and Chernoff bounds
(helpers of :mod:`fdpkit.accounting.tilted`, Step 2 and the window/tail bounds).

For factors j (masses p_j on losses l, composed T_j times),
K(theta) = sum_j T_j ln sum_l p_j(l) e^{theta l}; Chernoff: under the theta-tilted measure,
P[Y >= x] <= exp(K(theta + lambda) - K(theta) - lambda x) and
P[Y <= x] <= exp(K(theta - lambda) - K(theta) + lambda x) for every lambda > 0. Terms below
e^-700 of the largest are raised to it, which only raises K: every bound stays valid.
"""

from __future__ import annotations

import math

import numpy as np

#: Weights (relative to the largest, 1) below this are left out of the tilted mean and
#: variance (see :meth:`_Cumulants.lam`); e^-700 ~ 1e-304 is far below it.
_NEGLIGIBLE_WEIGHT = 1e-290


class _Cumulants:
    """K(theta) = sum_j T_j Lambda_j(theta) and its first two derivatives (memoised)."""

    def __init__(self, factors: list, d: float) -> None:
        self.f = factors
        self.d = d
        self.losses = [(f.lo + np.arange(len(f.probs))) * d for f in factors]
        with np.errstate(divide="ignore"):
            self.logp = [np.log(f.probs) for f in factors]
        self._memo: dict[tuple[int, float], tuple[float, float, float]] = {}

    def lam(self, j: int, theta: float) -> tuple[float, float, float]:
        """(Lambda_j, mean, variance) of factor j tilted by theta."""
        key = (j, theta)
        if key in self._memo:
            return self._memo[key]
        l = self.losses[j]
        e = l * theta
        e += self.logp[j]
        top = float(np.max(e))
        # terms below e^-700 are raised to it: an upper bound on Lambda (what the Chernoff
        # bounds need), and no subnormal arithmetic
        e -= top
        np.maximum(e, -700.0, out=e)
        w = np.exp(e, out=e)
        s = float(np.sum(w))
        # the mean and variance only place tilts and start searches (no bound reads them):
        # the terms raised to e^-700 are left out of them, as their products with the
        # losses can be subnormal numbers (tens of times slower on x86) and change neither
        # by more than 1e-290 in absolute terms. einsum, not np.dot: a BLAS dot of a few
        # thousand terms may wake a thread pool, which costs far more than the sum itself
        # (tens of milliseconds on a busy machine, per call)
        if float(w.min()) < _NEGLIGIBLE_WEIGHT:
            keep = w >= _NEGLIGIBLE_WEIGHT
            w, l = w[keep], l[keep]
        mean = float(np.einsum("i,i->", w, l)) / s
        dev = l - mean
        dev *= dev
        var = max(float(np.einsum("i,i->", w, dev)) / s, 0.0)
        out = (top + math.log(s), mean, var)
        self._memo[key] = out
        return out

    def __call__(self, theta: float) -> tuple[float, float, float]:
        k = k1 = k2 = 0.0
        for j, f in enumerate(self.f):
            lam, mean, var = self.lam(j, theta)
            k += f.times * lam
            k1 += f.times * mean
            k2 += f.times * var
        return k, k1, k2


def _min_log_scan(fun, lam0: float) -> float:
    """min over lambda > 0 of a unimodal ``fun``: doubling/halving steps from lambda0 while
    it decreases, then golden-section refinement on log lambda. Any lambda gives a valid
    Chernoff bound, so only tightness depends on finding the minimum."""
    def f(k: float) -> float:
        v = fun(lam0 * 2.0 ** k)
        return v if math.isfinite(v) else math.inf

    best_k, best = 0.0, f(0.0)
    for direction in (1.0, -1.0):
        k = best_k
        while -40 <= k <= 20:
            v = f(k + direction)
            if v < best:
                best_k, best, k = k + direction, v, k + direction
            else:
                break
        if best_k != 0.0:
            break
    if not math.isfinite(best):
        return best
    lo, hi = best_k - 1.0, best_k + 1.0
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(4):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = f(b)
    return min(best, fa, fb)


def _chernoff_x(cum: _Cumulants, theta: float, kt: float, sd: float, log_eps: float,
                upper: bool) -> float:
    """A loss x with P_theta[Y > x] (upper) or P_theta[Y < x] (lower) <= e^{log_eps}:
    x = min over lambda > 0 of (K(theta +- lambda) - K(theta) - log_eps) / lambda (signs
    reversed for the lower side)."""
    sign = 1.0 if upper else -1.0

    def x_of(lam: float) -> float:
        v = (cum(theta + sign * lam)[0] - kt - log_eps) / lam
        return v if math.isfinite(v) else math.inf

    return sign * _min_log_scan(x_of, math.sqrt(2.0 * -log_eps) / max(sd, 1e-12))


def _chernoff_mass(cum: _Cumulants, theta: float, kt: float, sd: float, x: float,
                   upper: bool) -> float:
    """Bound min_lambda exp(K(theta +- lambda) - K(theta) -+ lambda x) on P_theta[Y > x]
    (upper) or P_theta[Y < x] (lower)."""
    sign = 1.0 if upper else -1.0
    k1 = cum(theta)[1]
    if sign * (x - k1) <= 0:
        return 1.0

    def log_bound(lam: float) -> float:
        v = cum(theta + sign * lam)[0] - kt - sign * lam * x
        return v if math.isfinite(v) else math.inf

    best = _min_log_scan(log_bound, max(sign * (x - k1) / max(sd * sd, 1e-300), 1e-12))
    return math.exp(min(best, 0.0))


