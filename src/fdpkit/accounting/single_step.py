r"""Native single-step PLDs: the (subsampled) Gaussian and Laplace steps in NumPy.

dp_accounting 0.6.0 builds the pessimistic connect-the-dots PMF of one additive-noise step
(``_create_pld_pmf_from_monotone_privacy_loss`` with ``use_connect_dots=True``) by
evaluating the hockey-stick divergence delta(eps) on the grid eps_k = k d,
k = floor(eps_lower / d), ..., ceil(eps_upper / d), with one Python call of
``inverse_privacy_loss`` per grid point (about 30 ms for DP-SGD's headline step). This
module evaluates the same formulas on the whole grid at once, so that fdpkit's numbers
equal dp_accounting's up to round-off, and then rounds that round-off toward pessimism.

The maths (dp_accounting's ``privacy_loss_mechanism.py``)
----------------------------------------------------------
Noise density mu (Gaussian N(0, sigma^2) or Laplace(b)), sensitivity s, Poisson sampling
probability q. The adjacency directions (mu_upper, mu_lower):

- REMOVE: (q mu(x + s) + (1 - q) mu(x), mu(x));
- ADD:    (mu(x), q mu(x - s) + (1 - q) mu(x));
- REPLACE (replace-one, Gaussian only): (q mu(x + s) + (1 - q) mu(x), q mu(x - s) + (1 - q) mu(x)).

The privacy loss L(x) = ln(mu_upper(x) / mu_lower(x)) is non-increasing in x, so the set
{L >= eps} is a half line (-inf, x(eps)] and

    delta(eps) = MU_upper(x(eps)) - e^eps MU_lower(x(eps)),                    (1)

with MU the CDFs and x(eps) the inverse privacy loss. Without subsampling, for REMOVE,
L_0(x) = s (-s/2 - x) / sigma^2 (Gaussian), (|x| - |x + s|) / b (Laplace); with
subsampling L(x) = ln(1 - q + q e^{L_0(x)}) (REMOVE) and -L_REMOVE(-x) (ADD), so
x(eps) = x_0(ln(1 + (e^eps - 1) / q)) (REMOVE; delta = 1 - e^eps where eps <= ln(1 - q))
and x(eps) = s + x_0(-ln(1 + (e^{-eps} - 1) / q)) (ADD; delta = 0 where
eps >= -ln(1 - q)). REPLACE solves sinh: x = sigma^2/s (asinh(-sinh(eps/2) alpha) - eps/2)
with ln alpha = s^2 / (2 sigma^2) + ln(1 - q) - ln q.

Connect the dots (Doroshenko et al. 2022, Algorithm 1, equal gaps d): with
delta_1..delta_n at eps_1..eps_n (made non-increasing),

    p_1 = 1 - delta_1 + (delta_2 - delta_1) / (e^d - 1),
    p_i = ((delta_{i+1} - delta_i) - e^d (delta_i - delta_{i-1})) / (e^d - 1),
    p_n = (delta_n - delta_{n-1}) / (e^{-d} - 1),   P[+inf] = delta_n,            (2)

negative p_i set to 0. For exact deltas this PMF's delta(eps) upper-bounds the mechanism's,
on any grid: between grid points by convexity of delta in e^eps, above the top by
delta_n = P[+inf]. fdpkit's grid is dp_accounting's except that its top is at least d:
every step's largest loss is positive, but where it is below about 1e-16 (noise of 1e16
sensitivities and more) its computed value rounds to 0 or below, and a grid ending at 0
made delta(0) + env (2.6e-14 of round-off) a mass at +inf: delta(eps) = 2.6e-11 for every
eps after 1000 steps, f(0) = 1 - 2.6e-11 and mu 0.036 where the run is 5e-9-GDP.

Rounding toward pessimism
-------------------------
Between two grid points the PMF's delta(eps) is linear in e^eps and equals delta_i,
delta_{i+1} at the ends: a convex combination of them. So if every computed delta_k is
within c_k of the exact one, the PMF's delta(eps) on [eps_k, eps_{k+1}] is within
max(c_k, c_{k+1}) of the exact-arithmetic PMF's (the monotone repair
``minimum.accumulate`` replaces delta_j by an earlier computed delta_i, which then carries
c_i too; clipping negative p_i to 0 only adds mass, which only raises delta). For (1), the
CDFs (scipy's ``ndtr``/``log_ndtr``, Cephes, and exp/log1p) are taken to be accurate to
ROUNDOFF_UNITS u relative error and the exponent eps + ln MU_lower to
ROUNDOFF_UNITS u (|eps| + |ln MU_lower| + 1) absolute error; an error in x(eps) changes
(1) only at second order, because x(eps) maximises MU_upper(x) - e^eps MU_lower(x) (its
derivative mu_upper - e^eps mu_lower vanishes there), so

    c_k = ROUNDOFF_UNITS u (A_k + B_k (2 + |eps_k| + |ln MU_lower(x_k)|)),

with A_k, B_k the two terms of (1): relative to the terms, so tail deltas keep their
digits. Evaluating (2) in floating point errs on p_i by at most
b_i = FORMULA_UNITS u (|delta_{i+1} - delta_i| + e^d |delta_i - delta_{i-1}|) / (e^d - 1),
and p_i enters delta(eps) only for eps < l_i, with weight <= 1. The envelope

    env_k = ENVELOPE_FACTOR max_{j >= k} (max(c_j, c_{j+1}) + sum_{i > j} b_i + FORMULA_UNITS u delta_n)

is non-increasing and bounds every error at eps_k (between grid points every error term
is linear in e^eps, so bounding it at the grid points bounds it everywhere; the factor 2
also covers evaluating (2) once more on the raised deltas). The returned PMF is Eq. (2)
applied to delta_k + env_k: a PMF whose delta(eps) is at least that of the exact (2) at
every eps (raising the deltas by a non-increasing amount and clipping the negative masses
that creates only raises delta(eps)), so it is pessimistic, and its +inf mass
delta_n + env_n grows only relatively (env is relative in the tail): no +inf mass out of
the body's round-off, which the curve's f(0) and a mu fit would read. ``StepArrays`` keeps
env; the tests check that fdpkit's PMF equals dp_accounting's within the effect of env and
the two implementations' round-off, and that fdpkit's delta(eps) is never below
dp_accounting's minus max env (in practice never below it at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from fdpkit.accounting._exact_sum import exact_sum_nonnegative
from fdpkit.accounting._pld_adapter import PmfArrays, native_pld
from fdpkit.errors import ParameterError

#: Relative round-off assumed for each evaluated term of Eqs. (1)-(2), in units of the
#: unit round-off u = 2^-53: scipy's ndtr / log_ndtr (Cephes erfc/erf, documented peak
#: relative errors of a few u), exp, log1p and logaddexp each contribute a few u, and a
#: term passes through at most about ten of them; 64 leaves a factor of 2 or more.
ROUNDOFF_UNITS = 64.0
#: Round-off of Eq. (2) per probability, in units of u, relative to the terms
#: |delta_{i+1} - delta_i| + e^d |delta_i - delta_{i-1}| divided by e^d - 1: a product, a
#: subtraction and a quotient (3 u), e^d and e^d - 1 (2 u), the differences (2 u): 8.
FORMULA_UNITS = 8.0
_U = float(np.finfo(float).eps) / 2.0
#: dp_accounting's default ln of the Gaussian noise mass that may be cut off (its
#: ``log_mass_truncation_bound``): it fixes the grid's extent (the cut tails go
#: pessimistically to +inf or to the lowest loss through Eq. (2)).
LOG_MASS_TRUNCATION_BOUND = -50.0
#: dp_accounting's tolerance on increasing deltas (``pld_pmf._DELTA_DIFF_TOLERANCE``).
DELTA_DIFF_TOLERANCE = 1e-12
#: The envelope is doubled: it then also covers the round-off of adding it to the deltas
#: and the (relative, <= 1e-10) change it makes to the differences that E_2 is made of.
ENVELOPE_FACTOR = 2.0

_ADD, _REMOVE, _REPLACE = "add", "remove", "replace"


@dataclass(frozen=True)
class StepArrays:
    """One direction of a native single-step PMF and its round-off bound.

    Attributes
    ----------
    pmf : PmfArrays
        The pessimistic PMF (mass ``bound`` already moved to +inf).
    envelope : ndarray
        env_k of the module docs (non-increasing), by which the grid's deltas were raised.
    """

    pmf: PmfArrays
    envelope: np.ndarray

    @property
    def bound(self) -> float:
        """max_k env_k: the largest amount by which the PMF's delta(eps) was raised."""
        return float(self.envelope[0])


