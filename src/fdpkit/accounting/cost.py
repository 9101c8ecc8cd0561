r"""A cost model of accounting, evaluated BEFORE any work: how large the privacy-loss grids
get and how much composing them costs, so that interfaces can refuse requests that would
exhaust a machine and say which parameter to change.

Model
-----
A mechanism with a closed form (:func:`fdpkit.accounting.closed_form_curve`) costs nothing.
Otherwise dp_accounting builds one discretised privacy-loss PMF per leaf mechanism and
composes them with FFTs. For a PMF of losses spanning a width ``w`` (in nats) on a grid of
step ``d`` (the discretization), the grid has ``n = w / d`` points.

- **Leaves.** The loss range and the mean and variance of the loss under the alternative
  distribution do not depend on ``d``; they are read from the same leaf PLD built on a
  coarse grid (at most :data:`COARSE_POINTS` points, milliseconds). Building the leaf at
  ``d`` costs about ``n`` evaluations of the mechanism's loss (:data:`LEAF_WORK_PER_POINT`).
- **Composition.** ``T``-fold self-composition (``Repeated``) and composition of parts
  (``Composed``) add means and variances (losses of independent steps add). dp_accounting
  truncates the composed PMF at tail mass ``tau`` = 1e-15 with Chernoff bounds whose orders
  are at most ``20 / w`` (``common.compute_self_convolve_bounds``), so for a
  sub-Gaussian loss the kept half-width is at most

      h(T) = min_{k = 1..20} (T (k/w)^2 v / 2 + ln(2/tau)) / (k/w)          (1)

  and never more than ``T w`` (the exact support). The composed grid has
  ``min(T w, 2 h(T) + w) / d`` points, and the FFT costs ``N log2 N`` for its length N.
  Nesting is multiplied through: ``Repeated(Repeated(M, a), b)`` is built as the a-fold
  composition, then composed b times, and each stage is counted.
- **Memory.** The FFT holds a few complex arrays of the composed length at once:
  :data:`BYTES_PER_POINT` bytes per grid point.

The estimates are approximate (sub-Gaussian tails in (1)); tests compare them with real
PLD sizes (``tests/accounting/test_accounting_cost.py``) and budgets carry a margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fdpkit._numerics import check_real
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

#: Points of the coarse leaf grid used to read a leaf's loss range, mean and variance.
COARSE_POINTS = 2000
#: Tail mass dp_accounting truncates per composition (``pld.TAIL_MASS_TRUNCATION``).
_TAU = 1e-15
#: Cost of one leaf grid point relative to one FFT butterfly (measured: building a leaf PMF
#: evaluates the mechanism's CDF at every point, about 100x an FFT step).
LEAF_WORK_PER_POINT = 100.0
#: Peak bytes held per composed grid point (input, its FFT, the power, the inverse).
BYTES_PER_POINT = 64


class BudgetExceeded(ValueError):
    """The estimated cost of a request exceeds the budget. ``parameter`` names the input to
    change (``discretization``, ``steps``/``times``, ``sigma``, ``scale``...)."""

    def __init__(self, message: str, parameter: str) -> None:
        super().__init__(message)
        self.parameter = parameter


@dataclass(frozen=True)
class CostBudget:
    """Upper limits on one accounting request.

    Attributes
    ----------
    max_grid_points : int
        Largest privacy-loss grid (points) any stage may hold.
    max_work : float
        Largest total work (FFT butterflies plus weighted leaf points).
    max_memory_bytes : int
        Largest peak memory of one composition.
    """

    max_grid_points: int = 20_000_000
    max_work: float = 2e9
    max_memory_bytes: int = 2 * 1024**3

    def __post_init__(self) -> None:
        for name in ("max_grid_points", "max_work", "max_memory_bytes"):
            check_real(name, getattr(self, name), low=0, low_open=True, scalar=True)


@dataclass(frozen=True)
class CostEstimate:
    """What accounting a mechanism at a discretization would cost (see module docs).

    Attributes
    ----------
    method : str
        ``"closed form"`` (free) or ``"PLD"``.
    grid_points : int
        Largest grid (points) held at any stage.
    work : float
        Total work: FFT butterflies plus :data:`LEAF_WORK_PER_POINT` per leaf grid point.
    memory_bytes : int
        Peak memory of the largest stage.
    driver : str
        The parameter that drives the cost most: ``"discretization"`` when a single leaf
        grid is the largest stage, else the repetition count (``"steps"``/``"times"``) or
        the number of ``"parts"``.
    """

    method: str
    grid_points: int
    work: float
    memory_bytes: int
    driver: str

    def check(self, budget: CostBudget | None) -> None:
        """Raise :class:`BudgetExceeded` naming the parameter to change when over budget."""
        if budget is None or self.method == "closed form":
            return
        over = None
        if self.grid_points > budget.max_grid_points:
            over = f"a privacy-loss grid of about {self.grid_points:.3g} points (limit {budget.max_grid_points:.3g})"
        elif self.memory_bytes > budget.max_memory_bytes:
            over = (f"about {self.memory_bytes / 2**20:.0f} MiB of memory "
                    f"(limit {budget.max_memory_bytes / 2**20:.0f} MiB)")
        elif self.work > budget.max_work:
            over = f"about {self.work:.3g} units of work (limit {budget.max_work:.3g})"
        if over is None:
            return
        hint = {
            "discretization": "use a larger discretization (a coarser grid) or more noise",
            "parts": "use fewer parts or a larger discretization",
        }.get(self.driver, f"use fewer {self.driver} or a larger discretization")
        raise BudgetExceeded(f"{self.driver}: this request needs {over}; {hint}", self.driver)


@dataclass(frozen=True)
class _Stats:
    width: float  # loss range (nats) of the PMF at this node
    mean: float
    var: float
    points: float  # grid points at this node
    peak: float  # largest grid held so far
    work: float
    driver: str


def _leaf_width_bound(m: Mechanism) -> float:
    """An upper bound on a leaf's loss range (nats), used to pick the coarse grid."""
    if isinstance(m, Subsampled):
        return _leaf_width_bound(m.inner)
    if isinstance(m, Gaussian):
        mu = m.sensitivity / m.sigma
        return 22.0 * mu + mu * mu  # x truncated at about +-10.5 sd: loss mu x - mu^2/2
    if isinstance(m, Laplace):
        return 2.0 * m.sensitivity / m.scale
    if isinstance(m, (PureDP, RandomizedResponse, ApproxDP)):
        return 2.0 * m.epsilon + 1.0
    raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(m).__name__}")


