"""The one place that reads dp_accounting's RDP accountant state (``RdpAccountant._rdp``:
the composed Rényi epsilons at its orders; the library has no public getter for them).

dp_accounting computes integer orders of the Poisson-subsampled Gaussian exactly (a
finite binomial sum; Mironov, Talwar & Zhang 2019, Sec. 3.3) but its fractional orders
from a truncated series that can be far too pessimistic at large sampling rates (at
q = 0.33, sigma = 9.4: 16.0 instead of 2.21 at order 1.81, T = 2000). fdpkit therefore
asks it for integer orders only and bounds any order t in between by the log-convexity of
t -> (t - 1) eps(t) = log E[(p/q)^t] (Hölder): for k <= t <= k + 1,

    (t - 1) eps(t) <= (k + 1 - t)(k - 1) eps(k) + (t - k) k eps(k + 1),

and for 1 < t < 2, where dp_accounting's series is loosest and the chord from (1, 0) would
only give eps(2), fdpkit integrates the moment E_0[((1 - q) + q e^((2x - 1)/(2 sigma^2)))^t]
numerically (adaptive quadrature; the quadrature's error estimate, times a safety factor,
is added before the logarithm), in the direction dp_accounting uses (the dominating one,
Mironov, Talwar & Zhang 2019, Thm. 5), and keeps the smaller of that and eps(2).

The integer orders are computed here from the binomial expansion of Mironov, Talwar &
Zhang 2019 (Sec. 3.3; :func:`_log_moment_bound`), rounded outward, without importing
dp_accounting (about half a second: its package imports ``scipy.signal``);
``FDPKIT_NATIVE_STEPS=0`` asks dp_accounting's ``RdpAccountant`` instead, and
``tests/renyi`` checks that the two agree to within the stated rounding slack.
"""

from __future__ import annotations

import logging
import math
import os

import numpy as np
from typing import TYPE_CHECKING

from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdplib
    from scipy import integrate, special
else:  # loaded on first use (start-up time, issue 30)
    dp_event = lazy_module("dp_accounting.dp_event")
    rdplib = lazy_module("dp_accounting.rdp.rdp_privacy_accountant")
    integrate = lazy_module("scipy.integrate")
    special = lazy_module("scipy.special")

#: Factor applied to quad's error estimate before it is added to the moment (safe side).
_QUAD_SAFETY = 10.0


def _fractional_rdp(sample_rate: float, sigma: float, t: float) -> float:
    """eps(t) for 1 < t < 2 by quadrature of the moment, rounded up (module docs)."""
    q, s2 = sample_rate, sigma * sigma

    def integrand(x: float) -> float:
        log_ratio = (2.0 * x - 1.0) / (2.0 * s2)
        mix = np.logaddexp(np.log1p(-q) if q < 1 else -np.inf, np.log(q) + log_ratio)
        return float(np.exp(t * mix - x * x / (2.0 * s2)) / np.sqrt(2.0 * np.pi * s2))

    lim = 40.0 * sigma + 10.0
    val, err = integrate.quad(integrand, -lim, lim, limit=400, epsabs=1e-14, epsrel=1e-12, points=[0.5])
    moment = val + _QUAD_SAFETY * err + 1e-13
    return float(np.log(moment) / (t - 1.0)) if moment > 0 else np.inf


def _log_moment_bound(q: float, sigma: float, alpha: int) -> float:
    """An upper bound on log A_alpha, A_alpha = E_{z ~ N(0, sigma^2)}[((1 - q) + q e^{(2z - 1)
    / (2 sigma^2)})^alpha], for an integer order ``alpha`` >= 2 and 0 < q < 1 (Mironov, Talwar
    & Zhang 2019, Sec. 3.3): expanding the power binomially, each term's Gaussian moment is
    E[e^{i (2z - 1) / (2 sigma^2)}] = e^{(i^2 - i) / (2 sigma^2)}, so

        A_alpha = sum_{i=0}^{alpha} C(alpha, i) (1 - q)^{alpha - i} q^i e^{(i^2 - i) / (2 sigma^2)},

    summed in log space from its largest term. log C(alpha, i) is the running sum of
    log((alpha - j + 1) / j), j <= i (0 at i = 0: no cancellation of two large gammaln
    values where q is small and the first terms carry A). Rounding (u the unit round-off;
    numpy's vectorised log and exp are within 4 ulp = 8 u on every SIMD path, so the slack
    counts 8 u per such call, not one CPU's rounding): term i's exponent is within
    (i + 16) u M_i of its value (M_i: the sum of its parts' magnitudes), so A is within the
    weighted mean of those (weights: the terms' shares of A) plus 16 u of the computed sum,
    relatively (exp and the exactly rounded sum); the scalar logarithm and the final addition
    add 4 u of their magnitudes. The result is raised by all of that, so it bounds the exact value
    from above (dp_accounting's ``RdpAccountant`` gives the same value to within this slack;
    ``tests/renyi`` compares them)."""
    u = float(np.finfo(float).eps) / 2.0
    j = np.arange(1.0, alpha + 1.0)
    steps = np.log((alpha - j + 1.0) / j)
    log_comb = np.concatenate([[0.0], np.cumsum(steps)])
    comb_mag = np.concatenate([[0.0], np.cumsum(np.abs(steps))])
    i = np.arange(alpha + 1, dtype=float)
    log_q, log_1mq = math.log(q), math.log1p(-q)
    moment = (i * i - i) / (2.0 * sigma * sigma)
    terms = log_comb + i * log_q + (alpha - i) * log_1mq + moment
    top = float(np.max(terms))
    if not math.isfinite(top):
        return math.inf
    scaled = np.exp(terms - top)
    total = math.fsum(scaled.tolist())
    magnitude = (i + 16.0) * (comb_mag + i * abs(log_q) + (alpha - i) * abs(log_1mq) + moment + abs(top))
    relative = u * float(np.dot(scaled, magnitude)) / total * (1.0 + 1e-6) + 16.0 * u
    log_total = math.log(total)
    return top + log_total + relative + 4.0 * u * (abs(top) + abs(log_total))