# ------------------------------------------------------------------ scalar helpers
def _log_add(a: float, b: float) -> float:
    mn, mx = min(a, b), max(a, b)
    return mx + float(np.log1p(np.exp(mn - mx)))


def _log_a_exp_b_plus_c(a: float, b: float, c: float) -> float:
    """ln(a e^b + c) for a > 0, c > 0 (dp_accounting's ``log_a_times_exp_b_plus_c``)."""
    if b == 0:
        return float(np.log(a + c))
    return _log_add(b + float(np.log(a)), float(np.log(c)))


def _vlog_sub_c(a: float, b: np.ndarray, c: float) -> np.ndarray:
    """ln(a e^b + c) elementwise for a > 0 > c (its ``_log_sub`` branch), a e^b + c > 0."""
    d = b + np.log(a)
    out = d + np.log1p(-np.exp(np.log(-c) - d))
    zero = b == 0
    if np.any(zero):
        out[zero] = np.log(a + c)
    return out


# ---------------------------------------------------------------- Gaussian step
class _Gaussian:
    def __init__(self, sigma: float, s: float, q: float, adjacency: str):
        self.sigma, self.s, self.q, self.adj = sigma, s, q, adjacency

    # L_0 and its inverse, REMOVE without subsampling
    def loss0(self, x):
        return self.s * (-0.5 * self.s - x) / (self.sigma ** 2)

    def inv0(self, loss):
        return -0.5 * self.s - loss * (self.sigma ** 2) / self.s

    def loss_remove(self, x: float) -> float:
        l0 = self.loss0(x)
        if self.q == 1.0:
            return l0
        return _log_a_exp_b_plus_c(self.q, l0, 1 - self.q)

    def loss(self, x: float) -> float:
        if self.adj == _ADD:
            return -self.loss_remove(-x)
        if self.adj == _REMOVE:
            return self.loss_remove(x)
        return self.loss_remove(x) + -self.loss_remove(-x)

    def bounds(self) -> tuple[float, float]:
        """(epsilon_lower, epsilon_upper): dp_accounting's ``connect_dots_bounds``."""
        lower_x = float(special.ndtri(0.5 * math.exp(LOG_MASS_TRUNCATION_BOUND))) * self.sigma
        upper_x = -lower_x
        if self.adj == _ADD:
            upper_x += self.s
        else:
            lower_x -= self.s
        return self.loss(upper_x), self.loss(lower_x)

    def cdf(self, x):
        return special.ndtr(x / self.sigma)

    def logcdf(self, x):
        return special.log_ndtr(x / self.sigma)

    def inverse(self, eps: np.ndarray) -> np.ndarray:
        """x(eps) for the eps where (1) applies (``_inverse_indices``)."""
        q, s = self.q, self.s
        if self.adj == _REPLACE:
            if q == 1.0:
                x = -eps * self.sigma ** 2 / s / 2
            else:
                a = np.abs(eps) / 2
                log_alpha = 0.5 * (s / self.sigma) ** 2 + math.log1p(-q) - math.log(q)
                with np.errstate(divide="ignore"):
                    log_sinh = a + np.log1p(-np.exp(-2 * a)) - math.log(2)
                big = log_alpha + log_sinh
                asinh = -np.sign(eps) * np.logaddexp(0.5 * np.logaddexp(0, 2 * big), big)
                x = self.sigma ** 2 / s * (asinh - eps / 2)
            return np.where(eps == 0, 0.0, x)
        if q == 1.0:
            x = self.inv0(eps)
            return x + s if self.adj == _ADD else x
        if self.adj == _REMOVE:
            close = np.isclose(eps, math.log(1 - q), rtol=1e-9, atol=0.0)
            x = self.inv0(_vlog_sub_c(1 / q, eps, 1 - 1 / q))
            return np.where(close, math.inf, x)
        close = np.isclose(eps, -math.log(1 - q), rtol=1e-9, atol=0.0)
        x = s + self.inv0(-_vlog_sub_c(1 / q, -eps, 1 - 1 / q))
        return np.where(close, -math.inf, x)

    def upper_cdf(self, x):
        if self.adj == _ADD:
            return self.cdf(x)
        if self.q == 1.0:
            return self.cdf(np.add(x, self.s))
        return (1 - self.q) * self.cdf(x) + self.q * self.cdf(np.add(x, self.s))

    def lower_logcdf(self, x):
        if self.adj == _REMOVE:
            return self.logcdf(x)
        if self.q == 1.0:
            return self.logcdf(np.add(x, -self.s))
        return np.logaddexp(np.log1p(-self.q) + self.logcdf(x),
                            np.log(self.q) + self.logcdf(np.add(x, -self.s)))


