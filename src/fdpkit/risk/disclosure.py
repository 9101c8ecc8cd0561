"""Relative disclosure risk and failure modes (de Fondeville Sec. 3.2, Def. 7, Thms. 1-2,
Table 1).

Relative risk rho_alpha0 = sup_{alpha in [alpha0, 1]} (1 - f(alpha)) / alpha. For any
trade-off curve, TPR(alpha) = 1 - f(alpha) is concave with TPR(0) >= 0, so TPR(alpha)/alpha
(the slope of the chord from the origin) is non-increasing: the supremum is attained at
alpha0, and for alpha0 -> 0 it is the limit of TPR(alpha)/alpha (the slope of TPR at 0;
infinite if f(0) < 1). So rho_alpha0 = TPR(alpha0)/alpha0 exactly, no search needed.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from fdpkit._numerics import check_probability, check_scalar, safe_g
from fdpkit.curves import (
    EnvelopeCurve,
    EpsDeltaCurve,
    GaussianCurve,
    LaplaceCurve,
    PiecewiseLinearCurve,
    RDPCurve,
    TradeOffCurve,
    ZCDPCurve,
)
from fdpkit.risk._checks import check_risk_curve

FAILURE_MODES = ("none", "graceful", "catastrophic")


def _slope_at_zero(curve: TradeOffCurve) -> float:
    """Right slope of TPR at alpha = 0, ignoring any atom TPR(0) = 1 - f(0): equal to
    lim TPR(alpha)/alpha when f(0) = 1 (an upper bound where only a sound
    piecewise-linear lower bound of the curve is available)."""
    if isinstance(curve, GaussianCurve):
        return 1.0 if curve.mu == 0 else math.inf  # G_0 is the diagonal TPR = alpha
    if isinstance(curve, (EpsDeltaCurve, LaplaceCurve)):
        return math.exp(curve.epsilon)
    if isinstance(curve, EnvelopeCurve):
        return min(_slope_at_zero(c) for c in curve.curves)
    if (isinstance(curve, ZCDPCurve) and curve.rho == 0.0
            or isinstance(curve, RDPCurve) and 0.0 in curve.epsilons):
        return 1.0  # every Renyi divergence is 0: the two distributions are one (TPR = alpha)
    if isinstance(curve, (RDPCurve, ZCDPCurve)):
        return math.inf  # TPR ~ alpha^(1 - 1/t) at every finite order: unbounded slope
    pl = curve if isinstance(curve, PiecewiseLinearCurve) else curve.to_piecewise()
    half = pl._half_breakpoints()  # a prefix of the vertices (a symmetric curve's half)
    a, t = (half[0], half[1]) if half is not None and len(half[0]) >= 2 else (pl.alphas, pl.tprs)
    return float((t[1] - t[0]) / a[1])


def relative_risk(curve: TradeOffCurve, fpr_min: Any = None) -> float:
    """Maximum relative disclosure risk ρ (de Fondeville Def. 7): the largest factor by
    which a positive membership attack can multiply the attacker's prior belief.

    Parameters
    ----------
    curve : TradeOffCurve
    fpr_min : float, optional
        alpha0 in (0, 1]: only attacks with FPR ≥ alpha0 count (ρ_alpha0). Without it,
        ρ is infinite for the Gaussian mechanism and for any curve with f(0) < 1.

    Examples
    --------
    >>> from fdpkit import GaussianCurve, LaplaceCurve
    >>> round(relative_risk(LaplaceCurve(1.0)), 6)   # e^eps (Corollary 2)
    2.718282
    >>> relative_risk(GaussianCurve(1.0))
    inf
    >>> round(relative_risk(GaussianCurve(1.0), fpr_min=1e-3), 2)
    18.3
    """
    curve = check_risk_curve(curve)
    if fpr_min is not None:
        a0 = check_scalar("fpr_min", check_probability("fpr_min", fpr_min, open_low=True))
        with np.errstate(over="ignore"):  # inf (an upper bound) where TPR / FPR leaves the floats
            return max(1.0, float(curve._tpr(np.array([a0]))[0] / a0))
    if curve.f0 < 1.0:
        return math.inf
    return max(1.0, _slope_at_zero(curve))


def certainty_mass(curve: TradeOffCurve) -> float:
    """The probability 1 - f(0) that an output reveals membership with certainty. On an exact
    curve it is read also from the accurately stored side, as ``fit_gdp`` reads it (an
    (eps, 1e-20) curve has f(0) = 1 - 1e-20 = 1.0 in floats, but TPR(0) = 1e-20); a numeric
    lower bound's TPR(0) below 1e-16 is its own round-off."""
    atom = 1.0 - float(curve.f0)
    if curve.bound == "exact":
        atom = max(atom, float(curve._tpr(np.zeros(1))[0]))
    return atom


