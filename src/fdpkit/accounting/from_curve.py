r"""Any trade-off curve -> a pessimistic privacy loss distribution; composition of curves.

Derivation
----------
**A curve is a pair of distributions.** A trade-off curve f is the curve of a test of P
(null) against Q (alternative), f = T(P, Q) (Dong, Roth & Su 2022, Prop. 2.2). With the
privacy loss L = ln(dQ/dP), its privacy profile is the hockey-stick divergence

    delta_f(eps) = E_Q[(1 - e^{eps - L})^+] = sup_alpha TPR(alpha) - e^eps alpha        (1)

(Dong et al. Prop. 2.12; Zhu, Dong & Wang 2022, "Optimal accounting of differential
privacy via characteristic function", Sec. 3), for every real eps. In the TPR plane,
delta_f(eps) is the intercept at alpha = 0 of the supporting line of slope e^eps of the
concave function TPR = 1 - f, and the segment of the curve of slope e^l carries the
Q-mass of the loss value l (its P-mass is e^{-l} times that). So the curve determines
the distribution of L under Q (and under P), and conversely (Zhu et al. 2022, Thm. 5).
For negative eps, (1) is read from the inverse curve (the hypotheses swapped):

    delta_f(eps) = 1 - e^eps + e^eps delta_{f^{-1}}(-eps).                                (2)

**Pessimistic discretisation (connect the dots).** On the loss grid l_i = i d
(``discretization`` d) the connect-the-dots PMF of Doroshenko et al. 2022 (Algorithm 1) is
the distribution whose profile, as a function of x = e^eps, is the piecewise-linear
interpolation of delta_f at the grid points x_i = e^{l_i}: the masses follow from the
second differences of delta_f(l_i), and the mass delta_f(l_max) above the top grid point
goes to L = +inf. delta_f is convex in x (each term (1 - x e^{-L})^+ of (1) is), so the
interpolation lies above it: the discrete distribution's profile is >= delta_f at every
eps and equal at grid points. In the TPR plane this is the envelope of the supporting
lines of slopes e^{l_i}, which lies above the curve: the discretised curve is a lower
bound of f. Any upper bound on delta_f(l_i) keeps this true (it moves the lines up), so
delta_f is taken from the curve's own profile: exact in closed form for Gaussian and
Laplace curves and for piecewise-linear curves, and from the sound piecewise-linear lower
bound otherwise. Rounding that would make the sequence increase is removed upwards.

**Both directions.** A curve f describes one ordering of the neighbouring pair; the other
ordering has the curve f^{-1}. The ``remove`` PMF is built from delta_f and the ``add``
PMF from delta_{f^{-1}} (for symmetric f they coincide and the PLD is symmetric), so a
composed PLD covers both orderings, as dp_accounting's accountants do.

**Truncation.** The grid runs from -L_inv to L_f, where L_f is the smallest grid loss with
delta_f(L_f) <= delta_f(inf) + ``TAIL_MASS`` (delta_f(inf) = 1 - f(0) is the mass at
L = +inf) and L_inv the same for f^{-1}. Mass above the top moves to +inf and mass below
the bottom up to the lowest grid point: both raise the loss, so both are pessimistic.

**Composition** (:func:`fdpkit.accounting.compose.compose_curves`). dp_accounting convolves the PMFs (``compose``, with its own pessimistic
tail truncation), and :func:`fdpkit.accounting.pld_curve.curve_from_pld` turns the composed
PLD into the symmetric curve implied by its profile in both directions. The result is a
lower bound of the composition f_1 (x) ... (x) f_k (Dong et al. 2022, Def. 3.1) and of its
inverse; for symmetric inputs it is tight up to the discretisation.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pldlib
else:  # dp_accounting (and scipy.signal) load when it builds a PLD (fallbacks, public objects)
    pld_pmf = lazy_module("dp_accounting.pld.pld_pmf")
    pldlib = lazy_module("dp_accounting.pld.privacy_loss_distribution")

from fdpkit._numerics import check_positive, check_scalar
from fdpkit.accounting._pld_adapter import NativePld, PmfArrays
from fdpkit.curves import PiecewiseLinearCurve, TradeOffCurve, check_curve

#: Profile mass left above the top of the loss grid (it moves to L = +inf, pessimistic):
#: e^-50, dp_accounting's default tail bound for its additive-noise mechanisms.
TAIL_MASS = math.exp(-50.0)
#: Most grid points one direction of a curve's PMF may use; beyond it the top of the grid
#: is lowered (the extra mass moves to L = +inf, which is pessimistic).
MAX_GRID_POINTS = 2**21


def _profile(curve: TradeOffCurve, inverse: TradeOffCurve, eps: np.ndarray) -> np.ndarray:
    """delta_f(eps) for real eps: Eq. (1) for eps >= 0, Eq. (2) below 0 (upper bounds)."""
    eps = np.asarray(eps, dtype=float)
    out = np.empty(eps.shape)
    pos = eps >= 0
    if pos.any():
        out[pos] = curve._delta_for_epsilon(eps[pos])
    if (~pos).any():
        e = eps[~pos]
        out[~pos] = -np.expm1(e) + np.exp(e) * inverse._delta_for_epsilon(-e)
    return np.clip(out, 0.0, 1.0)


def _top_index(curve: TradeOffCurve, inverse: TradeOffCurve, d: float, limit: int) -> int:
    """Smallest i in [0, limit] with delta_f(i d) <= delta_f(inf) + TAIL_MASS (else limit)."""
    floor = float(_profile(curve, inverse, np.array([math.inf]))[0])

    def small(i: int) -> bool:
        return float(_profile(curve, inverse, np.array([i * d]))[0]) <= floor + TAIL_MASS

    if small(0):
        return 0
    hi = 1
    while not small(hi):
        if hi >= limit:
            return limit
        hi = min(2 * hi, limit)
    lo = hi // 2  # small(lo) is False (or lo == 0, checked above)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if small(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _direction_pmf(curve: TradeOffCurve, inverse: TradeOffCurve, lower: int, upper: int,
                   d: float) -> pld_pmf.PLDPmf:
    """Connect-the-dots PMF of ``curve`` on the grid lower*d .. upper*d (module docs)."""
    idx = np.arange(lower, upper + 1)
    deltas = _profile(curve, inverse, idx * d)
    deltas = np.maximum.accumulate(deltas[::-1])[::-1]  # non-increasing, rounded upwards
    return pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(d, int(lower), int(upper), deltas)


def _direction_arrays(curve: TradeOffCurve, inverse: TradeOffCurve, lower: int, upper: int,
                      d: float) -> PmfArrays:
    """The connect-the-dots PMF of ``curve`` on the grid lower*d .. upper*d (module docs) as
    arrays, computed here (no dp_accounting object: its import costs half a second).

    With deltas delta_k = delta_f(l_k) made non-increasing (as in :func:`_direction_pmf`) and
    Delta_k = delta_k - delta_{k-1}: the interpolated profile has slope
    s_k = Delta_k / (e^{l_k} (1 - e^{-d})) in x = e^eps on [x_{k-1}, x_k], 0 above the top
    (where it equals the +inf mass delta_top) and reaches 1 at x = 0 (total mass 1). A mass
    p_k at l_k changes the slope by p_k e^{-l_k}, so p_k = e^{l_k} (s_{k+1} - s_k):

        p_0 = 1 - delta_0 + Delta_1 / (e^d - 1),
        p_k = (Delta_{k+1} - e^d Delta_k) / (e^d - 1)       (0 < k < top),
        p_top = Delta_top / (e^{-d} - 1),

    each >= 0 up to rounding (delta_f is convex in x), negative rounding clipped to 0. These
    are the masses of Doroshenko et al. 2022, Algorithm 1, as dp_accounting's
    ``create_pmf_pessimistic_connect_dots_fixed_gap`` computes them (``tests/accounting``
    compares the two, float for float)."""
    idx = np.arange(lower, upper + 1)
    deltas = _profile(curve, inverse, idx * d)
    deltas = np.maximum.accumulate(deltas[::-1])[::-1]  # non-increasing, rounded upwards
    if len(deltas) == 1:  # one loss: the rest of the mass at +inf
        probs, inf_mass = 1.0 - deltas[:1], float(deltas[0])
    else:
        steps = np.diff(deltas)  # Delta_1 .. Delta_top, all <= 0
        probs = np.empty(len(deltas))
        probs[0] = 1.0 - deltas[0] + steps[0] / math.expm1(d)
        probs[1:-1] = (steps[1:] - steps[:-1] * math.exp(d)) / math.expm1(d)
        probs[-1] = steps[-1] / math.expm1(-d)
        np.maximum(probs, 0.0, out=probs)
        inf_mass = float(deltas[-1])
    disc = float(d)
    return PmfArrays((np.arange(len(probs)) + int(lower)) * disc, probs, inf_mass, disc)


def _check_curve(name: str, curve: Any) -> TradeOffCurve:
    """A curve to compose: :func:`fdpkit.curves.check_curve`, upper bounds refused."""
    return check_curve(curve, name, upper="composing it would give no guarantee")


def pld_from_curve(curve: TradeOffCurve, discretization: float = 1e-4):
    """The pessimistic connect-the-dots PLD of a trade-off curve (see module docs).

    Parameters
    ----------
    curve : TradeOffCurve
        An exact or lower-bound curve (``bound`` "exact" or "lower").
    discretization : float
        The loss grid width d (dp_accounting's value_discretization_interval).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Symmetric when the curve is; otherwise ``remove`` from f and ``add`` from f^{-1}.
    """
    curve, inverse, symmetric, d, top, bottom = _grid(curve, discretization)
    remove = _direction_pmf(curve, inverse, -bottom, top, d)
    if symmetric:
        return pldlib.PrivacyLossDistribution(remove)
    add = _direction_pmf(inverse, curve, -top, bottom, d)
    return pldlib.PrivacyLossDistribution(remove, add)


def _grid(curve: Any, discretization: Any) -> tuple[TradeOffCurve, TradeOffCurve, bool, float, int, int]:
    """(curve, its inverse (the curve itself when symmetric), symmetric, d, top, bottom): the checked
    inputs and the loss grid -bottom d .. top d of the ``remove`` direction (module docs)."""
    curve = _check_curve("curve", curve)
    d = check_scalar("discretization", check_positive("discretization", discretization))
    symmetric = curve.is_symmetric
    inverse = curve if symmetric else curve.inverse()
    if not symmetric and not isinstance(inverse, PiecewiseLinearCurve):
        inverse = inverse.to_piecewise()
    top = _top_index(curve, inverse, d, MAX_GRID_POINTS // 2)
    bottom = top if symmetric else _top_index(inverse, curve, d, MAX_GRID_POINTS // 2)
    return curve, inverse, symmetric, d, top, bottom


def native_pld_from_curve(curve: TradeOffCurve, discretization: float = 1e-4) -> NativePld:
    """:func:`pld_from_curve` as a :class:`~fdpkit.accounting._pld_adapter.NativePld`: the
    same arrays, computed without dp_accounting, whose object (``pld_from_curve``'s own)
    is built only if something asks for it."""
    c, inverse, symmetric, d, top, bottom = _grid(curve, discretization)
    remove = _direction_arrays(c, inverse, -bottom, top, d)
    add = None if symmetric else _direction_arrays(inverse, c, -top, bottom, d)
    return NativePld(remove, add, build=(pld_from_curve, (curve, discretization)))