class _Laplace(_Gaussian):
    """Laplace(b) noise: same directions, dp_accounting's ``LaplacePrivacyLoss``."""

    def __init__(self, b: float, s: float, q: float, adjacency: str):
        super().__init__(b, s, q, adjacency)

    def loss0(self, x):
        return (abs(x) - abs(x + self.s)) / self.sigma

    def inv0(self, loss):
        t = np.asarray(loss, dtype=float) * self.sigma
        x = 0.5 * (-self.s - t)
        x = np.where(t <= -self.s, math.inf, x)
        return np.where(t > self.s, -math.inf, x)

    def bounds(self) -> tuple[float, float]:
        m, q = self.s / self.sigma, self.q
        if q == 1.0:
            return -m, m
        if self.adj == _ADD:
            return (-math.log(1 - q + q * math.exp(m)), -math.log(1 - q + q * math.exp(-m)))
        return math.log(1 - q + q * math.exp(-m)), math.log(1 - q + q * math.exp(m))

    def cdf(self, x):
        z = np.asarray(x, dtype=float) / self.sigma
        with np.errstate(over="ignore"):
            return np.where(z > 0, 1.0 - 0.5 * np.exp(-z), 0.5 * np.exp(np.minimum(z, 0.0)))

    def logcdf(self, x):
        z = np.asarray(x, dtype=float) / self.sigma
        with np.errstate(over="ignore", divide="ignore"):
            return np.where(z < 0, math.log(0.5) + z, np.log1p(-0.5 * np.exp(-np.maximum(z, 0.0))))


