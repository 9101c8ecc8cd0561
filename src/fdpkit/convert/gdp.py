"""mu-GDP and (epsilon, delta): the privacy profile and its inverses.

A mechanism is mu-GDP iff it is (epsilon, delta_mu(epsilon))-DP for every epsilon >= 0 with
(Dong, Roth & Su 2022, Cor. 2.13; Kulynych & Honkela Eq. 11)

    delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

Both terms can be far below machine epsilon, and their difference cancels, so fdpkit
evaluates it in log space: log delta = log Phi(a) + log(1 - exp(eps + log Phi(b) - log Phi(a)))
with a = -eps/mu + mu/2, b = -eps/mu - mu/2 (``log_ndtr`` and ``log1mexp``). That keeps
delta correct down to 1e-300.

Inverses round to the safe side: ``epsilon_for_delta_from_mu`` never returns an epsilon whose
delta_mu exceeds the given delta, and ``mu_for_epsilon_delta`` never returns a mu whose
delta_mu(eps) exceeds delta (so a Gaussian mechanism calibrated with it satisfies the
(eps, delta) statement).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fdpkit._deprecation import deprecated_alias
from fdpkit._numerics import MU_MAX, check_nonnegative, check_probability, check_real, scalar_or_array
from fdpkit._solve import solve_monotone
from fdpkit.curves.gaussian import gaussian_log_delta


_log_delta = gaussian_log_delta
#: Largest epsilon :func:`mu_for_epsilon_delta` solves for: above every epsilon_for_delta
#: of a mu <= MU_MAX at delta >= 1e-300 (about MU_MAX^2 / 2 + 37 MU_MAX), far below overflow.
EPSILON_SOLVE_MAX = 1e6
#: Phi(-x) < 1e-300 for x above this: delta_mu(eps) is then 0 in floating point.
_TAIL_ZERO = 37.5


def delta_for_epsilon_from_mu(mu: Any, epsilon: Any) -> float | np.ndarray:
    """δ_μ(ε): the smallest δ for which μ-GDP implies (ε, δ)-DP.

    Parameters
    ----------
    mu : float or array_like
        GDP parameter, ≥ 0 and finite.
    epsilon : float or array_like
        ε ≥ 0 (∞ gives 0). Broadcast against ``mu``.

    Returns
    -------
    float or ndarray

    Notes
    -----
    Kulynych & Honkela Eq. (11); Dong, Roth & Su (2022) Cor. 2.13. Log-space evaluation,
    accurate down to δ = 1e-300.

    Examples
    --------
    >>> round(delta_for_epsilon_from_mu(1.0, 1.0), 6)
    0.126937
    >>> delta_for_epsilon_from_mu(0.5, 15.0) > 0
    True
    """
    m = check_real("mu", mu, low=0.0, high=MU_MAX)
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    mb, eb = np.broadcast_arrays(m, e)
    out = np.empty(mb.shape, dtype=float)
    for idx in np.ndindex(mb.shape):
        mu_i, eps_i = float(mb[idx]), float(eb[idx])
        if mu_i == 0.0 or math.isinf(eps_i) or eps_i / mu_i - mu_i / 2.0 > _TAIL_ZERO:
            out[idx] = 0.0  # delta <= Phi(-eps/mu + mu/2) < 1e-300: below the float range
        else:
            out[idx] = math.exp(_log_delta(mu_i, eps_i))
    return scalar_or_array(out, mu, epsilon)


def _eps_upper(mu: float, delta: float) -> float:
    # delta_mu(eps) <= Phi(-eps/mu + mu/2); Phi(-x) <= exp(-x^2/2) gives this bound.
    return mu * mu / 2.0 + mu * math.sqrt(2.0 * max(-math.log(delta), 1.0)) + 1.0


def epsilon_for_delta_from_mu(mu: Any, delta: Any) -> float | np.ndarray:
    """The smallest ε ≥ 0 with δ_μ(ε) ≤ δ (inverse of
    :func:`delta_for_epsilon_from_mu` in ε).

    Rounded up: δ_μ of the returned ε never exceeds ``delta``. ``delta = 0``
    gives ``inf`` (μ-GDP with μ > 0 implies no pure DP); a δ at or above
    δ_μ(0) gives 0.

    Notes
    -----
    Kulynych & Honkela Fig. 6b. Brent's method on log δ_μ(ε), which is monotone.

    Examples
    --------
    >>> round(epsilon_for_delta_from_mu(1.0, 1e-5), 4)
    4.3772
    >>> epsilon_for_delta_from_mu(1.0, 0.0)
    inf
    """
    m = check_real("mu", mu, low=0.0, high=MU_MAX)
    d = check_probability("delta", delta)
    mb, db = np.broadcast_arrays(m, d)
    out = np.empty(mb.shape, dtype=float)
    for idx in np.ndindex(mb.shape):
        mu_i, delta_i = float(mb[idx]), float(db[idx])
        if mu_i == 0.0:
            out[idx] = 0.0
        elif delta_i == 0.0:
            out[idx] = math.inf
        elif _log_delta(mu_i, 0.0) <= math.log(delta_i):
            out[idx] = 0.0
        else:
            target = math.log(delta_i)
            res = solve_monotone(
                lambda x: _log_delta(mu_i, x) - target,
                low=0.0, high=_eps_upper(mu_i, delta_i), lower_limit=0.0, side="high",
            )
            out[idx] = res.root
    return scalar_or_array(out, mu, delta)


def mu_for_epsilon_delta(epsilon: Any, delta: Any) -> float | np.ndarray:
    """The largest μ whose GDP guarantee implies (ε, δ)-DP: the solution of
    δ_μ(ε) = δ, rounded down.

    A Gaussian mechanism with noise sd = sensitivity / μ then satisfies the (ε,
    δ) statement. Note the converse does not hold: an (ε, δ)-DP mechanism
    need not be μ-GDP for any finite μ (Gomez et al. Prop. 6.2).

    Notes
    -----
    Gomez et al. Table 3; Kulynych & Honkela Sec. 3 (privacy-profile semantics).

    Examples
    --------
    >>> round(mu_for_epsilon_delta(1.0, 1e-5), 4)
    0.2681
    """
    e = check_real("epsilon", epsilon, low=0.0, high=EPSILON_SOLVE_MAX)
    d = check_probability("delta", delta)
    eb, db = np.broadcast_arrays(e, d)
    out = np.empty(eb.shape, dtype=float)
    for idx in np.ndindex(eb.shape):
        eps_i, delta_i = float(eb[idx]), float(db[idx])
        if delta_i == 0.0:
            out[idx] = 0.0
        elif delta_i >= 1.0:
            out[idx] = math.inf
        else:
            target = math.log(delta_i)
            # log delta_mu(eps) increases in mu; solve in log(mu) from a rough start
            res = solve_monotone(
                lambda m: _log_delta(m, eps_i) - target,
                low=1e-3, high=10.0, lower_limit=1e-300, upper_limit=1e4,
                side="low", log_scale=True,
            )
            if not res.converged:
                raise ValueError(
                    f"no mu reaches delta={delta_i!r} at epsilon={eps_i!r}: {res.reason}"
                )
            out[idx] = res.root
    return scalar_or_array(out, epsilon, delta)


epsilon_for_delta = deprecated_alias(epsilon_for_delta_from_mu, "fdpkit.epsilon_for_delta",
                                     "fdpkit.epsilon_for_delta_from_mu")
"""Deprecated alias of :func:`epsilon_for_delta_from_mu` (renamed in 0.x, issue 23:
``epsilon_for_delta(delta)`` is the curve method; the GDP function names its representation).
Raises a :class:`DeprecationWarning`."""

delta_for_epsilon = deprecated_alias(delta_for_epsilon_from_mu, "fdpkit.delta_for_epsilon",
                                     "fdpkit.delta_for_epsilon_from_mu")
"""Deprecated alias of :func:`delta_for_epsilon_from_mu` (renamed in 0.x, issue 23). Raises a
:class:`DeprecationWarning`."""
