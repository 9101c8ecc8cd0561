"""Scalar summaries of a trade-off curve: the advantage (largest TPR - FPR of any attack,
Gomez et al. Eq. 8; Yeom et al. 2018) and the Bayes risk of a membership attack at a prior.

Both are rounded to the pessimistic side: the advantage up, the Bayes risk down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from scipy import optimize
else:  # loaded on first use (start-up time, issue 30)
    optimize = lazy_module("scipy.optimize")

from fdpkit._numerics import check_probability, check_scalar
from fdpkit.curves import TradeOffCurve
from fdpkit.risk._checks import check_risk_curve

#: Grid size (uniform in alpha) for curves that are neither closed-form nor piecewise
#: linear; the best grid point is refined with Brent's method.
_DENSE_GRID = 20001


def advantage(curve: TradeOffCurve) -> float:
    """η(f) = max_α 1 - α - f(α): the largest TPR - FPR of any attack
    (Gomez et al. Eq. 8; Yeom et al. 2018).

    Examples
    --------
    >>> from fdpkit import GaussianCurve
    >>> round(advantage(GaussianCurve(1.0)), 6)   # 2 Phi(mu/2) - 1
    0.382925
    """
    curve = check_risk_curve(curve, sound=False)
    exact = curve._advantage_exact()
    if exact is not None:
        return float(exact)
    bp = curve._breakpoints()
    if bp is not None:
        return float(np.max(bp[1] - bp[0]))
    # concave in alpha: grid, then Brent, then round up
    a = np.linspace(0.0, 1.0, _DENSE_GRID)
    vals = curve._tpr(a) - a
    i = int(np.argmax(vals))
    res = optimize.minimize_scalar(
        lambda x: -float((curve._tpr(np.array([x])) - x)[0]),
        bounds=(a[max(i - 1, 0)], a[min(i + 1, len(a) - 1)]), method="bounded",
        options={"xatol": 1e-13},
    )
    return min(1.0, max(float(vals[i]), -float(res.fun)) + 1e-12)


def bayes_risk(curve: TradeOffCurve, prior: float) -> float:
    """Smallest Bayes error of a membership attack with prior probability ``prior`` of
    membership: min_α (1 - prior) α + prior f(α).

    A pessimistic (lower) reading: attackers do at least this well at best, so the
    returned value is rounded down.

    Examples
    --------
    >>> from fdpkit import GaussianCurve
    >>> round(bayes_risk(GaussianCurve(0.0), 0.5), 6)
    0.5
    """
    curve = check_risk_curve(curve, sound=False)
    prior = float(check_probability("prior", check_scalar("prior", prior)))  # an array: was a TypeError
    bp = curve._breakpoints()
    if bp is not None:
        a, t = bp
        return float(np.min((1 - prior) * a + prior * (1 - t)))
    a = np.linspace(0.0, 1.0, _DENSE_GRID)
    vals = (1 - prior) * a + prior * curve._beta(a)
    i = int(np.argmin(vals))
    res = optimize.minimize_scalar(
        lambda x: float(((1 - prior) * x + prior * curve._beta(np.array([x])))[0]),
        bounds=(a[max(i - 1, 0)], a[min(i + 1, len(a) - 1)]), method="bounded",
        options={"xatol": 1e-13},
    )
    return max(0.0, min(float(vals[i]), float(res.fun)) - 1e-12)