# --------------------------------------------------------------- delta and Eq. (2)
def _deltas(noise: _Gaussian, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """delta(eps) of Eq. (1) on the grid and its round-off bound c_k (module docs)."""
    q = noise.q
    deltas = np.zeros_like(eps)
    bound = np.zeros_like(eps)
    if q == 1.0 or noise.adj == _REPLACE:
        inv = np.ones(eps.shape, dtype=bool)
    elif noise.adj == _ADD:
        inv = eps < -math.log1p(-q)
    else:
        inv = eps > math.log1p(-q)
        deltas[~inv] = -np.expm1(eps[~inv])
        bound[~inv] = ROUNDOFF_UNITS * _U * deltas[~inv]
    e = eps[inv]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = noise.inverse(e)
        a = noise.upper_cdf(x)
        log_low = noise.lower_logcdf(x)
        b = np.exp(e + log_low)
    d = a - b
    if np.any(np.isnan(d)):
        raise ValueError("the single step's hockey-stick divergence is not a number "
                         "(parameters outside the native step's range)")
    deltas[inv] = d
    log_term = np.where(np.isfinite(log_low), np.abs(log_low), 0.0)
    bound[inv] = ROUNDOFF_UNITS * _U * (a + b * (2.0 + np.abs(e) + log_term))
    np.clip(deltas, 0.0, 1.0, out=deltas)
    return deltas, bound


def _probs(deltas: np.ndarray, d: float) -> np.ndarray:
    """Eq. (2) for n >= 2 deltas, negative probabilities set to 0 (the infinity mass is
    ``deltas[-1]``)."""
    diffs = np.diff(deltas)
    em1 = math.expm1(d)
    probs = np.empty_like(deltas)
    probs[0] = 1 - deltas[0] + diffs[0] / em1
    probs[1:-1] = (diffs[1:] - diffs[:-1] * math.exp(d)) / em1
    probs[-1] = diffs[-1] / math.expm1(-d)
    return np.maximum(probs, 0.0, out=probs)


def _envelope(deltas: np.ndarray, bound: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray]:
    """(non-increasing deltas, the envelope env_k of the module docs)."""
    n = len(deltas)
    run = np.minimum.accumulate(deltas)
    # a repaired delta_j is the computed delta_i of an earlier i: it carries i's bound too
    prev = np.concatenate(([np.inf], run[:-1]))
    idx = np.maximum.accumulate(np.where(deltas <= prev, np.arange(n), 0))
    bound = np.maximum(bound, bound[idx])
    diffs = np.abs(np.diff(run))
    em1 = math.expm1(d)
    # |error of p_i| <= b_i (Eq. 2 evaluated in floating point)
    b = np.empty(n)
    b[0] = 1.0 + diffs[0] / em1
    b[1:-1] = (diffs[1:] + diffs[:-1] * math.exp(d)) / em1
    b[-1] = diffs[-1] / -math.expm1(-d)
    b *= FORMULA_UNITS * _U
    # sum_{i > k} b_i: p_i enters delta(eps) only for eps < l_i
    tail = np.concatenate((np.cumsum(b[::-1])[::-1][1:], [0.0]))
    local = np.maximum(bound, np.concatenate((bound[1:], bound[-1:])))
    env = np.maximum.accumulate((local + tail + FORMULA_UNITS * _U * run[-1])[::-1])[::-1]
    return run, ENVELOPE_FACTOR * env


def _step(noise: _Gaussian, d: float) -> StepArrays:
    eps_lower, eps_upper = noise.bounds()
    lo, hi = math.floor(eps_lower / d), math.ceil(eps_upper / d)
    # every step's largest loss is positive (no step is perfectly private), so the grid's
    # top is at least d; its computed value rounds to 0 or below where it is under about
    # 1e-16 (noise of 1e16 sensitivities and more), and a grid ending at 0 moved the
    # round-off envelope of delta(0) to +inf (see "Rounding toward pessimism")
    hi = max(hi, 1)
    eps = np.arange(lo, hi + 1) * d
    return pmf_from_deltas(eps, *_deltas(noise, eps), d)


def deltas_on_grid(noise: _Gaussian, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """delta(eps) of Eq. (1) at ``eps`` and its round-off bound c_k (module docs)."""
    return _deltas(noise, np.asarray(eps, dtype=float))


def noise_model(sigma: float, sample_rate: float) -> _Gaussian:
    """The Poisson-subsampled Gaussian's REMOVE direction, sensitivity 1 (for
    :func:`deltas_on_grid`): H(q N(1, sigma^2) + (1 - q) N(0, sigma^2) || N(0, sigma^2))."""
    return _Gaussian(_check("sigma", sigma), 1.0, float(sample_rate), _REMOVE)


def pmf_from_deltas(eps: np.ndarray, deltas: np.ndarray, bound: np.ndarray, d: float) -> StepArrays:
    """The pessimistic connect-the-dots PMF (Eq. 2) of ``deltas`` on the grid ``eps`` (an
    arithmetic grid of step ``d`` on multiples of ``d``), raised by the envelope of their
    round-off bounds ``bound`` (module docs)."""
    lo = round(float(eps[0]) / d)
    if len(eps) == 1:
        e = float(bound[0]) * ENVELOPE_FACTOR + FORMULA_UNITS * _U
        probs, inf_mass = np.array([max(1.0 - deltas[0] - e, 0.0)]), float(deltas[0]) + e
        env = np.array([e])
    else:
        if np.any(np.diff(deltas) > DELTA_DIFF_TOLERANCE):
            raise ValueError("the single step's deltas are not non-increasing")
        run, env = _envelope(deltas, bound, d)
        raised = run + env
        probs, inf_mass = _probs(raised, d), float(raised[-1])
        _drop_excess(probs, inf_mass, lo)
    losses = (np.arange(len(probs)) + lo) * d
    return StepArrays(PmfArrays(losses, probs, inf_mass, float(d)), env)


def _drop_excess(probs: np.ndarray, inf_mass: float, lo: int) -> None:
    """Where clipping the negative p_i of Eq. (2) added more mass than lies below loss 0
    (``lo`` is the lowest loss in units of d), take the excess of the total over 1 off the
    lowest losses, in place, so that the null mass at the non-negative losses is at most 1.

    That happens when a step's losses all lie within a grid cell or two (noise of 1e15
    sensitivities and more, issue 29's hostile inputs): the raised deltas of the two or
    three grid points then make p_0 negative, and clipping it put a null mass above 1 at
    loss 0 (not a distribution). Sound (module docs, "Rounding toward pessimism"): a mass at
    loss l_j enters delta(eps) only for eps < l_j, so delta at the grid points at and above
    the lowest kept loss l_j is unchanged, and below it, with all the mass at l_j and above
    and total 1, the PMF's delta(eps_k) = 1 - e^{eps_k - l_j} (1 - delta(l_j)): the bound
    that convexity of the exact delta in e^eps (delta = 1 at e^eps = 0) puts on it. Where
    the mass below loss 0 covers the excess, the PMF is left as it is (as dp_accounting's,
    whose clipped masses are the same).
    """
    excess = (exact_sum_nonnegative(probs) - 1.0) + inf_mass  # the first difference is exact
    if not excess > 0.0 or exact_sum_nonnegative(probs[:max(0, -lo)]) > excess:
        return
    below = np.cumsum(probs)
    j = int(np.searchsorted(below, excess))
    if j >= len(probs):  # cannot happen for inf_mass <= 1; keep every mass (pessimistic)
        return
    probs[j] = max(0.0, float(below[j]) - excess)
    probs[:j] = 0.0


def _check(name: str, value: float, positive: bool = True) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}", name) from None
    if not math.isfinite(v) or (v <= 0 if positive else v < 0):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}", name)
    return v