def delta_covers_disclosure(mass: float, epsilons: Iterable[tuple[float, float]]) -> str:
    """Why an (epsilon, delta) pair can read small beside a catastrophic failure mode, in
    plain words ("" when no delta given is at least ``mass``).

    (epsilon, delta)-DP lets delta cover rare outputs: once delta >= ``mass`` (the
    probability that an output reveals membership outright, :func:`certainty_mass`), those
    outputs fall in delta and epsilon describes only the others (de Fondeville's uniform
    random sampling reads epsilon = 0 there); below ``mass`` no finite epsilon holds.

    Parameters
    ----------
    mass : float
        The probability of blatant disclosure, 1 - f(0).
    epsilons : iterable of (delta, epsilon)
        The privacy profile's pairs as reported.

    Returns
    -------
    str
        One sentence naming the pairs whose delta covers the disclosure, or "".

    Examples
    --------
    >>> delta_covers_disclosure(6.3e-7, [(1e-5, 0.0), (1e-9, float("inf"))])[:52]
    'Why ε = 0 at δ = 1e-05 can read as strong protection'
    >>> delta_covers_disclosure(0.0, [(1e-5, 0.0)])
    ''
    """
    covered = [(d, e) for d, e in epsilons if mass > 0 and d >= mass and math.isfinite(e)]
    if not covered:
        return ""
    pairs = " and ".join(f"ε = {safe_g(e, up=True)} at δ = {d:g}" for d, e in covered)
    return (f"Why {pairs} can read as strong protection beside a catastrophic failure: (ε, δ)-DP lets δ "
            f"cover rare outputs, and δ there is at least the probability ({mass:.3g}) of an output that "
            f"reveals membership outright, so ε describes only the other outputs and says nothing about "
            f"that one; for δ below {mass:.3g} no finite ε holds.")


def failure_mode(curve: TradeOffCurve, *, tolerance: float = 0.0) -> str:
    """How a mechanism fails under membership attacks (de Fondeville Thms. 1-2, Table 1).

    - ``"catastrophic"``: f(0) < 1 - tolerance; some outputs reveal membership with
      certainty (blatant disclosure; Theorem 1).
    - ``"graceful"``: f(0) = 1 but the relative risk is unbounded; confidence can approach
      certainty but never reach it (e.g. the Gaussian mechanism).
    - ``"none"``: bounded relative risk (Theorem 2), e.g. any pure ε-DP mechanism.

    ``tolerance`` lets a caller ignore a known numeric tail mass at α = 0 (for example
    the truncation mass of an accountant), and must be stated wherever the result is shown.

    Examples
    --------
    >>> from fdpkit import GaussianCurve, LaplaceCurve, UniformSamplingCurve
    >>> failure_mode(LaplaceCurve(1.0)), failure_mode(GaussianCurve(1.0))
    ('none', 'graceful')
    >>> failure_mode(UniformSamplingCurve(1.0, 100))
    'catastrophic'
    """
    curve = check_risk_curve(curve)
    tol = check_scalar("tolerance", check_probability("tolerance", tolerance))
    if certainty_mass(curve) > tol:
        return "catastrophic"
    return "none" if math.isfinite(_slope_at_zero(curve)) else "graceful"
