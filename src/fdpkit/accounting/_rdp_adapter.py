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

The integer orders are computed here with dp_accounting 0.6.0's own formula and operations
(``_compute_rdp_poisson_subsampled_gaussian`` of ``rdp_privacy_accountant.py``, the binomial
sum log A_alpha = log sum_i C(alpha, i) q^i (1 - q)^(alpha - i) e^((i^2 - i) / (2 sigma^2)),
accumulated in log space term by term), so that the numbers are the same floats without
importing dp_accounting (about half a second: its package imports ``scipy.signal``);
``FDPKIT_NATIVE_STEPS=0`` asks dp_accounting's ``RdpAccountant`` instead, and
``tests/renyi`` checks that both give identical arrays.
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


def _log_add(logx: float, logy: float) -> float:
    """log(e^x + e^y), as dp_accounting's ``_log_add``."""
    a, b = min(logx, logy), max(logx, logy)
    if a == -np.inf:
        return b
    return math.log1p(math.exp(a - b)) + b


def _log_a_int(q: float, sigma: float, alpha: int) -> float:
    """log A_alpha for an integer order and 0 < q < 1 (dp_accounting's ``_compute_log_a_int``)."""
    log_a = -np.inf
    log1mq = math.log1p(-q)
    for i in range(alpha + 1):
        log_comb = special.gammaln(alpha + 1) - special.gammaln(i + 1) - special.gammaln(alpha - i + 1)
        log_coef_i = log_comb + i * math.log(q) + (alpha - i) * log1mq
        log_a = _log_add(log_a, log_coef_i + (i * i - i) / (2 * (sigma**2)))
    return log_a


def _native_integer_orders_rdp(sample_rate: float, noise_multiplier: float, ks: np.ndarray) -> np.ndarray:
    """dp_accounting's RDP of one Poisson-subsampled Gaussian step at the integer orders
    ``ks`` (``RdpAccountant`` composing one ``PoissonSampledDpEvent``), step for step."""
    q, sigma = sample_rate, noise_multiplier
    if not 0 <= q <= 1:
        raise ValueError(f"Sampling rate must be in [0, 1]. Found {q}.")
    if sigma < 0:
        raise ValueError(f"Noise multiplier must be non-negative: {sigma}")
    orders = np.array([int(k) for k in ks])

    def one(alpha):
        if q == 0:
            return 0
        if np.isinf(alpha) or sigma == 0:
            return np.inf
        if q == 1.0:
            return alpha / (2 * sigma**2)
        return _log_a_int(q, sigma, int(alpha)) / (alpha - 1)

    rdp = np.zeros_like(orders, dtype=np.float64)
    rdp += 1 * np.array([one(alpha) for alpha in orders])
    return np.where(np.isnan(rdp), np.inf, rdp)


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