def _directions(cls, name: str, scale: float, sensitivity: float, q: float, d: float,
                replace: bool) -> tuple[StepArrays, StepArrays | None]:
    scale = _check(name, scale)
    s = _check("sensitivity", sensitivity)
    d = _check("discretization", d)
    q = _check("sample_rate", q)
    if not q <= 1.0:
        raise ParameterError(f"sample_rate must be in (0, 1], got {q!r}", "sample_rate")
    try:
        return _build_directions(cls, scale, s, q, d, replace)
    except (OverflowError, ZeroDivisionError):
        # extreme values (sigma = 1e308: sigma ** 2 overflows) are outside the native step's
        # range; callers (accounting.pld) fall back to dp_accounting on a ValueError
        at_fault = "discretization" if d > 1.0 else name
        raise ParameterError(f"{name}={scale!r} with sensitivity={s!r} and discretization={d!r} is outside the "
                             f"native step's floating-point range", at_fault,
                             (name, "sensitivity", "discretization")) from None


def _build_directions(cls, scale: float, s: float, q: float, d: float,
                      replace: bool) -> tuple[StepArrays, StepArrays | None]:
    if replace:
        return _step(cls(scale, s, q, _REPLACE), d), None
    remove = _step(cls(scale, s, q, _REMOVE), d)
    if q == 1.0:  # both directions are the same PMF (dp_accounting: symmetric)
        return remove, None
    return remove, _step(cls(scale, s, q, _ADD), d)


