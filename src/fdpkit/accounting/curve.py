r"""Mechanisms -> trade-off curves: closed forms where exact, else dp_accounting's PLD.

Derivation of the numeric curve
-------------------------------
dp_accounting represents each adjacency direction (remove, add) of a mechanism by a
discrete privacy-loss PMF: losses l_0 < ... < l_{n-1} on a grid of width ``discretization``
with masses p_i = Pr[Y = l_i] under the alternative ("upper") distribution, plus
m_inf = Pr[Y = +inf]. With pessimistic connect-the-dots discretisation its hockey-stick
divergence

    delta(eps) = m_inf + sum_{l_i > eps} (1 - e^{eps - l_i}) p_i            (1)

upper-bounds the mechanism's for every eps >= 0 (Doroshenko et al. 2022), and the
accountant certifies (eps, delta(eps))-DP for all eps >= 0, for both orderings of every
pair of neighbouring datasets (``get_delta_for_epsilon`` takes the larger direction).

The null-hypothesis masses come from the same PMF by change of measure,
q_i = Pr[X = l_i] = e^{-l_i} p_i (Gomez et al. Thm. A.7). Rejecting for large loss
(Neyman-Pearson; Gomez et al. Thm. A.10, Algorithm 2 of Kulynych et al. 2024) gives the
vertices

    alpha_k = sum_{i>k} q_i,   TPR_k = m_inf + sum_{i>k} p_i,

and consecutive vertices are joined by a segment of slope p_i/q_i = e^{l_i}. By Dong et
al. Prop. 2.12 the profile implied by a curve is delta(eps) = sup_alpha TPR - e^eps alpha,
attained at the vertex where the slope passes e^eps: for eps >= 0 it depends only on the
vertices built from non-negative losses, and it equals (1) exactly. fdpkit therefore keeps
those vertices (the steep part of the curve, from alpha = 0 to slope 1) and completes the
curve by symmetry (Dong et al. Def. F.1: an (eps, delta)-DP statement covers both
orderings): the steep vertices and their mirror images (alpha, TPR) -> (1 - TPR, 1 - alpha)
are joined by their upper concave hull; the halves meet on a segment of slope 1, the
eps = 0 line. The result is the symmetric curve implied by the accountant's privacy
profile {(eps, delta(eps)) : eps >= 0} (Dong et al. Thm. 2.4): its implied delta(eps) is
the accountant's, never smaller.
Both directions are combined pessimistically by the lower convex hull of their minimum
(``worst_case``), whose profile is the larger of the two, as in dp_accounting.

Only non-negative losses are used, so the masses at negative losses (where the
connect-the-dots PMF may carry a total slightly different from 1, about 1e-6 after
thousands of compositions) play no role. Masses are summed from the small end (suffix
sums), so alpha and TPR keep their digits in the tail; mirrored vertices take their beta
from alpha exactly. FFT round-off (masses of about -1e-18) is set to 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fdpkit._numerics import check_scalar
from fdpkit.accounting._pld_adapter import PmfArrays, pmf_arrays
from fdpkit.accounting.pld import build_pld
from fdpkit.curves import (
    EpsDeltaCurve,
    GaussianCurve,
    LaplaceCurve,
    PiecewiseLinearCurve,
    RandomizedResponseCurve,
    TradeOffCurve,
)
from fdpkit.mechanisms import (
    ApproxDP,
    Composed,
    Gaussian,
    Laplace,
    Mechanism,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)

#: Default value_discretization_interval of the PLD (dp_accounting's default, Gomez et al.).
DISCRETIZATION_DEFAULT = 1e-4
#: Allowed range of the discretization interval.
DISCRETIZATION_RANGE = (1e-6, 1.0)


def _gaussian_mu(mechanism: Mechanism) -> float | None:
    """mu if the mechanism is an (unsubsampled) composition of Gaussians, else None."""
    if isinstance(mechanism, Gaussian):
        return mechanism.mu
    if isinstance(mechanism, Subsampled) and mechanism.sample_rate == 1.0:
        return _gaussian_mu(mechanism.inner)
    if isinstance(mechanism, Repeated):
        inner = _gaussian_mu(mechanism.inner)
        return None if inner is None else inner * math.sqrt(mechanism.times)
    if isinstance(mechanism, Composed):
        mus = [_gaussian_mu(p) for p in mechanism.parts]
        return None if any(m is None for m in mus) else math.sqrt(sum(m * m for m in mus))
    return None


def closed_form_curve(mechanism: Mechanism) -> TradeOffCurve | None:
    """The exact closed-form curve of ``mechanism`` when one exists, else None.

    Compositions of Gaussians are mu-GDP with mu = sqrt(sum mu_i^2) (Dong et al. Cor. 3.3).
    """
    mu = _gaussian_mu(mechanism)
    if mu is not None:
        return GaussianCurve(mu)
    if isinstance(mechanism, Subsampled) and mechanism.sample_rate == 1.0:
        return closed_form_curve(mechanism.inner)
    if isinstance(mechanism, Laplace):
        return LaplaceCurve(mechanism.epsilon)
    if isinstance(mechanism, RandomizedResponse):
        return RandomizedResponseCurve(mechanism.epsilon)
    if isinstance(mechanism, PureDP):
        return EpsDeltaCurve(mechanism.epsilon)
    if isinstance(mechanism, ApproxDP):
        return EpsDeltaCurve(mechanism.epsilon, mechanism.delta)
    return None


def _steep_chain(a: PmfArrays) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (alpha, TPR) of the steep half of one direction (see module docs)."""
    keep = (a.losses >= 0) & (a.probs > 0)
    losses, p = a.losses[keep], a.probs[keep]
    m_inf = max(0.0, float(a.infinity_mass))
    with np.errstate(over="ignore"):
        q = np.exp(-losses) * p
    # vertices k = n-1, ..., k0 (alpha increasing): suffix sums from the top
    alpha = np.concatenate([[0.0], np.cumsum(q[::-1])])
    tpr = np.minimum(m_inf + np.concatenate([[0.0], np.cumsum(p[::-1])]), 1.0)
    if alpha[-1] > tpr[-1]:
        raise ValueError(
            f"the PLD's null mass above loss 0 ({alpha[-1]!r}) exceeds its alternative mass "
            f"({tpr[-1]!r}): not a valid privacy loss distribution"
        )
    return alpha, tpr


