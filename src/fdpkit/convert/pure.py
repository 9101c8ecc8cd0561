"""From a pure epsilon-DP budget to a GDP mu, under an explicit risk semantics.

Pure epsilon-DP and mu-GDP are different shapes of guarantee, so "the" mu of an epsilon
depends on which attack risk is to be preserved (Kulynych & Honkela):

- ``fpr=a``: the same worst-case multiplicative advantage TPR/FPR at FPR a (Prop. 3.1, Eq. 7);
- ``recall=b``: the same worst-case precision at recall (TPR) b (Prop. 3.2, Eq. 9);
- ``delta=d``: the same privacy profile point, delta_mu(epsilon) = d (Eq. 11);
- none: the GDP guarantee implied by *any* epsilon-DP mechanism,
  mu = -2 Phi^{-1}(1 / (1 + e^eps)) (Gomez et al. Prop. 6.1). This is the only reading
  that is a valid guarantee for every epsilon-DP mechanism; the others match one risk.

The rules of thumb mu = eps/5 (conservative, general purpose) and mu = eps/3 (when
low-probability events can be ignored) are in :func:`mu_rule_of_thumb`, and never used as
silent defaults.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from fdpkit.errors import ParameterError
from fdpkit._numerics import (
    check_nonnegative,
    check_real,
    check_probability,
    norm_isf,
    scalar_or_array,
)
from fdpkit.convert.gdp import mu_for_epsilon_delta


def mu_from_pure_epsilon(
    epsilon: Any, *, fpr: Any = None, recall: Any = None, delta: Any = None
) -> float | np.ndarray:
    """μ-GDP corresponding to pure ε-DP under one risk semantics.

    Parameters
    ----------
    epsilon : float or array_like
        The pure-DP budget, ≥ 0.
    fpr : float, optional
        Match the multiplicative advantage at this FPR (K&H Prop. 3.1).
    recall : float, optional
        Match the precision at this recall (K&H Prop. 3.2).
    delta : float, optional
        Match the privacy profile: δ_μ(ε) = δ (K&H Eq. 11).

    Notes
    -----
    At most one keyword may be given; with none, Gomez et al. Prop. 6.1.

    Examples
    --------
    >>> round(mu_from_pure_epsilon(1.0), 4)
    1.232
    >>> round(mu_from_pure_epsilon(1.0, fpr=0.01), 4)
    0.4024
    >>> round(mu_from_pure_epsilon(1.0, recall=0.01), 4)
    0.3539
    """
    chosen = [k for k, v in (("fpr", fpr), ("recall", recall), ("delta", delta)) if v is not None]
    if len(chosen) > 1:
        raise ParameterError(
            f"give at most one of fpr, recall, delta (one risk semantics), got {', '.join(chosen)}", chosen[0],
            tuple(dict.fromkeys((*chosen, "fpr", "recall", "delta"))))
    eps = check_nonnegative("epsilon", epsilon)
    if not chosen:
        # 2 isf(1 / (1 + e^eps)); past eps ~ 700 the probability leaves the normal floats
        # (e^710 overflows: mu read inf), so there isf is taken from its log, -log(1 + e^eps)
        with np.errstate(over="ignore"):
            direct = 2.0 * norm_isf(1.0 / (1.0 + np.exp(np.minimum(eps, 700.0))))
        big = np.asarray(eps) > 700.0
        if np.any(big):
            direct = np.where(big, -2.0 * special.ndtri_exp(-np.logaddexp(0.0, eps)), direct)
        return scalar_or_array(direct + 0.0, epsilon)  # + 0.0: isf(1/2) is -0.0, mu reads 0
    if chosen[0] == "delta":
        d = check_probability("delta", delta, open_low=True, open_high=True)
        return mu_for_epsilon_delta(eps if np.ndim(epsilon) else float(eps), d if np.ndim(delta) else float(d))
    if chosen[0] == "fpr":
        a = check_probability("fpr", fpr, open_low=True, open_high=True)
        e, a = np.broadcast_arrays(eps, a)
        knee = 1.0 / (np.exp(e) + 1.0)
        with np.errstate(over="ignore"):
            low = norm_isf(a) - norm_isf(np.minimum(np.exp(e) * a, 1.0))
        high = norm_isf(np.exp(-e) * (1.0 - a)) - norm_isf(1.0 - a)
        return scalar_or_array(np.where(a < knee, low, high), epsilon, fpr)
    b = check_probability("recall", recall, open_low=True, open_high=True)
    e, b = np.broadcast_arrays(eps, b)
    return scalar_or_array(norm_isf(np.exp(-e) * b) - norm_isf(b), epsilon, recall)


def mu_rule_of_thumb(epsilon: Any, divisor: float = 5.0) -> float | np.ndarray:
    """Kulynych & Honkela's rule of thumb μ = ε / divisor.

    ``divisor=5`` is their conservative general-purpose conversion; ``divisor=3`` is the
    less conservative one for settings where low-probability events can be ignored. A rule
    of thumb, not a guarantee: prefer :func:`mu_from_pure_epsilon` with a stated semantics.

    Examples
    --------
    >>> mu_rule_of_thumb(2.0)
    0.4
    """
    eps = check_nonnegative("epsilon", epsilon)
    div = check_real("divisor", divisor, allow_inf=True, scalar=True)
    if not (0 < div < math.inf):
        raise ParameterError(f"divisor must be a positive number, got {divisor!r}", "divisor")
    with np.errstate(over="ignore"):
        mu = eps / div
    if not np.isfinite(mu).all():
        raise ParameterError(f"divisor: epsilon / divisor overflows, got divisor={divisor!r}", "divisor")
    return scalar_or_array(mu, epsilon)