def gaussian_step(sigma: float, sensitivity: float, sample_rate: float, discretization: float,
                  relation: str = "add-remove") -> tuple[StepArrays, StepArrays | None]:
    """(remove, add or None) of the Poisson-subsampled Gaussian step (module docs).

    ``relation`` is "add-remove" or "zero-out" (the same PLD, two directions unless
    ``sample_rate`` is 1) or "replace-one" (one symmetric direction). Equal to
    dp_accounting's ``from_gaussian_mechanism(..., use_connect_dots=True)`` within the
    returned bounds (``tests/accounting/test_accounting_single_step.py``).

    >>> remove, add = gaussian_step(1.0, 1.0, 0.5, 1e-2)
    >>> round(remove.pmf.infinity_mass, 12) >= 0 and add is not None
    True
    """
    if relation not in ("add-remove", "zero-out", "replace-one"):
        raise ParameterError(f"relation must be add-remove, zero-out or replace-one, got {relation!r}", "relation")
    return _directions(_Gaussian, "sigma", sigma, sensitivity, sample_rate, discretization,
                       relation == "replace-one")


def laplace_step(scale: float, sensitivity: float, sample_rate: float,
                 discretization: float) -> tuple[StepArrays, StepArrays | None]:
    """(remove, add or None) of the Poisson-subsampled Laplace step, add/remove adjacency
    (dp_accounting's ``from_laplace_mechanism(..., use_connect_dots=True)``)."""
    return _directions(_Laplace, "scale", scale, sensitivity, sample_rate, discretization, False)


