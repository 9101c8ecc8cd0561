"""Attack-risk readings of a trade-off curve (Kulynych & Honkela; de Fondeville).

All readings are worst case over attacks: they use the curve f, the smallest FNR at each
FPR, so the TPR read from it is the largest any membership-inference attack reaches. For a
pessimistic (``bound="lower"``) numeric curve these are upper bounds on risk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fdpkit._deprecation import warn_renamed
from fdpkit._numerics import check_probability, scalar_or_array
from fdpkit.curves import TradeOffCurve
from fdpkit.risk._checks import check_risk_curve
from fdpkit.risk.disclosure import relative_risk


def _risk_tpr(curve: TradeOffCurve, fpr: Any) -> float | np.ndarray:
    """``curve.tpr(fpr)`` for a curve read as risk: the largest TPR = 1 - f(fpr) of any
    membership attack at false-positive rate ``fpr``, refusing an optimistic (upper-bound)
    curve (the risk readings' check; users write ``curve.tpr(fpr)``).

    >>> from fdpkit import GaussianCurve
    >>> round(_risk_tpr(GaussianCurve(2.0), 1e-10), 8)
    6.46e-06
    """
    curve = check_risk_curve(curve)
    return curve.tpr(check_probability("fpr", fpr) if np.ndim(fpr) else float(check_probability("fpr", fpr)))


def attack_power(curve: TradeOffCurve, fpr: Any) -> float | np.ndarray:
    """Deprecated alias of ``curve.tpr(fpr)`` (renamed in 0.x, issue 23: one spelling of "TPR
    at an FPR"); use that. Raises a :class:`DeprecationWarning`; still refuses an upper-bound curve.

    Parameters
    ----------
    curve : TradeOffCurve
        A lower-bound or exact trade-off curve.
    fpr : float or array_like
        False-positive rate(s) in [0, 1].

    Returns
    -------
    float or ndarray
        The largest TPR = 1 - f(fpr) of any membership attack at ``fpr``.
    """
    warn_renamed("fdpkit.attack_power(curve, fpr)", "curve.tpr(fpr)")
    return _risk_tpr(curve, fpr)


attack_power.__deprecated__ = "curve.tpr(fpr)"  # type: ignore[attr-defined]  # as deprecated_alias marks one


def multiplicative_advantage(curve: TradeOffCurve, fpr: Any) -> float | np.ndarray:
    """Worst-case TPR / FPR at false-positive rate ``fpr`` (Kulynych & Honkela Def. 3.1,
    Fig. 4b). ``fpr`` must be in (0, 1]; ∞ where the ratio exceeds the largest float
    (subnormal FPRs, below about 2.2e-308).

    Examples
    --------
    >>> from fdpkit import GaussianCurve
    >>> round(multiplicative_advantage(GaussianCurve(1.0), 1e-3), 2)
    18.3
    """
    curve = check_risk_curve(curve)
    a = check_probability("fpr", fpr, open_low=True)
    with np.errstate(over="ignore"):  # inf (an upper bound) where TPR / FPR leaves the floats, no warning
        return scalar_or_array(curve._tpr(a) / a, fpr)


def precision_at_recall(curve: TradeOffCurve, recall: Any) -> float | np.ndarray:
    """Worst-case precision TPR / (TPR + FPR) of attacks reaching TPR = ``recall`` on a
    balanced population (Kulynych & Honkela Def. 3.2, Fig. 5b).

    The smallest FPR giving TPR ≥ b is f⁻¹(1 - b); under μ-GDP this is
    Φ(Φ⁻¹(b) - μ), so precision = b / (b + Φ(Φ⁻¹(b) - μ)).

    Examples
    --------
    >>> from fdpkit import GaussianCurve
    >>> round(precision_at_recall(GaussianCurve(1.0), 0.01), 3)
    0.958
    """
    curve = check_risk_curve(curve)
    b = check_probability("recall", recall, open_low=True)
    fpr_needed = curve.inverse()._beta(1.0 - b)
    return scalar_or_array(b / (b + fpr_needed), recall)


def posterior(curve: TradeOffCurve, prior: Any, fpr: Any) -> float | np.ndarray:
    """Attacker's posterior probability of membership after a positive test at FPR ``fpr``
    (de Fondeville Eq. 4, Def. 6):

        p_post = prior TPR / ((1 - prior) FPR + prior TPR),  TPR = 1 - f(FPR).

    At fpr = 0 the limit is returned: 1 if f(0) < 1 (blatant disclosure), else
    prior ρ / (1 - prior + prior ρ) with ρ the relative risk.

    Examples
    --------
    >>> from fdpkit import GaussianCurve
    >>> round(posterior(GaussianCurve(1.0), 0.01, 1e-3), 3)
    0.156
    """
    curve = check_risk_curve(curve)
    p = check_probability("prior", prior)
    a = check_probability("fpr", fpr)
    p, a = np.broadcast_arrays(p, a)
    tpr = curve._tpr(a)
    # p TPR / ((1 - p) FPR + p TPR) = 1 / (1 + (1 - p)/p * FPR/TPR), with FPR/TPR from logs:
    # at FPR = 5e-324 both FPR and TPR are subnormal (or TPR underflows) and the plain ratio
    # is 0/0. TPR >= FPR on every trade-off curve (f(a) <= 1 - a), so FPR/TPR <= 1.
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        log_a = np.log(a)
        log_ratio = log_a - np.maximum(curve._log_tpr(a), log_a)
        post = np.exp(-np.logaddexp(0.0, np.log1p(-p) - np.log(p) + log_ratio))
    if (a == 0).any():
        rho = relative_risk(curve)
        with np.errstate(invalid="ignore"):
            lim = np.where(np.isinf(rho), 1.0, p * rho / (1.0 - p + p * rho))
        lim = np.where(tpr > 0, 1.0, lim)
        post = np.where(a == 0, np.where(p == 0, 0.0, lim), post)
    post = np.where(p == 0, 0.0, np.where(p == 1, 1.0, post))
    return scalar_or_array(post, prior, fpr)
