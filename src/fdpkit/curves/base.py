"""The trade-off curve contract shared by every curve in fdpkit.

A trade-off curve f (Dong, Roth & Su 2022, Def. 2.1) maps a false-positive rate alpha
(type I error) to the smallest false-negative rate beta (type II error) that any test
reaches at that alpha. Valid curves are convex, continuous, non-increasing, and satisfy
f(alpha) <= 1 - alpha. TPR = 1 - beta is the power of the best attack.

Following ``scipy.stats``, the public methods validate and broadcast, and subclasses
implement private vectorised hooks (``_beta``, ``_tpr``) that receive a float ndarray
already checked to lie in [0, 1].

Every curve states what it is: ``bound = "exact"`` (the curve of the mechanism),
``"lower"`` (a pessimistic bound: the mechanism's true curve is at or above it, so any
TPR read from it is an upper bound on attack power) or ``"upper"`` (optimistic; fdpkit
never reports guarantees from such curves).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, Callable, NamedTuple

import numpy as np

from fdpkit._deprecation import renamed_keywords
from fdpkit._numerics import (InputTypeError, check_nonnegative, check_probability, check_real, check_scalar,
                              scalar_or_array)

#: Smallest step of :meth:`TradeOffCurve.grid` (a million points): a documented memory cap.
GRID_STEP_MIN = 1e-6
BOUNDS = ("exact", "lower", "upper")

#: Operations that need subclasses (piecewise-linear bounds, hulls), implemented in the
#: modules that own those subclasses and registered by ``fdpkit.curves`` when the package
#: is imported, so that this base module never imports its subclasses.
_OPERATIONS: dict[str, Callable[..., Any]] = {}


def register_operation(name: str, function: Callable[..., Any]) -> None:
    """Register the implementation of a curve operation (``fdpkit.curves`` does this)."""
    _OPERATIONS[name] = function


def _operation(name: str) -> Callable[..., Any]:
    try:
        return _OPERATIONS[name]
    except KeyError:  # pragma: no cover - fdpkit.curves registers them on import
        raise RuntimeError(f"curve operation {name!r} is not registered; import fdpkit.curves") from None

#: Bisection steps used to invert ``f(alpha) - alpha = d``; 2**-80 is far below double
#: precision on [0, 1].
_BISECT_STEPS = 80


def vertex_profile(alpha: np.ndarray, tpr: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """delta(eps) = max(0, max_k TPR_k - e^eps alpha_k) over the vertices of a concave chain
    (alpha increasing, TPR concave), for any real eps (``inf`` allowed).

    The maximum over a concave chain is at the vertex where the segment slopes pass e^eps;
    it is located by a binary search on the slopes and, so that a rounded slope can never
    pick a smaller value, the vertices on either side are evaluated too. O((n + m) log n)
    for n vertices and m epsilons.
    """
    a = np.asarray(alpha, dtype=float)
    t = np.asarray(tpr, dtype=float)
    eps = np.asarray(eps, dtype=float)
    out = np.zeros(eps.shape)
    inf = np.isposinf(eps)
    out[inf] = t[0] if a[0] == 0.0 else 0.0
    e = eps[~inf]
    if e.size == 0:
        return out
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slopes = np.diff(t) / np.diff(a)
    slopes = np.where(np.isnan(slopes), 0.0, slopes)
    with np.errstate(over="ignore"):
        x = np.exp(e)  # inf beyond eps ~ 709.8: there e^eps alpha is taken in logs (below)
    k = np.searchsorted(-slopes, -x, side="left")  # number of segments steeper than e^eps
    big = np.isinf(x)
    if big.any():  # slopes above 1e308 (a vertex at a subnormal FPR): compare their logs
        with np.errstate(divide="ignore", invalid="ignore"):
            log_slopes = np.log(np.diff(t)) - np.log(np.diff(a))
        log_slopes = np.where(np.isnan(log_slopes), -np.inf, log_slopes)
        k[big] = np.searchsorted(-log_slopes, -e[big], side="left")
    best = np.zeros(e.shape)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for shift in (-1, 0, 1):
            j = np.clip(k + shift, 0, len(a) - 1)
            aj = a[j]
            # e^eps * 0 is 0, never NaN; e^eps alpha for eps > 709.8 is exp(eps + ln alpha)
            # (it read as inf, so that delta(710) = 0 and epsilon stopped at 709.8, too low),
            # its exponent lowered by its rounding bound (4 u per term): e^eps alpha never read
            # too large, so delta never too small
            xa = x * aj
            if big.any():
                la = np.log(aj)
                arg = e + la
                arg -= 4.0 * _U * (np.abs(e) + np.abs(la) + 1.0)
                xa = np.where(big, np.exp(arg), xa)
            val = t[j] - np.where(aj == 0.0, 0.0, xa)
            best = np.maximum(best, np.where(np.isnan(val), 0.0, val))
    out[~inf] = best
    return out


#: Unit round-off of float64 (the log-domain rounding bound of :func:`vertex_profile`).
_U = float(np.finfo(float).eps) / 2.0

#: Largest epsilon :meth:`TradeOffCurve.epsilon_for_delta` searches (a bracket doubled from
#: 1: about a thousand evaluations at most); beyond it epsilon is reported infinite.
_EPSILON_SEARCH_MAX = 1e300


class CurveGrid(NamedTuple):
    """A trade-off curve sampled on a grid: ``alpha`` (FPR) and ``beta`` (FNR) arrays."""

    alpha: np.ndarray
    beta: np.ndarray


class TradeOffCurve(ABC):
    """Abstract trade-off curve: FPR α -> smallest FNR β.

    Subclasses implement ``_beta`` (and ``_tpr`` where ``1 - beta`` would lose digits).
    """

    #: "exact", "lower" (pessimistic bound) or "upper".
    bound: str = "exact"

    # ---------------------------------------------------------------- public API
    def beta(self, alpha: Any) -> float | np.ndarray:
        """False-negative rate f(α) of the best test at false-positive rate ``alpha``.

        Scalar in, float out; arrays are evaluated elementwise.
        """
        a = check_probability("alpha", alpha)
        return scalar_or_array(np.asarray(self._beta(a), dtype=float), alpha)

    @renamed_keywords(alpha="fpr")
    def tpr(self, fpr: Any) -> float | np.ndarray:
        """True-positive rate 1 - f(fpr): the power of the best attack at false-positive rate
        ``fpr`` (the one spelling of "TPR at an FPR" in fdpkit; the keyword ``alpha=`` is
        deprecated)."""
        a = check_probability("fpr", fpr)
        return scalar_or_array(np.asarray(self._tpr(a), dtype=float), fpr)

    def __call__(self, alpha: Any) -> float | np.ndarray:
        """Same as :meth:`beta`, so a curve can be used as the function f."""
        return self.beta(alpha)

    @property
    def f0(self) -> float:
        """f(0): below 1 means some outputs reveal membership with certainty."""
        return float(self._beta(np.zeros(1))[0])

    @property
    def is_symmetric(self) -> bool:
        """Whether f equals its inverse f⁻¹ (true for all closed forms in fdpkit)."""
        return False

    def grid(self, step: float = 0.01) -> CurveGrid:
        """The curve on α = 0, step, 2*step, ..., 1 (like R fdp's ``gdp(1)()``).

        ``step`` must be at least :data:`GRID_STEP_MIN` (1e-6: a million points, 16 MB),
        so a grid never exhausts memory; use :meth:`beta` on your own points for more.

        Examples
        --------
        >>> from fdpkit import GaussianCurve
        >>> g = GaussianCurve(1.0).grid()
        >>> len(g.alpha), round(float(g.beta[1]), 6)
        (101, 0.907638)
        """
        step = check_real("step", step, low=GRID_STEP_MIN, high=1.0, scalar=True)
        n = int(round(1.0 / step))
        if abs(n * step - 1.0) > 1e-9:
            raise ValueError(f"step must divide 1 evenly, got {step!r}")
        alpha = np.linspace(0.0, 1.0, n + 1)
        return CurveGrid(alpha, np.asarray(self._beta(alpha), dtype=float))

    def inverse(self) -> "TradeOffCurve":
        """The inverse curve f⁻¹(α) = inf{t ∈ [0, 1] : f(t) ≤ α}.

        It is the trade-off curve of the same test with the hypotheses swapped
        (Dong et al. 2022, Sec. 2). Symmetric curves return themselves.
        """
        if self.is_symmetric:
            return self
        return self.to_piecewise().inverse()

    def symmetrize(self) -> "TradeOffCurve":
        """The weakest symmetric curve below f and f⁻¹: the lower convex hull of
        min{f, f⁻¹} (Dong et al. 2022, Def. F.1 and Prop. F.2).

        A guarantee that holds for one ordering of neighbouring datasets holds for the
        other ordering with the inverse curve; the symmetrised curve holds for both.
        """
        if self.is_symmetric:
            return self
        return _operation("worst_case")(self, self.inverse())

    def delta_for_epsilon(self, epsilon: Any) -> float | np.ndarray:
        """The privacy profile implied by the curve: the smallest δ such that the
        curve implies (ε, δ)-DP,

            δ(ε) = 1 + f*(-e^ε) = sup_α 1 - e^ε α - f(α)

        (Dong, Roth & Su 2022, Prop. 2.12; Gomez et al. Thm. A.9). Exact for
        piecewise-linear and Gaussian curves; other smooth curves use their sound
        piecewise-linear lower bound, so δ is never understated.

        Examples
        --------
        >>> from fdpkit import EpsDeltaCurve
        >>> EpsDeltaCurve(1.0, 1e-5).delta_for_epsilon(1.0)
        1e-05
        """
        e = check_nonnegative("epsilon", epsilon, allow_inf=True)
        out = self._delta_for_epsilon(np.atleast_1d(e).astype(float).ravel()).reshape(e.shape)
        return scalar_or_array(out, epsilon)

    def epsilon_for_delta(self, delta: Any) -> float:
        """The smallest ε ≥ 0 with ``delta_for_epsilon(epsilon) <= delta``, rounded up.

        ``inf`` when δ is below 1 - f(0) (no ε suffices).

        Examples
        --------
        >>> from fdpkit import EpsDeltaCurve
        >>> round(EpsDeltaCurve(1.0, 1e-5).epsilon_for_delta(1e-5), 9)
        1.0
        """
        d = check_scalar("delta", check_probability("delta", delta))

        def delta_at(x: float) -> float:
            return float(self._delta_for_epsilon(np.array([x]))[0])

        if delta_at(0.0) <= d:
            return 0.0
        if d < 1.0 - self.f0 or d == 0.0:
            return math.inf
        # bisection on the predicate delta(eps) <= d (delta may be flat at d, so a root
        # finder could return any point of the flat part); return the safe (upper) end
        lo, hi = 0.0, 1.0
        while delta_at(hi) > d:
            lo, hi = hi, hi * 2.0
            # up to the floats' range (it stopped at 1e4: a Gaussian mechanism with mu above
            # ~110 read "no finite epsilon", where mu = 1000 has epsilon 504,264 at 1e-5)
            if hi > _EPSILON_SEARCH_MAX:
                return math.inf
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if delta_at(mid) <= d:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-12 * max(1.0, hi):
                break
        return hi

    def _half_breakpoints(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The alpha <= beta half of a symmetric piecewise-linear curve's vertices, if known."""
        return None

    def _delta_for_epsilon(self, eps: np.ndarray) -> np.ndarray:
        half = self._half_breakpoints()
        if half is not None and np.all(eps >= 0):
            # for eps >= 0 the sup is where the slope passes e^eps >= 1: the steep half
            return vertex_profile(half[0], half[1], eps)
        bp = self._breakpoints()
        if bp is None:
            return self.to_piecewise()._delta_for_epsilon(eps)
        return vertex_profile(bp[0], bp[1], eps)

    def to_piecewise(self, n: int = 20001) -> "TradeOffCurve":
        """A piecewise-linear *lower bound* of this curve (sound by construction).

        Smooth curves use the envelope of tangent lines at ``n`` points (see
        :func:`fdpkit.curves.lower_bound.piecewise_lower_bound` for the derivation),
        curves known only by values the envelope of extended secants; either lies at or
        below the curve everywhere. Piecewise-linear curves return an exact copy.
        """
        cache = self.__dict__.setdefault("_piecewise_cache", {})  # curves are immutable
        if n not in cache:
            cache[n] = _operation("piecewise_lower_bound")(self, n)
        return cache[n]

    # ---------------------------------------------------------------- hooks
    @abstractmethod
    def _beta(self, alpha: np.ndarray) -> np.ndarray:
        """Vectorised f(alpha) for a validated float array."""

    def _tpr(self, alpha: np.ndarray) -> np.ndarray:
        return 1.0 - self._beta(alpha)

    def _log_tpr(self, alpha: np.ndarray) -> np.ndarray:
        """log TPR(alpha); curves whose TPR underflows for tiny alpha (G_mu at alpha = 5e-324)
        override it with a log-space form. -inf where TPR is 0."""
        with np.errstate(divide="ignore"):
            return np.log(self._tpr(alpha))

    def _slope(self, alpha: np.ndarray) -> np.ndarray | None:
        """Derivative f'(alpha) where the curve is smooth, or None if not available."""
        return None

    def _alpha_at_slope(self, slope: np.ndarray) -> np.ndarray | None:
        """The alpha where f'(alpha) = slope (slope < 0), or None if not available."""
        return None

    def _d_at_slope(self, slope: np.ndarray) -> np.ndarray | None:
        """d = f(alpha) - alpha at the alpha where f'(alpha) = slope, or None."""
        star = self._alpha_at_slope(slope)
        if star is None:
            return None
        star = np.asarray(star, dtype=float)
        return self._beta(star) - star

    def _breakpoints(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(alpha, tpr) vertices when the curve is exactly piecewise linear, else None."""
        return None

    def _mu_exact(self) -> float | None:
        """The tight mu over all of [0, 1] where a closed form exists, else None."""
        return None

    def _advantage_exact(self) -> float | None:
        return None

    def _alpha_at_d(self, d: np.ndarray) -> np.ndarray:
        """Solve f(alpha) - alpha = d for alpha (anti-diagonal parametrisation).

        f(alpha) - alpha is strictly decreasing from f(0) to -1, so the solution is unique;
        for d >= f(0) the answer is 0 (the vertical part of the curve at alpha = 0).
        Generic version: vectorised bisection.
        """
        d = np.asarray(d, dtype=float)
        lo = np.zeros_like(d)
        hi = np.ones_like(d)
        for _ in range(_BISECT_STEPS):
            mid = 0.5 * (lo + hi)
            above = self._beta(mid) - mid > d
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        return np.where(d >= self.f0, 0.0, 0.5 * (lo + hi))

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({params})"

    def _params(self) -> dict[str, Any]:
        return {}


def check_curve(curve: Any, name: str = "curve", *, upper: str | None = None) -> "TradeOffCurve":
    """The contract check for a curve a user hands to fdpkit: every public function that
    takes a curve validates it here.

    Parameters
    ----------
    curve : object
        Must be a :class:`TradeOffCurve` (its own construction checked its values).
    name : str
        The public argument, named in the error (``"curve"``, ``"curves[2]"``, ``"f"``).
    upper : str, optional
        When given, an optimistic curve (``bound="upper"``) is refused with a ValueError
        ending in this reason (what reading a guarantee from it would break); by default
        upper bounds are accepted.

    Returns
    -------
    TradeOffCurve
        ``curve`` itself.

    Raises
    ------
    InputTypeError
        (a ValueError and a TypeError) when ``curve`` is not a trade-off curve.
    ValueError
        When ``upper`` is given and the curve is an upper bound.

    Examples
    --------
    >>> from fdpkit.curves import GaussianCurve
    >>> check_curve(GaussianCurve(1.0)).mu
    1.0
    >>> check_curve(0.5, "f")
    Traceback (most recent call last):
    ...
    fdpkit._numerics.InputTypeError: f must be a TradeOffCurve, got float
    """
    if not isinstance(curve, TradeOffCurve):
        raise InputTypeError(f"{name} must be a TradeOffCurve, got {type(curve).__name__}")
    if upper is not None and curve.bound == "upper":
        raise ValueError(f"{name}.bound is 'upper' (an optimistic curve): {upper}")
    return curve