def _leaf(m: Mechanism, d: float) -> _Stats:
    from fdpkit.accounting._pld_adapter import pmf_arrays
    from fdpkit.accounting.pld import build_pld

    bound = _leaf_width_bound(m)
    if bound / COARSE_POINTS > 1.0:  # far beyond any budget: no need to look closer
        points = bound / d
        return _Stats(bound, bound / 2, (bound / 2) ** 2, points, points, LEAF_WORK_PER_POINT * points,
                      "discretization")
    coarse = max(d, bound / COARSE_POINTS)
    width, mean, var = 0.0, 0.0, 0.0
    for arr in (a for a in pmf_arrays(build_pld(m, coarse)) if a is not None):
        p = np.clip(arr.probs, 0.0, None)
        total = float(p.sum())
        if total <= 0 or len(p) < 1:
            continue
        mu = float((p * arr.losses).sum() / total)
        width = max(width, float(arr.losses[-1] - arr.losses[0]) + coarse)
        mean = max(mean, mu)
        var = max(var, float((p * (arr.losses - mu) ** 2).sum() / total))
    points = max(width / d, 1.0)
    driver = "discretization"
    return _Stats(width, mean, var, points, points, LEAF_WORK_PER_POINT * points, driver)


def _half_width(times: float, width: float, var: float) -> float:
    """Equation (1): Chernoff half-width of a ``times``-fold composition."""
    log_term = math.log(2.0 / _TAU)
    best = math.inf
    for k in range(1, 21):
        lam = k / width
        best = min(best, (times * lam * lam * var / 2.0 + log_term) / lam)
    return best


