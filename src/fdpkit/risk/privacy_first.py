"""Privacy-first inverses (de Fondeville Sec. 5.1, question 3): the least private
mechanism that still meets a limit on attack risk.

For mu-GDP (curve G_mu) at FPR alpha0:
- attack power: TPR = Phi(mu - isf(alpha0)) <= P  <=>  mu <= isf(alpha0) - isf(P);
- relative risk: rho_alpha0 = TPR(alpha0)/alpha0 <= R  <=>  TPR(alpha0) <= R alpha0.

For the Laplace mechanism (curve of Lap(0,1) vs Lap(eps,1)): rho = e^eps (Corollary 2), so
eps = log R; the attack power at alpha0 is inverted piece by piece of the curve.

Every answer is rounded towards more privacy (smaller mu or epsilon).
"""

from __future__ import annotations

import math
from typing import Any

from fdpkit.errors import ParameterError
from fdpkit._numerics import check_probability, check_scalar, norm_isf

#: Relative amount by which answers are moved towards more privacy to absorb rounding.
_SAFE_RTOL = 1e-12


def _power_and_fpr(max_power: Any, fpr: Any) -> tuple[float, float]:
    p = check_scalar("max_power", check_probability("max_power", max_power, open_low=True))
    a = check_scalar("fpr", check_probability("fpr", fpr, open_low=True, open_high=True))
    if p < a:
        raise ParameterError(
            f"max_power must be >= fpr (a random guess already reaches TPR = FPR), "
            f"got max_power={p!r} < fpr={a!r}", "max_power", ("max_power", "fpr"))
    return p, a


def mu_for_attack_power(max_power: Any, fpr: Any) -> float:
    """Largest μ such that no attack with FPR ``fpr`` has TPR above ``max_power``.

    Examples
    --------
    >>> round(mu_for_attack_power(0.0183, 1e-3), 3)
    1.0
    """
    p, a = _power_and_fpr(max_power, fpr)
    if p >= 1.0:
        return math.inf
    return max(0.0, float(norm_isf(a) - norm_isf(p)) * (1.0 - _SAFE_RTOL))


def mu_for_relative_risk(max_risk: Any, fpr_min: Any) -> float:
    """Largest μ whose relative disclosure risk ρ_alpha0 (FPR ≥ ``fpr_min``) is at most
    ``max_risk`` (de Fondeville Def. 7; GDP has ρ = ∞ without an FPR floor).

    Examples
    --------
    >>> round(mu_for_relative_risk(18.3, 1e-3), 3)
    1.0
    """
    r = check_scalar("max_risk", max_risk)
    if not r >= 1.0:
        raise ParameterError(f"max_risk must be >= 1 (the posterior never falls below the prior), got {r!r}", "max_risk")
    a0 = check_scalar("fpr_min", check_probability("fpr_min", fpr_min, open_low=True, open_high=True))
    if r * a0 >= 1.0:
        return math.inf
    return mu_for_attack_power(r * a0, a0)


def laplace_epsilon_for_relative_risk(max_risk: Any) -> float:
    """Largest Laplace ε with relative disclosure risk at most ``max_risk``:
    ε = log R (de Fondeville Corollary 2 and Sec. 3.2: ε = log ρ).

    Examples
    --------
    >>> round(laplace_epsilon_for_relative_risk(math.e), 6)
    1.0
    """
    r = check_scalar("max_risk", max_risk)
    if not r >= 1.0:
        raise ParameterError(f"max_risk must be >= 1, got {r!r}", "max_risk")
    return math.log(r) * (1.0 - _SAFE_RTOL) if math.isfinite(r) else math.inf


def laplace_epsilon_for_attack_power(max_power: Any, fpr: Any) -> float:
    """Largest Laplace ε whose best attack at FPR ``fpr`` has TPR ≤ ``max_power``.

    Inverts the three pieces of the Laplace curve: TPR = e^ε a (while e^ε a < 1/2),
    1 − e^−ε / (4a) (a ≤ 1/2), 1 − e^−ε (1 − a) (a > 1/2).

    Examples
    --------
    >>> round(laplace_epsilon_for_attack_power(0.00271828, 1e-3), 4)
    1.0
    """
    p, a = _power_and_fpr(max_power, fpr)
    if p >= 1.0:
        return math.inf
    if a > 0.5:
        eps = -math.log((1.0 - p) / (1.0 - a))
    elif p < 0.5:
        eps = math.log(p / a)
    else:
        eps = -math.log(4.0 * a * (1.0 - p))
    return max(0.0, eps * (1.0 - _SAFE_RTOL))


def pure_epsilon_for_attack_power(max_power: Any, fpr: Any) -> float:
    """Largest epsilon such that EVERY pure eps-DP mechanism (e.g. a composition of several
    Laplace releases) has TPR <= ``max_power`` at FPR ``fpr``.

    The worst case is the eps-DP curve f_{eps,0} (Kairouz et al. 2015; Dong et al. Prop. 2.5):
    TPR(a) = min(e^eps a, 1 - e^-eps (1 - a)), which is <= P iff eps <= max(log(P/a),
    -log((1-P)/(1-a))). At small FPR (e^eps a < 1/2) it equals the Laplace answer
    :func:`laplace_epsilon_for_attack_power`, and it is never larger.

    >>> round(pure_epsilon_for_attack_power(0.00271828, 1e-3), 4)
    1.0
    """
    p, a = _power_and_fpr(max_power, fpr)
    if p >= 1.0:
        return math.inf
    eps = max(math.log(p / a), -math.log((1.0 - p) / (1.0 - a)))
    return max(0.0, eps * (1.0 - _SAFE_RTOL))
