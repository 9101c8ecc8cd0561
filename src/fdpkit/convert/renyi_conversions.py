r"""Conversions for the Rényi family: rho <-> the Gaussian mu reading, rho -> (eps, delta),
RDP -> (eps, delta), and the regret between two privacy profiles (Gomez et al. Def. C.3).

rho and mu (a reading, not a bound)
    A Gaussian mechanism with mu = sqrt(2 rho) is exactly rho-zCDP (Bun & Steinke 2016,
    Prop. 1.6): ``gaussian_mu_from_rho`` / ``rho_from_gaussian_mu`` are that pair. It is not
    a mu-GDP guarantee for every rho-zCDP mechanism: the rho-zCDP curve lies below
    G_sqrt(2 rho), and the tight mu of the guarantee itself is ``fit_gdp(ZCDPCurve(rho))``
    (``mu_bound_from_rho``), which is larger.

rho, RDP -> (eps, delta): the optimal conversion, soundly
    delta(eps) = sup_alpha 1 - e^eps alpha - f(alpha) of the guarantee's curve f (Dong et
    al. 2022, Prop. 2.12). With f the sound lower bound of :mod:`fdpkit.curves.renyi`,
    whose lines are the supporting lines of the Rényi regions, this is the optimal
    conversion (Asoodeh et al. 2021; Balle et al. 2020) rounded up: never below it, and
    below both the classic rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016, Prop. 1.3)
    and Canonne, Kamath & Steinke (2020, Prop. 12), which dp_accounting's RDP accountant
    uses. ``classic_epsilon_for_delta_from_rho`` and ``cks_delta_for_epsilon_from_rdp``
    are kept for comparison.

Profile regret (Gomez et al. Def. C.3; Kaissis et al. 2024)
    Delta(delta, delta~) = inf{kappa >= 0 : delta(eps) + kappa (1 + e^eps) >= delta~(eps)
    for all eps} = sup_eps (delta~(eps) - delta(eps)) / (1 + e^eps). For symmetric curves
    the eps < 0 half gives the same values (delta(-eps) = 1 - e^-eps (1 - delta(eps))), so
    eps >= 0 suffices; it equals the curve regret of Def. 2.6.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from fdpkit._numerics import check_nonnegative, check_probability, check_scalar, scalar_or_array
from fdpkit.curves import TradeOffCurve, check_curve
from fdpkit.curves.renyi import (RDPCurve, ZCDPCurve, check_rdp, check_rho, refined_delta_for_epsilon,
                                 refined_epsilon_for_delta)
from fdpkit.fit import fit_gdp_adapted

#: eps grid of :func:`profile_regret` (uniform, from 0).
PROFILE_GRID = 4001


def gaussian_mu_from_rho(rho: Any) -> float | np.ndarray:
    """μ = √(2 ρ): the Gaussian mechanism that is exactly ρ-zCDP (a reading of ρ,
    not a GDP bound for every ρ-zCDP mechanism; see :func:`mu_bound_from_rho`).

    Examples
    --------
    >>> gaussian_mu_from_rho(0.5)
    1.0
    """
    r = check_nonnegative("rho", rho)
    with np.errstate(over="ignore"):  # 2 rho overflows past 9e307: there sqrt(2) sqrt(rho)
        return scalar_or_array(np.where(r < 8e307, np.sqrt(2.0 * r), math.sqrt(2.0) * np.sqrt(r)), rho)


def rho_from_gaussian_mu(mu: Any) -> float | np.ndarray:
    """ρ = μ² / 2: the zCDP parameter of a Gaussian mechanism with GDP parameter μ
    (exact; the inverse of :func:`gaussian_mu_from_rho`).

    Examples
    --------
    >>> rho_from_gaussian_mu(1.0)
    0.5
    """
    m = check_nonnegative("mu", mu)
    return scalar_or_array(0.5 * m * m, mu)


@functools.lru_cache(maxsize=64)
def _zcdp_curve(rho: float) -> ZCDPCurve:
    return ZCDPCurve(rho)


def zcdp_curve(rho: Any) -> ZCDPCurve:
    """The (cached) sound curve of rho-zCDP."""
    return _zcdp_curve(check_rho(rho))


def mu_bound_from_rho(rho: Any) -> float:
    """The tight μ-GDP implied by ρ-zCDP for every mechanism satisfying it, fitted as
    :func:`fdpkit.privacy_report` fits it (attacks with FPR and FNR ≥ 1e-10, the range
    lowered where μ is too large for it, from ρ ~ 24): larger than √(2 ρ).

    Examples
    --------
    >>> round(mu_bound_from_rho(0.5), 3)
    1.284
    """
    return float(fit_gdp_adapted(zcdp_curve(rho)).mu)


def epsilon_for_delta_from_rho(rho: Any, delta: Any) -> float:
    """Smallest ε with (ε, δ)-DP implied by ρ-zCDP: the optimal conversion,
    rounded up (module docs).

    Examples
    --------
    >>> round(epsilon_for_delta_from_rho(0.5, 1e-5), 3)
    4.728
    """
    d = check_scalar("delta", check_probability("delta", delta))
    r = check_rho(rho)
    if r == 0.0:
        return 0.0
    return refined_epsilon_for_delta(zcdp_curve(r), d, rho=r)


def delta_for_epsilon_from_rho(rho: Any, epsilon: Any) -> float | np.ndarray:
    """δ(ε) implied by ρ-zCDP (optimal conversion, rounded up); the inverse of
    :func:`epsilon_for_delta_from_rho`.

    Examples
    --------
    >>> delta_for_epsilon_from_rho(0.5, 4.729) <= 1e-5
    True
    """
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    r = check_rho(rho)
    if r == 0.0:
        return scalar_or_array(np.zeros(e.shape), epsilon)
    out = np.array([refined_delta_for_epsilon(zcdp_curve(r), float(x), rho=r) for x in np.atleast_1d(e).ravel()])
    return scalar_or_array(out.reshape(e.shape), epsilon)


def classic_epsilon_for_delta_from_rho(rho: Any, delta: Any) -> float:
    """The classic ρ + 2 √(ρ log(1/δ)) (Bun & Steinke 2016, Prop. 1.3): valid but
    loose; for comparison with :func:`epsilon_for_delta_from_rho`.

    Examples
    --------
    >>> round(classic_epsilon_for_delta_from_rho(0.5, 1e-5), 3)
    5.299
    """
    r = check_rho(rho)
    d = check_scalar("delta", check_probability("delta", delta, open_low=True))
    if r == 0.0:
        return 0.0  # no privacy loss at all (log(1/delta) may be inf at delta = 5e-324)
    return r + 2.0 * math.sqrt(r * -math.log(d))


def _rdp_curve(orders: Sequence[float], epsilons: Sequence[float]) -> RDPCurve:
    o, e = check_rdp(orders, epsilons)
    return _rdp_curve_cached(tuple(o.tolist()), tuple(e.tolist()))


@functools.lru_cache(maxsize=64)
def _rdp_curve_cached(orders: tuple, epsilons: tuple) -> RDPCurve:
    return RDPCurve(orders, epsilons)


def epsilon_for_delta_from_rdp(orders: Sequence[float], epsilons: Sequence[float], delta: Any) -> float:
    """Smallest ε with (ε, δ)-DP implied by the RDP list, rounded up: at most
    dp_accounting's RDP answer (Canonne et al. 2020 per order) and never below the optimal
    conversion of the whole list.

    Examples
    --------
    >>> round(epsilon_for_delta_from_rdp([2, 4, 8, 16, 32], [1, 2, 4, 8, 16], 1e-5), 3)
    5.087
    """
    d = check_scalar("delta", check_probability("delta", delta))
    o, e = check_rdp(orders, epsilons)
    return refined_epsilon_for_delta(_rdp_curve(orders, epsilons), d, orders=o, epsilons=e)


def delta_for_epsilon_from_rdp(orders: Sequence[float], epsilons: Sequence[float], epsilon: Any) -> float | np.ndarray:
    """δ(ε) implied by the RDP list (rounded up); the inverse of
    :func:`epsilon_for_delta_from_rdp`.

    Examples
    --------
    >>> delta_for_epsilon_from_rdp([2, 4, 8], [1, 2, 4], 5.0) < 1e-2
    True
    """
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    o, ep = check_rdp(orders, epsilons)
    curve = _rdp_curve(orders, epsilons)
    out = np.array([refined_delta_for_epsilon(curve, float(x), orders=o, epsilons=ep) for x in np.atleast_1d(e).ravel()])
    return scalar_or_array(out.reshape(e.shape), epsilon)


def cks_delta_for_epsilon_from_rdp(orders: Sequence[float], epsilons: Sequence[float], epsilon: Any) -> float:
    """min over orders of e^((t-1)(eps_t - eps)) (1 - 1/t)^(t-1) / t (Canonne, Kamath &
    Steinke 2020, Prop. 12; dp_accounting's ``compute_delta``): valid, looser than
    :func:`delta_for_epsilon_from_rdp`; for comparison.

    >>> cks_delta_for_epsilon_from_rdp([2, 4, 8], [1, 2, 4], 5.0) >= delta_for_epsilon_from_rdp([2, 4, 8], [1, 2, 4], 5.0)
    True
    """
    o, e = check_rdp(orders, epsilons)
    eps = check_scalar("epsilon", check_nonnegative("epsilon", epsilon))
    with np.errstate(invalid="ignore"):
        logd = (o - 1.0) * (e - eps + np.log1p(-1.0 / o)) - np.log(o)
    logd = logd[np.isfinite(logd)]
    return float(min(1.0, math.exp(min(0.0, float(np.min(logd)))))) if logd.size else 1.0


def profile_regret(f: TradeOffCurve, g: TradeOffCurve, *, eps_max: float | None = None) -> float:
    """Δ(δ_f, δ_g) of Gomez et al. Def. C.3: the regret of reporting the profile
    of ``g`` for a mechanism whose profile is that of ``f`` (module docs), evaluated on a
    uniform ε grid from 0 (a grid estimate of the supremum; symmetric curves).

    Examples
    --------
    >>> from fdpkit import EpsDeltaCurve, GaussianCurve
    >>> round(profile_regret(GaussianCurve(1.0), GaussianCurve(1.0)), 12)
    0.0
    """
    for name, c in (("f", f), ("g", g)):
        check_curve(c, name)
    if eps_max is None:
        eps_max = 0.0
        for c in (f, g):
            try:
                eps_max = max(eps_max, float(c.epsilon_for_delta(1e-12)))
            except ValueError:  # pragma: no cover - defensive
                pass
        eps_max = min(max(eps_max, 1.0), 200.0) if math.isfinite(eps_max) else 200.0
    else:  # a string, NaN, an integer past the floats: was a NumPy error from linspace
        eps_max = float(check_nonnegative("eps_max", check_scalar("eps_max", eps_max)))
    eps = np.linspace(0.0, eps_max, PROFILE_GRID)
    diff = (np.asarray(g.delta_for_epsilon(eps)) - np.asarray(f.delta_for_epsilon(eps))) / (1.0 + np.exp(eps))
    return max(0.0, float(np.max(diff)))
