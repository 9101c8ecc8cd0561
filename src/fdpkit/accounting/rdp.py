r"""Rényi DP accounting: eps(t) of mechanisms and guarantees, the curve of anything that
contains a Rényi guarantee, and the tight rho* of Gomez et al. Eq. (25).

eps(t) (an upper bound on the Rényi divergence of order t, both orderings)
    - Gaussian with mu = sensitivity / sigma: t mu^2 / 2 (exact; Mironov 2017, Prop. 7);
    - Laplace with epsilon = sensitivity / b: (1/(t-1)) log[t/(2t-1) e^((t-1) eps) +
      (t-1)/(2t-1) e^(-t eps)] (exact; Mironov 2017, Prop. 6), in log space;
    - randomized response and any pure epsilon-DP mechanism: the divergence of the binary
      randomized response with p = e^eps/(1+e^eps), which dominates every epsilon-DP
      mechanism (Kairouz et al. 2015), in log space;
    - Poisson-subsampled Gaussian: dp_accounting's RDP formula at integer orders (exact;
      Mironov, Talwar & Zhang 2019; evaluated natively, the same floats), log-convex
      interpolation in between
      (``_rdp_adapter``); orders it cannot compute count as ``inf`` (no constraint);
    - rho-zCDP: rho t; an RDP list: eps(t_j) for the smallest listed t_j >= t (RDP is
      non-decreasing in t), ``inf`` past the largest listed order;
    - composition adds (Mironov 2017, Prop. 1); (epsilon, delta > 0)-DP has no finite RDP.

Tight rho* (Gomez et al. Eq. 25)
    rho* = inf{rho >= 0 : eps(t) <= rho t for all t > 1} = sup_{t>1} eps(t)/t. A finite
    grid only gives a lower bound of the supremum; fdpkit returns a sound upper bound
    instead: on [t_i, t_(i+1)], eps(t)/t <= eps(t_(i+1))/t_i (eps is non-decreasing), on
    (1, t_1] it is <= eps(t_1), and past the last order the tail bound eps(t) <= s t + C
    of the mechanism gives eps(t)/t <= s + C/t_max (Gaussian noise: s = mu^2/2, since
    subsampling cannot raise a Rényi divergence by joint quasi-convexity, van Erven &
    Harremoës 2014, Thm. 13; pure-DP mechanisms: s = 0, C = epsilon). Near an interior
    maximum the grid is refined so the bracket is tight. For DP-SGD eps(t)/t rises to the
    Gaussian's mu^2/2 as t grows, so rho* is the un-subsampled value T/(2 sigma^2):
    zCDP cannot express privacy amplification by subsampling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fdpkit._numerics import check_nonnegative, check_probability, check_scalar
from fdpkit.accounting._rdp_adapter import poisson_gaussian_rdp
from fdpkit.accounting.result import Accounting
from fdpkit.curves import TradeOffCurve
from fdpkit.curves.renyi import (RDPCurve, ZCDPCurve, refined_delta_for_epsilon,
                                 refined_epsilon_for_delta)
from fdpkit.mechanisms import (ApproxDP, Gaussian, Laplace, Mechanism, PureDP, RandomizedResponse,
                               Subsampled, elementary_tree, fold, walk)
from fdpkit.mechanisms.renyi_guarantees import RDP, ZCDP

#: Orders at which mechanisms are accounted for their RDP curve: 1 + 10^-3..10^-0.5 (for
#: closed forms; subsampled Gaussians are bounded by order 2 there), every integer to 64,
#: then powers of two (dp_accounting computes integer orders exactly).
RDP_ORDERS_DEFAULT = np.concatenate([1.0 + np.geomspace(1e-3, 0.5, 12), np.arange(2.0, 65.0),
                                     [80.0, 96.0, 128.0, 192.0, 256.0]])
#: Orders of the rho* search (refined where the bracket is loosest).
RHO_ORDERS = np.unique(np.concatenate([1.0 + np.geomspace(1e-4, 1023.0, 96), np.arange(2.0, 33.0)]))
#: Points inserted per refinement, refinement rounds, and the bracket's target tightness.
_REFINE = 8
_REFINE_ROUNDS = 6
_RHO_RTOL = 1e-3


def contains_renyi(mechanism: Mechanism) -> bool:
    """Whether ``mechanism`` is or contains a ZCDP or RDP guarantee."""
    return any(isinstance(m, (ZCDP, RDP)) for m, _ in walk(mechanism))


def zcdp_rho(mechanism: Mechanism) -> float | None:
    """rho when ``mechanism`` is exactly rho-zCDP by closed form (zCDP guarantees, Gaussian
    noise and their compositions; Bun & Steinke 2016, Lemmas 2.3, 2.8), else None."""
    return _zcdp_rho(elementary_tree(mechanism))


def _zcdp_rho(mechanism: Mechanism) -> float | None:
    return fold(mechanism, _zcdp_leaf,
                repeat=lambda inner, times: None if inner is None else inner * times,
                compose=lambda parts: None if any(p is None for p in parts) else float(sum(parts)))


def _zcdp_leaf(mechanism: Mechanism) -> float | None:
    if isinstance(mechanism, ZCDP):
        return mechanism.rho
    if isinstance(mechanism, Gaussian):
        return 0.5 * mechanism.mu ** 2
    return None


def _list_orders(mechanism: Mechanism) -> list[np.ndarray]:
    return [np.asarray(m.orders) for m, _ in walk(mechanism) if isinstance(m, RDP)]


def _binary_rr(eps: float, t: np.ndarray) -> np.ndarray:
    """D_t of randomized response with p = e^eps / (1 + e^eps), in log space."""
    lp, lq = -np.logaddexp(0.0, -eps), -np.logaddexp(0.0, eps)  # log p, log(1 - p)
    val = np.logaddexp(t * lp + (1 - t) * lq, t * lq + (1 - t) * lp) / (t - 1.0)
    return np.minimum(np.maximum(val, 0.0), eps)


def _laplace(eps: float, t: np.ndarray) -> np.ndarray:
    a = np.log(t / (2 * t - 1)) + (t - 1) * eps
    b = np.log((t - 1) / (2 * t - 1)) - t * eps
    return np.minimum(np.maximum(np.logaddexp(a, b) / (t - 1.0), 0.0), eps)


def rdp_epsilons(mechanism: Mechanism, orders) -> np.ndarray:
    """Upper bounds on the Rényi divergence eps(t) of ``mechanism`` at ``orders`` (module
    docs); ``inf`` where nothing finite is known.

    >>> from fdpkit.mechanisms import Gaussian
    >>> rdp_epsilons(Gaussian(2.0), [2.0, 10.0]).tolist()
    [0.25, 1.25]
    """
    return _rdp_epsilons(elementary_tree(mechanism), np.asarray(orders, dtype=float))


def _rdp_epsilons(mechanism: Mechanism, t: np.ndarray) -> np.ndarray:
    return fold(mechanism, lambda leaf: _rdp_leaf(leaf, t),
                repeat=lambda inner, times: times * inner,
                compose=lambda parts: np.sum(parts, axis=0))


def _rdp_leaf(mechanism: Mechanism, t: np.ndarray) -> np.ndarray:
    if isinstance(mechanism, ZCDP):
        return mechanism.rho * t
    if isinstance(mechanism, RDP):
        o, e = np.asarray(mechanism.orders), np.asarray(mechanism.epsilons)
        idx = np.searchsorted(o, t, side="left")
        return np.where(idx < len(o), e[np.minimum(idx, len(o) - 1)], np.inf)
    if isinstance(mechanism, Gaussian):
        return 0.5 * mechanism.mu ** 2 * t
    if isinstance(mechanism, Laplace):
        return _laplace(mechanism.epsilon, t)
    if isinstance(mechanism, (RandomizedResponse, PureDP)):
        return _binary_rr(mechanism.epsilon, t)
    if isinstance(mechanism, ApproxDP):
        return _binary_rr(mechanism.epsilon, t) if mechanism.delta == 0 else np.full(t.shape, np.inf)
    if isinstance(mechanism, Subsampled):  # at a rate below 1 (fold passes rate 1 through)
        inner = mechanism.inner
        if isinstance(inner, Gaussian):
            return poisson_gaussian_rdp(mechanism.sample_rate, inner.sigma / inner.sensitivity, t)
        raise ValueError("RDP accounting of subsampling supports Gaussian inner mechanisms, got "
                         f"{type(inner).__name__}")
    if isinstance(mechanism, Mechanism):
        raise ValueError(f"RDP accounting does not cover {type(mechanism).__name__} mechanisms "
                         "(no Rényi divergence bound is known to fdpkit for them)")
    raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")


def _noise_only(mechanism: Mechanism) -> bool:
    """Gaussian noise (possibly Poisson-subsampled), repeated or composed: nothing else."""
    return fold(mechanism, _noise_leaf, repeat=lambda inner, times: inner, compose=all,
                through=lambda node: False)


def _noise_leaf(mechanism: Mechanism) -> bool:
    if isinstance(mechanism, Gaussian):
        return True
    if isinstance(mechanism, Subsampled):  # at any rate: the inner mechanism itself is Gaussian
        return isinstance(mechanism.inner, Gaussian)
    return False


def _monotone(eps: np.ndarray) -> np.ndarray:
    """Make accountant output non-decreasing in the order, soundly: the true eps(t) is at
    most the reported eps(s) for every s >= t, so eps(t) is replaced by min_{s >= t} eps(s)
    (dp_accounting's fractional orders just above 1 can be far looser than order 2)."""
    return np.minimum.accumulate(np.asarray(eps, dtype=float)[::-1])[::-1]


def _tail(mechanism: Mechanism) -> tuple[float, float]:
    """(s, C) with eps(t) <= s t + C for every t > 1 (module docs); inf when unknown."""
    return fold(mechanism, _tail_leaf,
                repeat=lambda sc, times: (sc[0] * times, sc[1] * times),
                compose=lambda parts: (sum(p[0] for p in parts), sum(p[1] for p in parts)),
                through=lambda node: True)  # subsampling never raises the tail


def _tail_leaf(mechanism: Mechanism) -> tuple[float, float]:
    if isinstance(mechanism, ZCDP):
        return mechanism.rho, 0.0
    if isinstance(mechanism, Gaussian):
        return 0.5 * mechanism.mu ** 2, 0.0
    if isinstance(mechanism, (Laplace, RandomizedResponse, PureDP)):
        return 0.0, mechanism.epsilon
    if isinstance(mechanism, ApproxDP):
        return (0.0, mechanism.epsilon) if mechanism.delta == 0 else (math.inf, math.inf)
    return math.inf, math.inf  # an RDP list says nothing past its largest order


@dataclass(frozen=True)
class RhoFit:
    """Tight ρ* of a mechanism (Gomez et al. Eq. 25).

    Attributes
    ----------
    rho : float
        Sound upper bound on supₜ ε(t)/t (``inf`` when no finite ρ holds).
    order : float
        The order where ε(t)/t is largest on the grid (``inf``: approached as t grows).
    reason : str
    """

    rho: float
    order: float
    reason: str


def tight_rho(mechanism: Mechanism, *, orders=None) -> RhoFit:
    """The smallest ρ such that ``mechanism`` is ρ-zCDP, rounded up soundly (Gomez et
    al. Eq. 25, App. C.3; module docs).

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian, dpsgd
    >>> tight_rho(Gaussian(2.0)).rho
    0.125
    >>> round(tight_rho(dpsgd(9.4, 0.32768, 2000)).rho, 4)   # T / (2 sigma^2)
    11.3173
    """
    mechanism = elementary_tree(mechanism)  # DP-SGD runs read as elementary mechanisms, once
    exact = _zcdp_rho(mechanism)
    if exact is not None:
        return RhoFit(float(exact), math.inf, "exact (zCDP closed form)")
    s, c = _tail(mechanism)
    if c == 0.0 and math.isfinite(s) and _noise_only(mechanism):
        # Gaussian noise only: eps(t) <= s t for every t, and eps(t)/t -> s as t grows
        # (each subsampled step has E[(1 - q + q e^L)^t] >= q^t E[e^(tL)]), so rho* = s
        return RhoFit(s, math.inf, "eps(t)/t rises to the Gaussian value mu^2/2 per step as t "
                      "grows: subsampling does not lower rho (sup reached as t -> inf)")
    if not (math.isfinite(s) and math.isfinite(c)):
        return RhoFit(math.inf, math.inf, "no finite bound on eps(t) for all orders t > 1, so no "
                      "finite rho (an RDP list says nothing past its largest order; "
                      "(epsilon, delta > 0)-DP and blatant disclosure have no finite Rényi "
                      "divergence)")
    t = np.asarray(RHO_ORDERS if orders is None else orders, dtype=float)
    e = _rdp_epsilons(mechanism, t)
    keep = np.isfinite(e)  # orders the accountant could not compute: the tail bound covers them
    t, e = t[keep], _monotone(e[keep])
    if t.size == 0:
        return RhoFit(s + c, math.inf, "tail bound eps(t) <= s t + C only")
    for _ in range(_REFINE_ROUNDS + 1):
        # on (1, t_0] and [t_i, t_(i+1)]: eps(t)/t <= min(eps(right end)/left end, s + C/left end)
        left = np.concatenate([[1.0], t])
        right_eps = np.concatenate([e, [math.inf]])
        bracket = np.minimum(right_eps / left, s + c / left)
        best = float(np.max(e / t))
        loose = np.flatnonzero(bracket > best * (1.0 + _RHO_RTOL))
        loose = loose[(loose > 0) & (loose < len(t))]  # interior intervals [t_(k-1), t_k]
        if loose.size == 0 or _ == _REFINE_ROUNDS:
            break
        fine = np.concatenate([np.linspace(t[k - 1], t[k], _REFINE + 2)[1:-1] for k in loose])
        ef = _rdp_epsilons(mechanism, fine)
        ok = np.isfinite(ef)
        t_all = np.concatenate([t, fine[ok]])
        order = np.argsort(t_all, kind="stable")
        t = t_all[order]
        e = _monotone(np.concatenate([e, ef[ok]])[order])
    k = int(np.argmax(bracket))
    rho = float(np.max(bracket))
    j = int(np.argmax(e / t))
    if k == len(t):
        return RhoFit(rho, math.inf, "eps(t)/t approaches its supremum as t grows (tail bound "
                      f"{rho:.6g}; largest grid value {float(np.max(e / t)):.6g})")
    return RhoFit(rho, float(t[j]), f"largest eps(t)/t near order {t[j]:.4g}, bracketed on a "
                  f"grid of {len(t)} orders (grid value {float(np.max(e / t)):.6g})")


@dataclass(frozen=True)
class RenyiAccounting(Accounting):
    """Accounting through Rényi guarantees (``method = "RDP"``): the curve of
    :func:`renyi_curve`, and epsilon/delta from the per-order tangent refinement of
    :func:`fdpkit.curves.renyi.refined_delta_for_epsilon` (sound, never looser than the
    curve's own profile)."""

    rho: float | None = None
    orders: tuple = ()
    epsilons: tuple = ()

    def _kw(self) -> dict:
        if self.rho is not None:
            return {"rho": self.rho}
        return {"orders": np.asarray(self.orders), "epsilons": np.asarray(self.epsilons)}

    def epsilon_for_delta(self, delta: float) -> float:
        """ε at ``delta`` implied by the RDP curve (refined conversion; sound)."""
        d = check_scalar("delta", check_probability("delta", delta))
        return refined_epsilon_for_delta(self.curve, d, **self._kw())

    def delta_for_epsilon(self, epsilon: float) -> float:
        """δ at ``epsilon`` implied by the RDP curve (refined conversion; sound)."""
        e = check_scalar("epsilon", check_nonnegative("epsilon", epsilon, allow_inf=True))
        return refined_delta_for_epsilon(self.curve, e, **self._kw())


def renyi_accounting(mechanism: Mechanism, *, orders=None) -> RenyiAccounting:
    """Account a mechanism that contains ZCDP or RDP guarantees (see :func:`renyi_curve`).

    >>> from fdpkit.mechanisms.renyi_guarantees import ZCDP
    >>> acc = renyi_accounting(ZCDP(0.5))
    >>> acc.method, round(acc.epsilon_for_delta(1e-5), 3)
    ('RDP', 4.728)
    """
    if isinstance(mechanism, Mechanism):  # a DP-SGD run is accounted (and kept) in elementary form
        mechanism = mechanism.elementary() or mechanism
    plain = elementary_tree(mechanism)
    rho = _zcdp_rho(plain)
    if rho is not None:
        return RenyiAccounting(mechanism, ZCDPCurve(rho), "RDP", None, rho=float(rho))
    t, e = _rdp_list(plain, orders)
    return RenyiAccounting(mechanism, RDPCurve(t, e), "RDP", None, orders=tuple(t), epsilons=tuple(e))


def _rdp_list(mechanism: Mechanism, orders) -> tuple[np.ndarray, np.ndarray]:
    """(orders, eps) of an elementary mechanism tree: finite entries only, made monotone."""
    if orders is None:
        lists = _list_orders(mechanism)
        orders = np.unique(np.concatenate(lists)) if lists else RDP_ORDERS_DEFAULT
    t = np.asarray(orders, dtype=float)
    e = _rdp_epsilons(mechanism, t)
    keep = np.isfinite(e)
    if not keep.any():
        raise ValueError(f"mechanism has no finite Rényi divergence at any order: {mechanism.describe()}")
    return t[keep], _monotone(e[keep])


def renyi_curve(mechanism: Mechanism, *, orders=None) -> TradeOffCurve:
    """The sound trade-off curve of a mechanism through its Rényi guarantees: ZCDPCurve
    when it is exactly rho-zCDP, else the RDPCurve of its eps(t) at the orders of the RDP
    lists it contains (or ``orders``, default :data:`RDP_ORDERS_DEFAULT`).

    >>> from fdpkit.mechanisms.renyi_guarantees import ZCDP
    >>> renyi_curve(ZCDP(0.5)).bound
    'lower'
    """
    mechanism = elementary_tree(mechanism)
    rho = _zcdp_rho(mechanism)
    if rho is not None:
        return ZCDPCurve(rho)
    return RDPCurve(*_rdp_list(mechanism, orders))


def rdp_guarantee(mechanism: Mechanism, *, orders=None) -> RDP:
    """The RDP list of ``mechanism`` at ``orders`` (finite entries only), as an RDP value.

    >>> from fdpkit.mechanisms import Gaussian
    >>> rdp_guarantee(Gaussian(1.0), orders=[2, 3]).epsilons
    (1.0, 1.5)
    """
    t = np.asarray(RDP_ORDERS_DEFAULT if orders is None else orders, dtype=float)
    e = rdp_epsilons(mechanism, t)
    keep = np.isfinite(e)
    if not keep.any():
        raise ValueError(f"mechanism has no finite Rényi divergence at any order: {mechanism.describe()}")
    return RDP(tuple(t[keep]), tuple(_monotone(e[keep])))


__all__ = ["RDP_ORDERS_DEFAULT", "RenyiAccounting", "RhoFit", "contains_renyi", "rdp_epsilons",
           "rdp_guarantee", "renyi_accounting", "renyi_curve", "tight_rho", "zcdp_rho"]
