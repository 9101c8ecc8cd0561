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
from fdpkit.curves import TradeOffCurve
from fdpkit.curves.renyi import RDPCurve, ZCDPCurve, check_rdp, check_rho, renyi_log_delta, zcdp_orders

#: Orders searched for the per-order tangent refinement of rho-zCDP conversions (only the
#: few with the smallest Canonne-Kamath-Steinke bound are refined, so a fine grid is cheap).
_TANGENT_ZCDP_ORDERS = 400
#: Regula falsi steps of the eps(delta) inversions.
_EPS_STEPS = 40
#: eps grid of :func:`profile_regret` (uniform, from 0).
PROFILE_GRID = 4001


def gaussian_mu_from_rho(rho: Any) -> float | np.ndarray:
    """mu = sqrt(2 rho): the Gaussian mechanism that is exactly rho-zCDP (a reading of rho,
    not a GDP bound for every rho-zCDP mechanism; see :func:`mu_bound_from_rho`).

    >>> gaussian_mu_from_rho(0.5)
    1.0
    """
    r = check_nonnegative("rho", rho)
    return scalar_or_array(np.sqrt(2.0 * r), rho)


def rho_from_gaussian_mu(mu: Any) -> float | np.ndarray:
    """rho = mu^2 / 2: the zCDP parameter of a Gaussian mechanism with GDP parameter mu
    (exact; the inverse of :func:`gaussian_mu_from_rho`).

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
    """The tight mu-GDP implied by rho-zCDP for every mechanism satisfying it (fitted on
    attacks with FPR and FNR >= 1e-10, like numeric curves): larger than sqrt(2 rho).

    >>> round(mu_bound_from_rho(0.5), 3)
    1.284
    """
    from fdpkit.fit import fit_gdp

    return float(fit_gdp(zcdp_curve(rho)).mu)


def epsilon_for_delta_from_rho(rho: Any, delta: Any) -> float:
    """Smallest eps with (eps, delta)-DP implied by rho-zCDP: the optimal conversion,
    rounded up (module docs).

    >>> round(epsilon_for_delta_from_rho(0.5, 1e-5), 3)
    4.728
    """
    d = check_scalar("delta", check_probability("delta", delta))
    r = check_rho(rho)
    if r == 0.0:
        return 0.0
    return _refined_epsilon(np.float64(r), None, zcdp_curve(r), d)


def delta_for_epsilon_from_rho(rho: Any, epsilon: Any) -> float | np.ndarray:
    """delta(eps) implied by rho-zCDP (optimal conversion, rounded up); the inverse of
    :func:`epsilon_for_delta_from_rho`.

    >>> delta_for_epsilon_from_rho(0.5, 4.729) <= 1e-5
    True
    """
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    r = check_rho(rho)
    if r == 0.0:
        return scalar_or_array(np.zeros(e.shape), epsilon)
    out = np.array([_refined_delta(np.float64(r), None, zcdp_curve(r), float(x)) for x in np.atleast_1d(e).ravel()])
    return scalar_or_array(out.reshape(e.shape), epsilon)


def classic_epsilon_for_delta_from_rho(rho: Any, delta: Any) -> float:
    """The classic rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016, Prop. 1.3): valid but
    loose; for comparison with :func:`epsilon_for_delta_from_rho`.

    >>> round(classic_epsilon_for_delta_from_rho(0.5, 1e-5), 3)
    5.299
    """
    r = check_rho(rho)
    d = check_scalar("delta", check_probability("delta", delta, open_low=True))
    return r + 2.0 * math.sqrt(r * math.log(1.0 / d))


def _rdp_curve(orders: Sequence[float], epsilons: Sequence[float]) -> RDPCurve:
    o, e = check_rdp(orders, epsilons)
    return _rdp_curve_cached(tuple(o.tolist()), tuple(e.tolist()))


@functools.lru_cache(maxsize=64)
def _rdp_curve_cached(orders: tuple, epsilons: tuple) -> RDPCurve:
    return RDPCurve(orders, epsilons)


def epsilon_for_delta_from_rdp(orders: Sequence[float], epsilons: Sequence[float], delta: Any) -> float:
    """Smallest eps with (eps, delta)-DP implied by the RDP list, rounded up: at most
    dp_accounting's RDP answer (Canonne et al. 2020 per order) and never below the optimal
    conversion of the whole list.

    >>> round(epsilon_for_delta_from_rdp([2, 4, 8, 16, 32], [1, 2, 4, 8, 16], 1e-5), 3)
    5.087
    """
    d = check_scalar("delta", check_probability("delta", delta))
    return _refined_epsilon(*check_rdp(orders, epsilons), _rdp_curve(orders, epsilons), d)


def delta_for_epsilon_from_rdp(orders: Sequence[float], epsilons: Sequence[float], epsilon: Any) -> float | np.ndarray:
    """delta(eps) implied by the RDP list (rounded up); the inverse of
    :func:`epsilon_for_delta_from_rdp`.

    >>> delta_for_epsilon_from_rdp([2, 4, 8], [1, 2, 4], 5.0) < 1e-2
    True
    """
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    o, ep = check_rdp(orders, epsilons)
    curve = _rdp_curve(orders, epsilons)
    out = np.array([_refined_delta(o, ep, curve, float(x)) for x in np.atleast_1d(e).ravel()])
    return scalar_or_array(out.reshape(e.shape), epsilon)


def _refined_delta(o: np.ndarray, e: np.ndarray | None, curve: TradeOffCurve, eps: float) -> float:
    """The smaller of two sound bounds: the curve's delta and the per-order tangent delta.
    ``e = None`` means rho-zCDP with rho = ``o`` (orders chosen freely, refined near the
    best order of the Canonne-Kamath-Steinke bound at ``eps``)."""
    d_curve = float(curve.delta_for_epsilon(eps))
    if not math.isfinite(eps):
        return d_curve
    if e is None:
        rho = float(o)
        t = zcdp_orders(rho, _TANGENT_ZCDP_ORDERS)
        cks = (t - 1.0) * (rho * t - eps + np.log1p(-1.0 / t)) - np.log(t)
        k = int(np.argmin(cks))
        fine = np.linspace(t[max(k - 1, 0)], t[min(k + 1, len(t) - 1)], 257)
        o, e = fine, rho * fine
    return min(d_curve, math.exp(min(0.0, renyi_log_delta(o, e, eps))))


def _refined_epsilon(o: np.ndarray, e: np.ndarray, curve: TradeOffCurve, d: float) -> float:
    """Smallest eps with _refined_delta(eps) <= d: Illinois regula falsi on log delta(eps)
    - log d, always returning the end of the bracket where the condition holds (safe)."""
    hi = float(curve.epsilon_for_delta(d))
    if not math.isfinite(hi) or hi == 0.0 or d == 0.0:
        return hi

    def g(x: float) -> float:
        return math.log(max(_refined_delta(o, e, curve, x), 1e-320)) - math.log(d)

    if g(0.0) <= 0.0:
        return 0.0
    g_hi = g(hi)
    if g_hi > 0.0:  # pragma: no cover - the curve's answer always satisfies it
        return hi
    lo = 0.95 * hi  # the curve's answer is within a few per cent of the refined one
    g_lo = g(lo)
    if g_lo <= 0.0:
        lo, g_lo = 0.0, g(0.0)
    side = 0
    for _ in range(_EPS_STEPS):
        x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo) if g_hi != g_lo else 0.5 * (lo + hi)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        gx = g(x)
        if gx <= 0.0:
            hi, g_hi = x, gx
            if side < 0:
                g_lo *= 0.5
            side = -1
        else:
            lo, g_lo = x, gx
            if side > 0:
                g_hi *= 0.5
            side = 1
        if hi - lo <= 1e-11 * hi:
            break
    return hi


def epsilon_for_delta_from_rdp(orders: Sequence[float], epsilons: Sequence[float], delta: Any) -> float:
    """Smallest eps with (eps, delta)-DP implied by the RDP list, rounded up: at most
    dp_accounting's RDP answer (Canonne et al. 2020 per order) and never below the optimal
    conversion of the whole list.

    >>> round(epsilon_for_delta_from_rdp([2, 4, 8, 16, 32], [1, 2, 4, 8, 16], 1e-5), 3)
    5.087
    """
    d = check_scalar("delta", check_probability("delta", delta))
    return _refined_epsilon(*check_rdp(orders, epsilons), _rdp_curve(orders, epsilons), d)


def delta_for_epsilon_from_rdp(orders: Sequence[float], epsilons: Sequence[float], epsilon: Any) -> float | np.ndarray:
    """delta(eps) implied by the RDP list (rounded up); the inverse of
    :func:`epsilon_for_delta_from_rdp`.

    >>> delta_for_epsilon_from_rdp([2, 4, 8], [1, 2, 4], 5.0) < 1e-2
    True
    """
    e = check_nonnegative("epsilon", epsilon, allow_inf=True)
    o, ep = check_rdp(orders, epsilons)
    curve = _rdp_curve(orders, epsilons)
    out = np.array([_refined_delta(o, ep, curve, float(x)) for x in np.atleast_1d(e).ravel()])
    return scalar_or_array(out.reshape(e.shape), epsilon)


def _refined_delta(o: np.ndarray, e: np.ndarray | None, curve: TradeOffCurve, eps: float) -> float:
    """The smaller of two sound bounds: the curve's delta and the per-order tangent delta.
    ``e = None`` means rho-zCDP with rho = ``o`` (orders chosen freely, refined near the
    best order of the Canonne-Kamath-Steinke bound at ``eps``)."""
    d_curve = float(curve.delta_for_epsilon(eps))
    if not math.isfinite(eps):
        return d_curve
    if e is None:
        rho = float(o)
        t = zcdp_orders(rho, _TANGENT_ZCDP_ORDERS)
        cks = (t - 1.0) * (rho * t - eps + np.log1p(-1.0 / t)) - np.log(t)
        k = int(np.argmin(cks))
        fine = np.linspace(t[max(k - 1, 0)], t[min(k + 1, len(t) - 1)], 257)
        o, e = fine, rho * fine
    return min(d_curve, math.exp(min(0.0, renyi_log_delta(o, e, eps))))


def _refined_epsilon(o: np.ndarray, e: np.ndarray, curve: TradeOffCurve, d: float) -> float:
    """Smallest eps with _refined_delta(eps) <= d, by bisection, returning the safe end."""
    hi = float(curve.epsilon_for_delta(d))
    if not math.isfinite(hi) or hi == 0.0:
        return hi
    if _refined_delta(o, e, curve, 0.0) <= d:
        return 0.0
    lo = 0.95 * hi  # the curve's answer is within a few per cent of the refined one
    if _refined_delta(o, e, curve, lo) <= d:
        lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _refined_delta(o, e, curve, mid) <= d:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-8 * hi:
            break
    return hi


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
    """Delta(delta_f, delta_g) of Gomez et al. Def. C.3: the regret of reporting the profile
    of ``g`` for a mechanism whose profile is that of ``f`` (module docs), evaluated on a
    uniform eps grid from 0 (a grid estimate of the supremum; symmetric curves).

    >>> from fdpkit import EpsDeltaCurve, GaussianCurve
    >>> round(profile_regret(GaussianCurve(1.0), GaussianCurve(1.0)), 12)
    0.0
    """
    for name, c in (("f", f), ("g", g)):
        if not isinstance(c, TradeOffCurve):
            raise ValueError(f"{name} must be a TradeOffCurve, got {type(c).__name__}")
    if eps_max is None:
        eps_max = 0.0
        for c in (f, g):
            try:
                eps_max = max(eps_max, float(c.epsilon_for_delta(1e-12)))
            except ValueError:  # pragma: no cover - defensive
                pass
        eps_max = min(max(eps_max, 1.0), 200.0) if math.isfinite(eps_max) else 200.0
    eps = np.linspace(0.0, eps_max, PROFILE_GRID)
    diff = (np.asarray(g.delta_for_epsilon(eps)) - np.asarray(f.delta_for_epsilon(eps))) / (1.0 + np.exp(eps))
    return max(0.0, float(np.max(diff)))