def _symmetric_hull(chains: list[tuple[np.ndarray, np.ndarray]]) -> PiecewiseLinearCurve:
    """Upper concave hull of the steep chains and their mirror images (alpha, TPR) ->
    (1 - TPR, 1 - alpha). The mirror of a vertex takes its beta from alpha exactly.

    When a steep half ends before the diagonal, it meets its mirror on the slope-1
    (eps = 0) segment and the hull is Dong et al.'s Symm(f) exactly; when rounding makes
    them overlap (by about 1e-7) the hull keeps every vertex, so the implied delta(eps)
    stays >= the accountant's for every eps >= 0. Several directions are combined by the
    same hull: that is ``worst_case`` of their symmetric curves."""
    a_parts, t_parts, b_parts = [], [], []
    for alpha, tpr in chains:
        a_parts += [alpha, (1.0 - tpr)[::-1]]
        t_parts += [tpr, (1.0 - alpha)[::-1]]
        b_parts += [1.0 - tpr, alpha[::-1]]
    a_all = np.concatenate(a_parts + [[1.0]])
    t_all = np.concatenate(t_parts + [[1.0]])
    b_all = np.concatenate(b_parts + [[0.0]])
    order = np.argsort(a_all, kind="stable")  # sorted runs: timsort merges them quickly
    return PiecewiseLinearCurve.lower_convex_hull(a_all[order], t_all[order], "lower", beta=b_all[order])


def direction_curve(a: PmfArrays) -> PiecewiseLinearCurve:
    """The symmetric curve implied by one direction's profile (see module docs)."""
    return _symmetric_hull([_steep_chain(a)])


def curve_from_pld(pld: Any) -> PiecewiseLinearCurve:
    """The certified (pessimistic, symmetric) trade-off curve of a dp_accounting PLD."""
    remove, add = pmf_arrays(pld)
    return _symmetric_hull([_steep_chain(d) for d in (remove, add) if d is not None])


def _check_discretization(discretization: Any) -> float:
    d = check_scalar("discretization", discretization)
    lo, hi = DISCRETIZATION_RANGE
    if not (lo <= d <= hi):
        raise ValueError(f"discretization must be in [{lo:g}, {hi:g}], got {discretization!r}")
    return d


@dataclass(frozen=True)
class Accounting:
    """A mechanism's curve and privacy profile, with how they were obtained.

    Attributes
    ----------
    mechanism : Mechanism
    curve : TradeOffCurve
        Exact (closed form) or a pessimistic lower bound (PLD).
    method : str
        ``"closed form"`` or ``"PLD"``.
    discretization : float or None
        The PLD's value discretization interval (None for closed forms).
    pld : object or None
        The dp_accounting PrivacyLossDistribution behind a numeric curve.
    """

    mechanism: Mechanism
    curve: TradeOffCurve
    method: str
    discretization: float | None
    pld: Any = field(default=None, repr=False)

    def epsilon_for_delta(self, delta: float) -> float:
        """epsilon at delta from the accountant's own profile (closed forms: exact)."""
        if self.pld is not None:
            if "_profile" not in self.__dict__:
                from fdpkit.accounting.profile import PldProfile

                object.__setattr__(self, "_profile", PldProfile(self.pld))
            return self.__dict__["_profile"].epsilon_for_delta(delta)
        return float(self.curve.epsilon_for_delta(delta))

    def delta_for_epsilon(self, epsilon: float) -> float:
        """delta at epsilon from the accountant's own profile (closed forms: exact)."""
        if self.pld is not None:
            return float(self.pld.get_delta_for_epsilon(epsilon))
        return float(self.curve.delta_for_epsilon(epsilon))


def account(mechanism: Mechanism, *, discretization: float = DISCRETIZATION_DEFAULT) -> Accounting:
    """Account ``mechanism``: its trade-off curve and privacy profile.

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian, Repeated
    >>> acc = account(Repeated(Gaussian(2.0), 4))
    >>> acc.method, acc.curve
    ('closed form', GaussianCurve(mu=1.0))
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")
    d = _check_discretization(discretization)
    exact = closed_form_curve(mechanism)
    if exact is not None:
        return Accounting(mechanism, exact, "closed form", None)
    pld = build_pld(mechanism, d)
    return Accounting(mechanism, curve_from_pld(pld), "PLD", d, pld)


def tradeoff_curve(mechanism: Mechanism, *, discretization: float = DISCRETIZATION_DEFAULT) -> TradeOffCurve:
    """The trade-off curve of ``mechanism``: exact closed forms where they exist (Gaussian
    compositions, Laplace, randomized response, pure and approximate DP), otherwise the
    curve certified by dp_accounting's pessimistic connect-the-dots PLD
    (a ``PiecewiseLinearCurve`` with ``bound="lower"``).

    >>> from fdpkit.mechanisms import dpsgd
    >>> c = tradeoff_curve(dpsgd(2.0, 0.01, 100), discretization=1e-3)
    >>> c.bound
    'lower'
    """
    return account(mechanism, discretization=discretization).curve