def _fft_work(n: float) -> float:
    return n * math.log2(max(n, 2.0))


def _compose(a: _Stats, times: float, d: float, driver: str) -> _Stats:
    width = min(times * a.width, 2.0 * _half_width(times, a.width, a.var) + a.width)
    points = max(width / d, 1.0)
    n_fft = max(points, a.points)
    return _Stats(width, a.mean * times, a.var * times, points, max(a.peak, n_fft),
                  a.work + _fft_work(n_fft), driver if n_fft >= a.peak else a.driver)


def _stats(m: Mechanism, d: float) -> _Stats:
    if isinstance(m, Subsampled) and m.sample_rate == 1.0:
        return _stats(m.inner, d)
    if isinstance(m, Repeated):
        inner = _stats(m.inner, d)
        return _compose(inner, float(m.times), d, "times")
    if isinstance(m, Composed):
        parts = [_stats(p, d) for p in m.parts]
        out = parts[0]
        for p in parts[1:]:
            width = out.width + p.width
            var = out.var + p.var
            # Chernoff truncation of the pair, as for self-composition with the joint variance
            half = _half_width(1.0, width, var)
            width = min(width, 2.0 * half + max(out.width, p.width))
            points = max(width / d, 1.0)
            n_fft = max(points, out.points + p.points)
            out = _Stats(width, out.mean + p.mean, var, points, max(out.peak, p.peak, n_fft),
                         out.work + p.work + _fft_work(n_fft),
                         "parts" if n_fft >= max(out.peak, p.peak) else max(out, p, key=lambda s: s.peak).driver)
        return out
    return _leaf(m, d)


def _cost_proxy(mechanism: Mechanism) -> Mechanism:
    """A DP-SGD run as elementary mechanisms of the same grid and work: its own elementary
    form where one exists, else per phase T subsampled Gaussians of sensitivity Delta
    (fixed-size, truncated Poisson and replace-one steps build grids of that size)."""
    from fdpkit.mechanisms.dpsgd import DPSGD

    if not isinstance(mechanism, DPSGD):
        return mechanism
    elementary = mechanism.elementary()
    if elementary is not None:
        return elementary
    parts = [Repeated(Subsampled(Gaussian(p.noise_multiplier, mechanism.sensitivity), p.sample_rate), p.steps)
             for p in mechanism.phases]
    return parts[0] if len(parts) == 1 else Composed(tuple(parts))


def estimate_cost(mechanism: Mechanism, discretization: float = 1e-4) -> CostEstimate:
    """Estimate what accounting ``mechanism`` at ``discretization`` costs, before doing it.

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float
        The PLD's value discretization interval, in [1e-6, 1].

    Returns
    -------
    CostEstimate
        Closed forms cost nothing; otherwise the largest grid, total work and peak memory
        (see the module docs for the model).

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian, Repeated, dpsgd
    >>> estimate_cost(Repeated(Gaussian(2.0), 10)).method
    'closed form'
    >>> c = estimate_cost(dpsgd(9.4, 0.32768, 2000), 1e-4)
    >>> 1e5 < c.grid_points < 2e6
    True
    """
    from fdpkit.accounting.curve import _check_discretization, closed_form_curve

    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")
    d = _check_discretization(discretization)
    mechanism = _cost_proxy(mechanism)
    if closed_form_curve(mechanism) is not None:
        return CostEstimate("closed form", 0, 0.0, 0, "none")
    s = _stats(mechanism, d)
    driver = s.driver
    if driver == "times" and _is_dpsgd(mechanism):
        driver = "steps"
    peak = int(min(s.peak, 2**62))
    return CostEstimate("PLD", peak, float(s.work), int(min(BYTES_PER_POINT * s.peak, 2**62)), driver)


def _is_dpsgd(m: Any) -> bool:
    return isinstance(m, Repeated) and isinstance(m.inner, Subsampled)
