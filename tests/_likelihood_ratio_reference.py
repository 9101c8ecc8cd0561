r"""A tight rigorous lower-bound reference for Poisson-subsampled Gaussian DP-SGD
(add/remove): the quantized likelihood-ratio test, composed with certified round-off
(issue 29: "sigma 0.8 has no tight rigorous lower bound").

The test
--------
Under one dataset every step releases X ~ Q = N(0, sigma^2) in the direction of the
target's gradient (clip 1), under the other X ~ P = (1 - q) N(0, sigma^2) + q N(1, sigma^2).
The per-step likelihood ratio log dP/dQ (x) = log(1 - q + q e^{(2x - 1) / (2 sigma^2)}) is
increasing in x; the test thresholds

    S = sum_t j(x_t),   j(x) = floor(min(log dP/dQ (x_t), c) / h),

the log-likelihood-ratio statistic quantized to a grid of width h and clipped at c. Any
threshold test of the pair (Q^T, P^T) is a test, so its (FPR, FNR) lies on or above the true
trade-off curve, whatever h and c are: every certified curve must lie below it, so

    mu >= z(alpha) + z(beta),   delta(eps) >= TPR - e^eps alpha,
    eps(delta) >= log((TPR - delta) / alpha)

at every threshold (Dong et al. 2022, Def. 2.1 and Prop. 2.12). Quantized finely enough (h
a small fraction of the per-step loss's spread) S is nearly the optimal statistic and the
bound is tight; unlike a PLD's optimistic rounding, the quantization error does not add up
over the T steps (both hypotheses are read through the same S).

Certified evaluation
--------------------
alpha(k) = Q[S >= k] is bounded from above and TPR(k) = P[S >= k] from below. The per-step
masses of j are normal-CDF differences (relative error ~1e-16; Q's are raised and P's
lowered by a relative 1e-13). The T-fold sums are built by repeated squaring, each kept in a
window: under Q the mass below the window moves up to its lowest bin and the mass above it
to +inf (S only grows), under P the mass below is dropped and the mass above moves down to
its top bin (S only shrinks), so the bounds hold at every threshold. Round-off is carried
as an L1 bound eta on the distance of the computed masses from such bounding masses: a
direct convolution of k non-negative terms adds a relative (k + 1) u of the mass (u the unit
round-off), an FFT convolution of length N at most sqrt(N) 8 u log2(N) ||a||_2 ||b||_2 (the
2-norm bound on FFT convolution error, generously), errors of the inputs carry through as
eta_a |b|_1 + eta_b |a|_1 + eta_a eta_b, and clipping negative results at 0 and moving mass
never increase it. alpha is read as the tail sum + eta and TPR as the tail sum - eta (the
sums rounded outward by a relative 1e-10). The result is a rigorous bound up to the accuracy
of scipy's normal CDF.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sfft
from scipy import special, stats

_U = float(np.finfo(float).eps) / 2.0
#: Unit round-off of numpy's longdouble (x87 extended precision on x86-64; float64 elsewhere).
_UL = float(np.finfo(np.longdouble).eps) / 2.0
#: Relative rounding of the per-step masses (Q up, P down).
_STEP_RTOL = 1e-13
#: Relative outward rounding of the tail sums.
_SUM_RTOL = 1e-10
#: Largest len(a) * len(b) convolved directly (no FFT round-off to add to every entry).
_DIRECT_WORK = 3e7


def _log_ratio_inverse(v: np.ndarray, sigma: float, q: float) -> np.ndarray:
    """x with log(1 - q + q e^{(2x - 1) / (2 sigma^2)}) = v (v > log(1 - q))."""
    return sigma**2 * np.log(np.expm1(v) / q + 1.0) + 0.5


def step_masses(sigma: float, q: float, h: float, c: float) -> tuple[int, np.ndarray, np.ndarray]:
    """(lowest value j_0 of j, Q's masses of j_0, j_0 + 1, ..., P's), Q rounded up, P down."""
    j0 = math.floor(math.log1p(-q) / h)
    j1 = math.floor(c / h)
    # x at the bin edges j h (j0 < j <= j1); the lowest bin starts at -inf, the top one
    # (everything clipped at c) ends at +inf
    x = _log_ratio_inverse(np.arange(j0 + 1, j1 + 1) * h, sigma, q)
    edges = np.concatenate([[-np.inf], x, [np.inf]])

    def masses(shift: float) -> np.ndarray:
        z = (edges - shift) / sigma
        lower = np.diff(special.ndtr(z))  # accurate where z < 0
        upper = -np.diff(special.ndtr(-z))  # accurate where z > 0
        return np.where(z[1:] <= 0.0, lower, upper)

    mq = masses(0.0)
    mp = (1.0 - q) * mq + q * masses(1.0)
    return j0, np.maximum(mq, 0.0) * (1.0 + _STEP_RTOL), np.maximum(mp, 0.0) * (1.0 - _STEP_RTOL)


class _Dist:
    """Computed masses of an integer statistic on bins lo, lo + 1, ..., a mass at +inf, and
    ``eta``, a bound on the L1 distance of the computed masses from masses that bound the
    true ones (from above under Q, from below under P)."""

    def __init__(self, lo: int, p: np.ndarray, inf: float = 0.0, eta: float = 0.0) -> None:
        self.lo, self.p, self.inf, self.eta = lo, p, inf, eta


def _conv(a: _Dist, b: _Dist, upper: bool, window: tuple[int, int]) -> _Dist:
    n = len(a.p) + len(b.p) - 1
    k = min(len(a.p), len(b.p))
    sa, sb = float(a.p.sum()), float(b.p.sum())
    # the inputs' errors, carried through the (L1-bounded) convolution
    eta = a.eta * sb + b.eta * sa + a.eta * b.eta
    if len(a.p) * len(b.p) <= _DIRECT_WORK:
        # direct sums of at most k non-negative products in extended precision (unit
        # round-off _UL): relative error at most (k + 1) _UL, then rounded to float64
        out = np.convolve(a.p.astype(np.longdouble), b.p.astype(np.longdouble))
        eta += (2.0 * (k + 1) * _UL + _U) * sa * sb
        out = out.astype(float)
    else:
        # the FFT's round-off: at most 8 u log2(N) ||a||_2 ||b||_2 in the 2-norm over the N
        # outputs (a generous form of the standard bound), so sqrt(N) times that in L1
        size = sfft.next_fast_len(n, real=True)
        out = sfft.irfft(sfft.rfft(a.p, size) * sfft.rfft(b.p, size), size)[:n]
        eta += (math.sqrt(size) * 8.0 * _U * math.log2(size)
                * float(np.linalg.norm(a.p) * np.linalg.norm(b.p)))
    np.maximum(out, 0.0, out=out)  # the true masses are >= 0: clipping only moves toward them
    lo = a.lo + b.lo
    # +inf mass: the event that either summand is +inf (at most the sum of the two masses)
    inf = min(1.0, a.inf + b.inf) if upper else 0.0
    w_lo, w_hi = window
    i0, i1 = max(0, w_lo - lo), min(n, w_hi - lo + 1)
    if i0 >= i1:
        i0, i1 = 0, n
    below, above = float(out[:i0].sum()), float(out[i1:].sum())
    kept = out[i0:i1].copy()
    if upper:
        kept[0] += below
        inf += above
    else:
        kept[-1] += above
    # the moves are L1-nonexpansive; the sums' own rounding: a relative n u of the mass
    return _Dist(lo + i0, kept, inf, eta + 2.0 * n * _U * (below + above))


def _power(step: _Dist, steps: int, upper: bool, window_for) -> _Dist:
    result: _Dist | None = None
    base, m, k = step, 1, steps
    done = 0
    while k:
        if k & 1:
            result = base if result is None else _conv(result, base, upper, window_for(done + m))
            done += m
        k >>= 1
        if k:
            base = _conv(base, base, upper, window_for(2 * m))
            m *= 2
    assert result is not None
    return result


def tests_of_the_pair(sigma: float, q: float, steps: int, *, h: float | None = None,
                      c: float | None = None, width: float = 20.0) -> tuple[np.ndarray, np.ndarray]:
    """(alpha upper bounds, TPR lower bounds) of the threshold tests S >= k, over k.

    ``h`` defaults to a fifth of the per-step log-likelihood ratio's spread, ``c`` to the
    loss that a step exceeds with Q-probability 1e-7 / steps, ``width`` is the
    window's half width in standard deviations of the sum (plus room for two clipped steps)."""
    # spread of the per-step loss: q sqrt(e^{1/sigma^2} - 1) for small q
    spread = q * math.sqrt(math.expm1(min(1.0 / sigma**2, 700.0))) if q < 0.1 else 1.0 / sigma
    h = spread / 5.0 if h is None else h
    if c is None:
        x = sigma * stats.norm.isf(1e-7 / steps)
        c = math.log1p(q * math.expm1((2 * x - 1) / (2 * sigma**2)))
    j0, mq, mp = step_masses(sigma, q, h, c)
    vals = np.arange(j0, j0 + len(mq))
    out = []
    for upper, m in ((True, mq), (False, mp)):
        mean = float(np.dot(vals, m))
        sd = math.sqrt(max(float(np.dot((vals - mean) ** 2, m)), 1.0))
        jump = vals[-1] - j0

        def window(n: int, mean: float = mean, sd: float = sd, jump: int = jump) -> tuple[int, int]:
            half = width * sd * math.sqrt(n)
            return (math.floor(n * mean - half), math.ceil(n * mean + half + 2 * jump))

        d = _power(_Dist(j0, m), steps, upper, window)
        out.append(d)
    dq, dp = out
    lo = min(dq.lo, dp.lo)
    hi = max(dq.lo + len(dq.p), dp.lo + len(dp.p))
    tail_q = np.zeros(hi - lo + 1)
    tail_p = np.zeros(hi - lo + 1)
    tail_q[dq.lo - lo:dq.lo - lo + len(dq.p)] = dq.p
    tail_p[dp.lo - lo:dp.lo - lo + len(dp.p)] = dp.p
    # mass below Q's window was moved into its lowest bin: thresholds below it read alpha 1
    alpha = np.minimum(np.cumsum(tail_q[::-1])[::-1] * (1 + _SUM_RTOL) + dq.eta + dq.inf, 1.0)
    alpha[:dq.lo - lo] = 1.0
    tpr = np.cumsum(tail_p[::-1])[::-1] * (1 - _SUM_RTOL) - dp.eta
    return alpha, tpr


def lower_bounds(sigma: float, q: float, steps: int, *, deltas: tuple[float, ...] = (1e-5,),
                 alpha_min: float = 1e-10, **kw) -> tuple[float, tuple[float, ...]]:
    """(mu lower bound on the range FPR, FNR >= alpha_min; eps(delta) lower bounds)."""
    alpha, tpr = tests_of_the_pair(sigma, q, steps, **kw)
    tpr = np.maximum(tpr, 0.0)
    beta = 1.0 - tpr
    ok = (alpha >= alpha_min) & (beta >= alpha_min) & (alpha < 1)
    mu = float(np.max(stats.norm.isf(alpha[ok]) + stats.norm.isf(beta[ok]))) if ok.any() else 0.0
    eps = []
    for d in deltas:
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.log((tpr - d) / alpha)
        e = e[np.isfinite(e)]
        eps.append(max(float(e.max()) if e.size else 0.0, 0.0))
    return max(mu, 0.0), tuple(eps)