def mixture(first: PmfArrays, second: PmfArrays, first_weight: float) -> PmfArrays:
    """first_weight * first + (1 - first_weight) * second on their common grid
    (dp_accounting's ``compute_mixture``)."""
    d = first.discretization
    lo1, lo2 = int(round(first.losses[0] / d)), int(round(second.losses[0] / d))  # noqa: RUF046
    lo = min(lo1, lo2)
    hi = max(lo1 + len(first.probs), lo2 + len(second.probs))
    probs = np.zeros(hi - lo)
    probs[lo1 - lo:lo1 - lo + len(first.probs)] += first_weight * first.probs
    probs[lo2 - lo:lo2 - lo + len(second.probs)] += (1 - first_weight) * second.probs
    inf_mass = first.infinity_mass * first_weight + second.infinity_mass * (1 - first_weight)
    return PmfArrays((np.arange(hi - lo) + lo) * d, probs, inf_mass, d)


def step_pld(steps: tuple[StepArrays, StepArrays | None]):
    """The PLD of native step arrays: a :class:`~fdpkit.accounting._pld_adapter.NativePld`
    (dp_accounting's ``PrivacyLossDistribution`` of them, built when first asked for)."""
    remove, add = steps
    return native_pld(remove.pmf, None if add is None else add.pmf)


__all__ = ["ROUNDOFF_UNITS", "StepArrays", "deltas_on_grid", "gaussian_step", "laplace_step", "mixture",
           "noise_model", "pmf_from_deltas", "step_pld"]