def _native_integer_orders_rdp(sample_rate: float, noise_multiplier: float, ks: np.ndarray) -> np.ndarray:
    """Upper bounds on the RDP eps(alpha) = log A_alpha / (alpha - 1) of one Poisson-subsampled
    Gaussian step at the integer orders ``ks`` (:func:`_log_moment_bound`; q = 0: 0, q = 1: the
    Gaussian's alpha / (2 sigma^2), sigma = 0: inf), computed without dp_accounting (its import
    costs about half a second: it loads ``scipy.signal``)."""
    q, sigma = float(sample_rate), float(noise_multiplier)
    if not math.isfinite(sigma * sigma):
        # sigma^2 beyond the floats (sigma > 1.3e154): every order's value is below the
        # smallest float, and a 0 would be an optimistic reading; the caller leaves the
        # Rényi rows out and says why (as dp_accounting's own OverflowError did)
        raise OverflowError(f"noise_multiplier={sigma:g}: sigma^2 is beyond the floating-point range")
    u = float(np.finfo(float).eps) / 2.0
    out = np.empty(len(ks))
    for n, k in enumerate(np.asarray(ks, dtype=float).tolist()):
        if q == 0.0:
            out[n] = 0.0
        elif not math.isfinite(k) or sigma == 0.0:
            out[n] = math.inf
        elif q == 1.0:
            out[n] = k / (2.0 * sigma * sigma) * (1.0 + 4.0 * u)
        else:
            out[n] = _log_moment_bound(q, sigma, int(k)) / (k - 1.0) * (1.0 + 2.0 * u)
    return np.where(np.isnan(out), np.inf, out)


def _integer_orders_rdp(sample_rate: float, noise_multiplier: float, ks: np.ndarray) -> np.ndarray:
    if os.environ.get("FDPKIT_NATIVE_STEPS", "").strip() != "0":
        return _native_integer_orders_rdp(sample_rate, noise_multiplier, ks)
    return _dp_accounting_integer_orders_rdp(sample_rate, noise_multiplier, ks)


def _dp_accounting_integer_orders_rdp(sample_rate: float, noise_multiplier: float, ks: np.ndarray) -> np.ndarray:
    acc = rdplib.RdpAccountant(orders=[int(k) for k in ks])
    event = dp_event.PoissonSampledDpEvent(sample_rate, dp_event.GaussianDpEvent(noise_multiplier))
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)  # non-finite orders are reported as inf below
    try:
        acc.compose(event)
    finally:
        absl.setLevel(level)
    out = np.asarray(acc._rdp, dtype=float).copy()
    return np.where(np.isnan(out), np.inf, out)


def poisson_gaussian_rdp(sample_rate: float, noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """Upper bounds on eps(t) of one Poisson-subsampled Gaussian step at ``orders`` (module
    docs): exact at integers, log-convex interpolation in between; ``inf`` where
    dp_accounting returns nothing finite (no constraint)."""
    t = np.asarray(orders, dtype=float)
    k = np.maximum(np.floor(t), 2.0)
    ks = np.unique(np.concatenate([k, k + 1.0]))
    vals = dict(zip(ks.tolist(), _integer_orders_rdp(sample_rate, noise_multiplier, ks).tolist()))
    e_k = np.array([vals[x] for x in k.tolist()])
    e_k1 = np.array([vals[x + 1.0] for x in k.tolist()])
    with np.errstate(invalid="ignore"):
        interp = ((k + 1.0 - t) * (k - 1.0) * e_k + (t - k) * k * e_k1) / (t - 1.0)
    out = np.where(t < 2.0, e_k, np.where(t == k, e_k, interp))
    for i in np.flatnonzero(t < 2.0):
        out[i] = min(out[i], _fractional_rdp(sample_rate, noise_multiplier, float(t[i])))
    return np.where(np.isnan(out), np.inf, out)
