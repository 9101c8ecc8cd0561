r"""Composition of privacy-loss PMFs with FFT round-off bounded by construction.

dp_accounting composes a discretised privacy-loss distribution (PLD) T times by one FFT,
a T-th power of every Fourier coefficient and one inverse FFT. Two things go wrong at
large T (issue 11): (i) its pessimistic connect-the-dots PMF can carry a total mass above
1 (negative round-off masses are clipped to 0: 1 + 4e-8 for a subsampled Gaussian), and
the T-th power turns that into (1 + 4e-8)^T (1.04 at T = 10^6), so that the certified
curve collapses; (ii) the power multiplies the FFT's relative round-off by T, leaving
absolute errors of up to 1e-9 per grid point: tail masses below that are noise, which is
optimistic where it is negative and very pessimistic where it is positive. This module
replaces that step. It takes the single-step PMFs dp_accounting builds (read by
``_pld_adapter``) and returns, for each adjacency direction, a PMF whose privacy profile
upper-bounds that of the exact T-fold composition of those single-step PMFs.

Notation
--------
A factor j is a PMF on the loss grid l = k d (k integer, d the discretization): masses
p_j(l) of the privacy loss Y under the alternative ("upper") distribution P_j, plus
m_j = P_j[Y = +inf]; the null masses are e^{-l} p_j(l) (Gomez et al. Thm. A.7). It is
composed T_j times; P = (x)_j P_j^{T_j}, with finite part p = *_j p_j^{*T_j} (``*`` is
convolution) and P[Y = +inf] = 1 - prod_j (1 - m_j)^{T_j}.

Step 1: a probability distribution (repair)
-------------------------------------------
If m_j + sum_l p_j(l) > 1, the masses at the lowest losses are removed until the total is
1 (the last one in part). The curve of a PMF has vertices alpha_k = sum_{l > l_k}
e^{-l} p(l), TPR_k = m + sum_{l > l_k} p(l) (Gomez et al. Thm. A.10); removing mass from
the lowest losses leaves every vertex with TPR <= 1 unchanged and replaces the rest by the
line TPR = 1, which lies above them. So the repaired pair's trade-off curve is a lower
bound of the given one in beta (TPR never lower): it is at least as pessimistic, and is a
pair of (sub-)probability distributions, for which composition is the tensor product of
Dong et al. Thm. 3.2 / Lemma C.3 (monotone in each factor). Nothing else is changed.

Step 2: exponential tilting (Eqs. 1-2)
--------------------------------------
For a tilt theta, with Lambda_j(theta) = ln sum_l p_j(l) e^{theta l} and
K(theta) = sum_j T_j Lambda_j(theta) (the cumulant generating function of the composed
finite loss), the tilted factors x_j(l) = p_j(l) e^{theta l - Lambda_j(theta)} are
probability vectors, and convolution commutes with tilting:

    p(L) = e^{K(theta) - theta L} (*_j x_j^{*T_j})(L).                         (1)

An FFT computes c = *_j x_j^{*T_j} with an absolute error per grid point of at most
eps_theta (Step 3); by (1) the error on p(L) is at most

    E_theta(L) = eps_theta e^{K(theta) - theta L},                             (2)

which for theta > 0 decays with L like the Chernoff bound on the upper tail (Chernoff:
P[Y >= L] <= e^{K(theta) - theta L}). Near the saddle point L = K'(theta) the relative
error is eps_theta times a polynomial factor; for a loss with variance s^2 = K''(theta)
it grows like exp(s^2 (theta - theta')^2 / 2) away from it, so a tilt keeps it within a
factor R over |theta' - theta| <= sqrt(2 ln R) / s. The first tilt is placed so that the
(a-priori estimated) relative error at theta' = -1/2 is at most REL_BODY: there
x ~ sqrt(p q) weighs both hypotheses alike, and the losses near 0 decide TPR near 1 and
the curve's diagonal crossing. Further tilts keep it below REL_TAIL between them, until
the null tail beyond the last one's range, exp(K(theta) - (1 + theta) L), is below
ALPHA_FLOOR. Each grid point takes the
tightest of the tilts' intervals (all are valid).

Step 3: the round-off bound (Eqs. 3-6)
--------------------------------------
Let N be the FFT length, u the unit round-off, X_j = DFT(x_j) and X^_j its computed
value. For the FFT, ||X^_j - X_j||_2 <= eta_N ||X_j||_2 = eta_N sqrt(N) ||x_j||_2 =: G_j with
eta_N = c_F u (ceil(log2 N) + 2) (Higham 2002, Thm. 24.2: c_F = 6.7 for radix 2 with
accurate twiddles; FFT_LEVEL_ERROR = 10 leaves room for pocketfft's mixed radix and the
real-input packing; ``tests/accounting/test_accounting_roundoff.py`` checks the bound
against extended-precision recomputations). With m_jk an upper bound on both |X_jk| and
|X^_jk| (|X_jk| <= sum x_j), telescoping the product gives

    |prod_j X^_jk^{T_j} - prod_j X_jk^{T_j}| <= sum_j |X^_jk - X_jk| W_jk,
    W_jk = T_j prod_i m_ik^{T_i} / m_jk,                                       (3)

so by Cauchy-Schwarz the sum over all N coefficients is at most sum_j G_j ||W_j||_2. The
powers are computed by repeated squaring and the factors multiplied: a complex product is
accurate to sqrt(5) u < 4 u (Brent, Percival and Zimmermann 2007), and the relative error
of z^T computed so is at most (1 + 4u)^{T-1} - 1 (a squaring doubles the error exponent),
so with M = sum_j T_j + J and r = (1 + 4u)^M - 1

    |Y^_k - prod_j X^_jk^{T_j}| <= e_k = |Y^_k| r / (1 - r).                     (4)

Only coefficients that matter are powered: with M_j = max_k m_jk and thresholds thr_j
such that thr_j^{T_j} prod_{i != j} M_i^{T_i} = e^F (F = LOG_SPECTRUM_FLOOR = -700), every
k with m_jk <= thr_j for some j has prod_i m_ik^{T_i} <= e^F (up to a counted rounding
slack); its computed value is set to 0, an error of at most e^F that is added to (4),
and its W_jk <= T_j e^F / min(G_j, sum x_j) enters ||W_j||_2 as such. (At T = 2000 only
the few hundred lowest frequencies of 1.5e5 remain, and fewer at larger T.)
The inverse transform maps a spectrum error of l1-norm S to at most S / N per grid point,
and adds its own eta_N ||y^||_2 / (1 - eta_N). Hence, per grid point,

    |y^ - circ(c)| <= eps_theta = (sum_j G_j ||W_j||_2 + sum_k e_k) / N
                                  + eta_N ||y^||_2 / (1 - eta_N).                (5)

The circular convolution circ(c) exceeds the linear one c inside the window by the
tilted mass that wraps around, which is at most the Chernoff bound A_theta on the tilted
mass outside the window (ALIAS_MASS; c <= circ(c) as all terms are >= 0). Computing x_j
rounds each entry by a relative rho_j (the exponent theta l - Lambda + ln p is accurate to
3 u times its terms' magnitudes), so the convolution of the exact tilted inputs lies
within the factors prod_j (1 -+ rho_j)^{T_j} of that of the computed ones, and the
factor e^{K - theta L} of (1) is computed to a relative zeta_L. Altogether, per point L,

    p(L) <= e^{K - theta L} (1 + zeta_L) (y^_L + eps_theta) prod_j (1 + rho_j)^{T_j},
    p(L) >= e^{K - theta L} (1 - zeta_L) (y^_L - eps_theta - A_theta)_+ prod_j (1 - rho_j)^{T_j}.  (6)

Step 4: one dominating PMF (Eq. 7)
----------------------------------
The upper tail U(L) = P[Y >= L] (including +inf) is bounded two ways: from above by the
upper bounds of (6) summed from the top, m + C + sum_{L' >= L} p_up(L') (C: Chernoff bound
on the finite mass above the window, moved to +inf), and by the complement
1 - sum_{L' < L} p_low(L') (mass below the window is simply not subtracted). Sequential
sums are rounded outward by n u. With U_up the smaller of the two (non-increasing by
construction: rounding is monotone, so sequential sums of non-negative terms, their
products with positive constants and the minima and maxima taken all are), the output
PMF is

    p_out(L) = U_up(L) - U_up(L + d),   infinity mass m + C,   for L >= 0.     (7)

(Step 4b, :mod:`fdpkit.accounting._tail_l2`: where the round-off decides, U_up is also
bounded by each pass's tail sum with its round-off taken in l2 (Cauchy-Schwarz), Eq. (8).
Losses below 0 enter only through the complement; they are left out of the output: no
delta(eps) with eps >= 0, and no vertex of the curve's steep half, reads them. Except
Step 5, :mod:`fdpkit.accounting._lower_cdf`: where P[Y < L] is tiny (mu >~ 16) the masses
near 0 are written as differences of the lower bound 1 - U_up, summed from the small end,
and P[Y < 0] is kept as one mass at loss -d, so the curve's beta keeps its digits there.)

Every privacy-profile value is monotone in U: by Abel summation
delta(eps) = sum_L (1 - e^{eps - L})_+ p(L) = sum_L U(L) (w(L) - w(L - d)) with
w(L) = (1 - e^{eps - L})_+ non-decreasing. So p_out's delta(eps) is at least the exact
composition's for every eps >= 0, its epsilon(delta) is at least the exact one, and the
symmetric trade-off curve built from its non-negative losses (``accounting.pld_curve``) is a
lower bound of the true one. Its total mass is at most 1 (no collapse), and its tail
error is relative, so that mu at T = 10^6 stays within a few percent of the round-off-free
value at the same discretization.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fdpkit.accounting import _allocator
from fdpkit.accounting._cumulants import _chernoff_mass, _chernoff_x, _Cumulants, _Shape
from fdpkit.accounting._lower_cdf import small_head
from fdpkit.accounting._repair import _mass_excess, repair  # noqa: F401  (Step 1; importable from here)
from fdpkit.accounting._tail_l2 import L2_MIN_TAIL_RATIO, tighten_tails
from fdpkit.accounting._fftpass import _fft_pass, _input_rounding
from fdpkit.accounting._pld_adapter import PmfArrays
from fdpkit.accounting._tilt_placement import (  # noqa: F401  (Step 2; its constants stay importable from here)
    ALPHA_FLOOR, DELTA_FLOOR, MAX_SPAN_FACTOR, MAX_TILTS, REL_BODY, REL_TAIL, THETA_START, _saddle, _tilts)

#: Tilted mass (per tilt, each side) allowed to wrap around the FFT window.
ALIAS_MASS = 1e-20
#: Untilted finite mass above the window; moved to +inf.
UPPER_TAIL_MASS = 1e-25
#: Untilted mass below the window (left out; only raises the bounds).
LOWER_TAIL_MASS = 1e-18
#: ... and this many more added where the achieved bound is loose (Step 2).
REFINE_PASSES = 2
#: Points of the passes' outputs kept for Step 4b (32 MB), which reads them instead of
#: computing the passes again (the same values: bit-identical).
KEPT_PASS_POINTS = 1 << 22

@dataclass(frozen=True)
class _Factor:
    lo: int            # grid index of probs[0]
    probs: np.ndarray  # finite masses, first and last > 0
    inf: float
    times: int
    shape: _Shape | None = None  # what its cumulants need but ``times`` (shared by a sweep over T)


def _factor(a: PmfArrays, times: int) -> _Factor:
    """The repaired factor of ``a`` composed ``times`` times. The repair and the cumulants'
    arrays depend on ``a`` only, so they are kept on ``a`` (immutable arrays) and shared
    by every composition of it."""
    cached = a.__dict__.get("_tilted_factor")
    if cached is None:
        r = repair(a)
        nz = np.flatnonzero(r.probs > 0)
        lo0 = int(round(r.losses[0] / r.discretization))
        if nz.size == 0:
            lo, probs = lo0, np.zeros(1)
        else:
            lo, probs = lo0 + int(nz[0]), r.probs[nz[0]:nz[-1] + 1].copy()
        probs.flags.writeable = False
        cached = (lo, probs, r.infinity_mass, _Shape(lo, probs, r.discretization))
        object.__setattr__(a, "_tilted_factor", cached)  # a frozen dataclass: a memo only
    lo, probs, inf, shape = cached
    return _Factor(lo, probs, inf, times, shape)


#: Composed loss standard deviation, in grid points, from which the two adjacency
#: directions are composed in two threads. Below it a composition is mostly small numpy
#: calls (cumulants, short FFTs) that hold the GIL, and two threads wait on each other:
#: on 2 cores, DP-SGD sigma 2, q 0.01, T 2000 (sd 2,400 points) took 11 ms alone and 17 ms
#: in threads; sigma 9.4, q 0.33, T 2000 (sd 15,600 points, long FFTs) 48 ms alone, 32 ms
#: in threads.
THREAD_MIN_SD_POINTS = 5000.0


def threads_pay(*directions: list[tuple[PmfArrays, int]]) -> bool:
    """Whether composing the directions (each [(single-step PMF, times)]) in threads pays:
    the composed loss's standard deviation at theta = 0 (a cumulant every composition
    evaluates first, memoised) reaches :data:`THREAD_MIN_SD_POINTS` grid points."""
    widest = 0.0
    for parts in directions:
        factors = [_factor(a, int(t)) for a, t in parts]
        var = sum(f.times * f.shape.lam(0.0)[2] for f in factors)
        widest = max(widest, math.sqrt(var) / float(parts[0][0].discretization))
    return widest >= THREAD_MIN_SD_POINTS


def compose(parts: list[tuple[PmfArrays, int]], *, dtype=None) -> PmfArrays:
    """The dominating PMF (7) of the composition of ``parts`` (single-step PMF, times).

    All parts must share one discretization. ``dtype`` (float64 or longdouble) fixes the
    FFT precision (the error bounds use its unit round-off); by default float64 is used,
    and the composition is redone in extended precision (numpy's longdouble, where it is
    wider than float64) when the float64 bound on some tail sum that matters stays above
    REL_TAIL of the sum (Step 2): a PMF concentrated on a few grid points composed 10^6
    times, whose rare-event tail no tilt isolates."""
    _allocator.tune()  # once per process: freed arrays stay in the heap (issue 27)
    if dtype is not None:
        return _compose_once(parts, dtype)[0]
    wider = np.finfo(np.longdouble).eps < np.finfo(np.float64).eps
    out, worst = _compose_once(parts, np.float64, redone_above=REL_TAIL if wider else math.inf)
    if worst > REL_TAIL and wider:
        out = _compose_once(parts, np.longdouble)[0]
    return out


def _windows(cum, tilts: list, d: float, lo_sup: int, hi_sup: int, top: int) -> list[list[int]]:
    """Each tilt's output window [lo, hi] in grid units: the Chernoff bounds at which the
    tilted mass beyond falls below :data:`ALIAS_MASS` (those the span cap measured for the
    tilts it placed, Step 2; any lambda's is a valid bound), clipped to the support; the
    last window reaches ``top`` (see :func:`plan`)."""
    log_alias = math.log(ALIAS_MASS)
    windows = []

    def edge(theta: float, k: float, sd: float, upper: bool) -> float:
        x = cum.edges.get((theta, log_alias, upper))  # measured by the span cap (Step 2)
        return _chernoff_x(cum, theta, k, sd, log_alias, upper) if x is None else x

    for theta, k, _, sd in tilts:
        lo = max(lo_sup, math.floor(edge(theta, k, sd, False) / d) - 1)
        hi = min(hi_sup, math.ceil(edge(theta, k, sd, True) / d) + 1)
        windows.append([lo, max(hi, lo)])
    windows[-1][1] = max(windows[-1][1], top)
    return windows


def _upper_only(windows: list[list[int]], top: int) -> list[list[int]]:
    """Windows shortened at the top for a composition that needs only upper bounds (no
    ``p_low``: the complement bound is skipped, see :func:`_compose_once`), which read the
    pass at the non-negative losses up to ``top`` only. A window [lo, hi] with lo < 0 and
    hi > top becomes [lo, max(top, hi + lo)]: the tilted mass in (hi', hi] then wraps
    around onto [lo, 0), losses that are never read, and the mass above hi wraps as before
    (at most :data:`ALIAS_MASS`). Wrapped mass only raises the computed convolution
    (c <= circ(c), all terms >= 0), so every upper bound (6) holds for any window: this
    changes how many points each FFT pass costs (issue 27), never soundness."""
    out = []
    for lo, hi in windows:
        if lo < 0 and hi > top:
            hi = max(top, hi + lo, lo)
        out.append([lo, hi])
    return out


@dataclass(frozen=True)
class Plan:
    """Where one composition puts its tilts and windows (Step 2), before any FFT pass:
    its ``factors`` and ``cumulants``, the support ``lo_sup..hi_sup`` and ``top`` (grid
    units), the cumulant ``k0`` and variance ``k20`` at tilt 0, each pass's ``tilts``
    (theta, K, L, sd) and output ``windows`` [lo, hi]; ``start..stop`` is the output grid."""

    factors: list
    cumulants: Any
    lo_sup: int
    hi_sup: int
    k0: float
    k20: float
    top: int
    tilts: list
    windows: list
    #: whether the passes bound the masses from below too (the complement bound of Step 4)
    need_low: bool = True

    @property
    def start(self) -> int:
        """First grid index of the output (the union of the windows)."""
        return min(w[0] for w in self.windows)

    @property
    def stop(self) -> int:
        """Last grid index of the output: the windows' end, at most ``top`` (the finite
        mass above ``top``, at most :data:`UPPER_TAIL_MASS`, is moved to +inf)."""
        return max(self.start, min(max(w[1] for w in self.windows), max(self.top, 0)))


def plan(parts: list[tuple[PmfArrays, int]], discretization: float | None = None, *,
         dtype: Any = np.float64) -> Plan:
    """The tilts and windows :func:`compose` would use for ``parts`` (single-step PMF,
    times), without composing: what the cost model (:mod:`fdpkit.accounting.cost`) reads
    on coarse factors to size the real composition. ``discretization`` defaults to the
    parts' own grid step."""
    d = float(parts[0][0].discretization) if discretization is None else float(discretization)
    factors = [_factor(a, int(t)) for a, t in parts]
    cum = _Cumulants(factors, d)
    lo_sup = sum(f.times * f.lo for f in factors)
    hi_sup = sum(f.times * (f.lo + len(f.probs) - 1) for f in factors)
    k0, _, k20 = cum(0.0)
    top = _chernoff_x(cum, 0.0, k0, math.sqrt(k20), math.log(UPPER_TAIL_MASS), True)
    top = min(hi_sup, math.ceil(top / d) + 1)
    # each tilt's window at most MAX_SPAN_FACTOR times the untilted one (Step 2, _tilts)
    log_alias = math.log(ALIAS_MASS)
    bottom = max(lo_sup * d, _chernoff_x(cum, 0.0, k0, math.sqrt(k20), log_alias, False))
    tilts = _tilts(cum, top * d, dtype, log_alias=log_alias, max_span=MAX_SPAN_FACTOR * (top * d - bottom))
    windows = _windows(cum, tilts, d, lo_sup, hi_sup, top)
    # the complement bound 1 - sum p_low only helps where P[Y < 0] is small (TPR near 1 at
    # the diagonal crossing); p_low = 0 is always valid, and skipping it saves a pass
    need_low = cum(0.0)[1] - 3.0 * math.sqrt(k20) > 0.0
    if not need_low:
        windows = _upper_only(windows, top)
    return Plan(factors, cum, lo_sup, hi_sup, k0, k20, top, tilts, windows, need_low)


def _compose_once(parts: list[tuple[PmfArrays, int]], dtype, *, redone_above: float = math.inf,
                  sizes: list | None = None) -> tuple[PmfArrays, float]:
    """One composition at FFT precision ``dtype``: (PMF, worst relative tail error bound).
    A caller that redoes the composition in a wider precision when the worst bound exceeds
    ``redone_above`` gets no Step 4b then (its output is discarded); ``sizes``: the passes'."""
    d = float(parts[0][0].discretization)
    for a, _ in parts:
        if not math.isclose(a.discretization, d, rel_tol=1e-12):
            raise ValueError("all PMFs must share one discretization")
    u = float(np.finfo(dtype).eps) / 2.0
    u64 = max(u, float(np.finfo(float).eps) / 2.0)  # the untilting runs in float64
    pl = plan(parts, d, dtype=dtype)
    factors, cum, lo_sup, hi_sup, windows = pl.factors, pl.cumulants, pl.lo_sup, pl.hi_sup, pl.windows
    k0, k20, tilts, start, stop = pl.k0, pl.k20, pl.tilts, pl.start, pl.stop
    log1m = sum(f.times * math.log1p(-f.inf) if f.inf < 1 else -math.inf for f in factors)
    inf_mass = -math.expm1(log1m) if math.isfinite(log1m) else 1.0
    inf_mass = min(1.0, inf_mass * (1.0 + 16 * u64) + (1e-300 if inf_mass > 0 else 0.0))
    size = stop - start + 1
    # index of the first non-negative loss: (7) reads p_up and err there and above only
    first = min(max(0, -start), size)
    f0 = first if first < size else size - 1
    need_low = pl.need_low  # (see plan)
    # without lower bounds nothing reads the grid, p_up or err below f0 (the upper bounds
    # start there): those entries are left unset (issue 27: a third of the window)
    lo_set = 0 if need_low else f0
    losses = np.empty(size)
    np.multiply(start + lo_set + np.arange(size - lo_set), d, out=losses[lo_set:])
    above = 0.0 if stop >= hi_sup else _chernoff_mass(cum, 0.0, k0, math.sqrt(k20), stop * d, True)
    inf_mass = min(1.0, inf_mass + above)

    p_up = np.empty(size)
    p_up[lo_set:] = np.inf
    p_low = np.zeros(size if need_low else 1)  # read only where need_low
    err = np.empty(size)
    err[lo_set:] = np.inf

    fresh = [True]
    l2_passes: list = []
    kept: dict = {}  # (theta, lo, hi) -> the pass's (y, eps2), for Step 4b, up to KEPT_PASS_POINTS

    def run(theta: float, k: float, sd: float, lo: int, hi: int) -> None:
        """One pass (Eq. 6), merged into p_up, p_low and err (p_up minus the estimate)."""
        y, eps, eps2 = _fft_pass(factors, cum, theta, lo, hi - lo + 1, dtype)
        if sum(len(v[0]) for v in kept.values()) + len(y) <= KEPT_PASS_POINTS:
            kept[theta, lo, hi] = (y, eps2)
        (sizes if sizes is not None else []).append(hi - lo + 1)  # the cost model reads them
        alias = 0.0  # only the lower bounds need the wrapped-around mass
        if need_low and lo > lo_sup:
            alias += _chernoff_mass(cum, theta, k, sd, lo * d, False)
        if need_low and hi < hi_sup:
            alias += _chernoff_mass(cum, theta, k, sd, hi * d, True)
        a, b = max(lo, start), min(hi, stop)
        if b < a:
            return
        try:
            log_r_up, log_r_low = _input_rounding(factors, cum, theta, u)
            kappa = sum(f.times * abs(cum.lam(j, theta)[0]) for j, f in enumerate(factors))
            # the exponent K - theta L is linear in L: its extremes are at the ends
            zeta = math.expm1(u64 * ((len(factors) + 2) * kappa
                                     + 3.0 * abs(theta) * max(abs(a * d), abs(b * d)) + 4.0))
            c_up = math.exp(log_r_up + 4 * u64) * (1.0 + zeta)
        except OverflowError:
            # a tilt so far out (theta ~ 1e16 at an extreme saddle point) that its rounding
            # bound leaves float range: the pass certifies nothing, and p_up keeps what the
            # other passes certified (+inf where none did: the pessimistic side)
            return
        if not math.isfinite(c_up):
            return
        big_any = max(k - theta * a * d, k - theta * b * d) > 700.0
        # e^{K - theta L} is computed once over the lower bounds' range [a, b]; the upper
        # bounds (non-negative losses only) read its top part: the same values, one exp less
        a_up = max(a, start + f0)
        a_exp = a if need_low else a_up
        if b < a_exp:
            return
        scale_all = losses[a_exp - start:b - start + 1] * -theta
        scale_all += k
        big_all = None
        if big_any:
            big_all = scale_all > 700.0  # e^{K - theta L} would overflow: no information there
            np.minimum(scale_all, 700.0, out=scale_all)
        np.exp(scale_all, out=scale_all)
        if need_low:
            low = y[a - lo:b - lo + 1] - (eps + alias)
            np.maximum(low, 0.0, out=low)
            low *= scale_all
            low *= math.exp(log_r_low - 4 * u64) * (1.0 - zeta)
            if big_all is not None:
                low[big_all] = 0.0
            np.maximum(p_low[a - start:b - start + 1], low, out=p_low[a - start:b - start + 1])
        if b < a_up:
            return
        l2_passes.append((a_up, b, theta, k, c_up, lo, hi))  # for Step 4b (y kept, or recomputed there)
        sl = slice(a_up - start, b - start + 1)
        scale = scale_all[a_up - a_exp:]  # (overwritten below: the lower bounds are done)
        big = None if big_all is None else big_all[a_up - a_exp:]
        yp = np.maximum(y[a_up - lo:b - lo + 1], 0.0)
        up = yp + eps
        up *= c_up
        up *= scale
        scale *= yp  # the estimate scale y^+, for err (refinement decisions only)
        excess = np.subtract(up, scale, out=scale)
        if big is not None:
            up[big], excess[big] = np.inf, np.inf
        if fresh[0]:  # p_up is still +inf everywhere: every finite up is better
            p_up[sl], err[sl] = up, excess
            fresh[0] = False
        else:
            cur = p_up[sl]
            better = up < cur
            np.copyto(cur, up, where=better)
            np.copyto(err[sl], excess, where=better)

    for (theta, k, k1, sd), (lo, hi) in zip(tilts, windows):
        run(theta, k, sd, lo, hi)
    # a-posteriori refinement: where the tail sums' error bound is above REL_TAIL of the sums
    # themselves (and the null tail is above ALPHA_FLOOR), a tilt at the worst loss's saddle point
    done, block = [t[0] for t in tilts], 64

    def worst_ratio() -> tuple[float, int]:
        """Largest (tail error bound) / (tail sum) over blocks of non-negative losses whose
        null tail exceeds ALPHA_FLOOR (decides refinement only; block resolution)."""
        if first >= size:
            return 0.0, 0
        nb = (size - first) // block
        if nb == 0:
            return 0.0, first
        end = first + nb * block
        pu = np.minimum(p_up[first:end], 1.0).reshape(nb, block).sum(axis=1)
        er = np.minimum(err[first:end], 1.0).reshape(nb, block).sum(axis=1)
        with np.errstate(invalid="ignore", over="ignore"):
            tail_up = np.cumsum(pu[::-1])[::-1]
            tail_err = np.cumsum(er[::-1])[::-1]
            tail_q = np.cumsum((np.exp(-losses[first:end:block]) * pu)[::-1])[::-1]
            ratio = np.where((tail_q > ALPHA_FLOOR) & (tail_up > 0), tail_err / tail_up, 0.0)
        i = int(np.argmax(ratio))
        return float(ratio[i]), first + i * block

    # lattice: if every factor lives on lo_j + g Z, the composition lives on S0 + g Z, and
    # is exactly 0 elsewhere (randomized response, pure DP: two losses far apart)
    g = 0
    for sh in cum.shapes:
        g = math.gcd(g, sh.lattice())
    if g > 1:
        s0 = sum(f.times * f.lo for f in factors)
        off = (start + np.arange(size) - s0) % g != 0
        p_up[off] = 0.0
        if need_low:
            p_low[off] = 0.0
        err[off] = 0.0

    worst, at = worst_ratio()
    for _ in range(REFINE_PASSES):
        if not worst > REL_TAIL:
            break
        theta = _saddle(cum, float(losses[at]))
        if any(abs(theta - t) <= 1e-3 * max(1.0, abs(t)) for t in done):
            break
        done.append(theta)
        k, k1, k2 = cum(theta)
        sd = math.sqrt(k2)
        (lo, hi), = _windows(cum, [(theta, k, k1, sd)], d, lo_sup, hi_sup, lo_sup)
        if not need_low:
            (lo, hi), = _upper_only([[lo, hi]], pl.top)
        run(theta, k, sd, lo, hi)
        if g > 1:
            p_up[off] = 0.0
            if need_low:
                p_low[off] = 0.0
            err[off] = 0.0
        worst, at = worst_ratio()
    # (7) on the non-negative losses only: all that delta(eps), eps >= 0, and the curve read
    # (the mass below loss 0 is left out; moving it up to loss 0 instead would add null
    # mass at -inf, which the symmetric completion reads as a catastrophic reverse test)
    n = size - f0
    head0 = float(np.sum(np.minimum(p_low[:f0], 1.0))) * (1.0 - (f0 + 2) * u64) if need_low else 0.0
    pu = np.minimum(p_up[f0:], 1.0)
    tail = np.cumsum(pu[::-1])[::-1]
    tail *= 1.0 + (n + 2) * u64
    tail += inf_mass
    upper = np.minimum(tail, 1.0, out=tail)
    if L2_MIN_TAIL_RATIO < worst <= redone_above:  # Step 4b: tail sums bounded through the l2 round-off
        tighten_tails(upper, l2_passes, lambda t, lo, hi: kept.get((t, lo, hi)) or _fft_pass(
            factors, cum, t, lo, hi - lo + 1, dtype)[::2], losses[f0:], start + f0, inf_mass, u64)
    below = None
    if need_low:
        pl = np.minimum(p_low[f0:], pu)
        head = np.cumsum(pl)
        head[1:] = head[:-1]
        head[0] = 0.0
        head += head0
        head *= 1.0 - (n + 2) * u64
        below = small_head(upper, head, u64)
        np.minimum(upper, (1.0 + 2 * u64) - head, out=upper)
        np.maximum(upper, inf_mass, out=upper)
    # upper is non-increasing without a running maximum: rounding is monotone, so the
    # sequential sums of non-negative terms are monotone, and so are the products with
    # positive constants, the sums with constants and the minima/maxima taken above
    probs = np.empty(n)
    np.subtract(upper[:-1], upper[1:], out=probs[:-1])
    probs[-1] = upper[-1] - inf_mass
    np.maximum(probs, 0.0, out=probs)
    losses = losses[f0:]
    if below is not None:  # Step 5: the small masses near loss 0, and P[Y < 0] at loss -d
        low_cdf, m = below
        probs[:m] = np.maximum(np.diff(low_cdf), 0.0)
        losses = np.concatenate([[losses[0] - d], losses])
        probs = np.concatenate([[low_cdf[0]], probs])
    out = PmfArrays(losses, probs, float(inf_mass), d)
    if below is None:  # losses[i] = (lower + i) d exactly, as the adapter would rebuild them
        object.__setattr__(out, "_grid_exact", True)  # a frozen dataclass: a mark only
    return out, worst
