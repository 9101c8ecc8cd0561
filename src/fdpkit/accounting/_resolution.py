r"""The PLD discretization chosen from the per-step loss scale (issue 29, item 2).

A pessimistic connect-the-dots PLD puts each single step's privacy loss on a grid of width
d, splitting a loss between its two neighbouring grid points. The split adds a variance of
at most d^2 / 4 per step (about d^2 / 6 on average), so T composed steps carry an excess
variance of about T d^2 / 6 in the composed loss. A Gaussian-like composition of T steps
whose loss has a per-step variance v has mu^2 ~ T v (the chi-squared divergence of the step,
q^2 (e^{(Delta/sigma)^2} - 1) for a Poisson-subsampled Gaussian of sensitivity Delta), so
the relative excess of mu is about

    r(d) = (T d^2 / 6) / (2 T v) = d^2 / (12 v),                                  (1)

independent of T (for fixed-size zero-out, v is that of its worst pair (1 - q) N(0) + q N(2)
against (1 - q) N(0) + q N(1): q^2 (e^{4/sigma^2} - 2 e^{2/sigma^2} + e^{1/sigma^2})). At the default d = 1e-4 that is small unless the step is tiny: with
q = 1e-5 and sigma = 0.8, v = 3.8e-10 and r = 2.2 (fdpkit reported mu 0.0330 where finer
grids give 0.0245); with sigma = 20, r ~ 3e3. So the discretization is

    d = min(d_default, max(D_FLOOR, sqrt(12 v r_target)))                         (2)

with v the smallest per-step variance of the run's subsampled phases and r_target
:data:`AUTO_MU_RTOL`. Equation (1) is an estimate, not a bound: a finer d only changes how
tight the certified (always pessimistic) curve is, never its soundness. The grid of the
composed loss scales with sqrt(T v) / d = sqrt(T / (12 r_target)), so the cost stays
bounded for well-behaved steps; where the steps' heavy tails widen the composed loss range
(small sigma: the tilts reach losses ~40 at T = 10^6), or a ``budget`` would be exceeded,
d is coarsened by factors of 1.5 until the grid fits (:data:`AUTO_MAX_GRID`), and the
estimate stated with it says how much tightness that costs.

The other way round, a step whose loss variance is large (small noise multipliers with large
sample rates: v = 0.34 at sigma = 0.8, q = 0.3) is resolved by 1e-4 far beyond any digit a
report shows (r = 2.5e-9), while its composed loss spans millions of grid points: it is the
costliest kind of run to account (issue 27: such settings were half of a 1,000-setting
sweep's time). There the discretization is coarsened to the one that Eq. (1) estimates to
add a relative r_c = :data:`AUTO_COARSE_RTOL` to mu,

    d = min(D_CEIL, sqrt(12 v r_c))   where that is at least 2 d_default,               (3)

(typical runs, the headline sigma = 9.4, q = 0.32768 among them, keep 1e-4). Measured on
the sweep benchmark's grid (sigma 0.8..8, q 1e-3..0.3, T 100..2000), the 120 settings Eq.
(3) coarsens (to 2e-4 .. 1e-3) change mu by at most a relative 1.7e-6, epsilon at 1e-5 and
the TPR at FPR 1e-3 by at most 3.3e-6, in either direction (both grids give certified,
pessimistic curves), and the grid's accounting takes half the CPU time.
"""

from __future__ import annotations

import math
from typing import Any

from fdpkit.accounting.cost import BudgetExceeded, check_leaf_grids, estimate_cost
from fdpkit.accounting.result import DISCRETIZATION_DEFAULT
from fdpkit.mechanisms import Mechanism, training_run
from fdpkit.mechanisms.training import FIXED_SIZE_SENSITIVITY

#: Target relative excess of mu from the discretization (Eq. 1).
AUTO_MU_RTOL = 0.01
#: Largest composition grid (points) the automatic choice may cost (about 30 s on one core
#: at T = 10^6); above it d is coarsened.
AUTO_MAX_GRID = 5_000_000
#: The finest discretization chosen automatically.
D_FLOOR = 1e-8
#: Target relative excess of mu (Eq. 1) below which a coarser discretization is chosen
#: (Eq. 3): 10^4 times stricter than :data:`AUTO_MU_RTOL`, so that the coarser grid costs
#: no digit a report shows.
AUTO_COARSE_RTOL = 1e-6
#: The coarsest discretization chosen automatically.
D_CEIL = 1e-3
#: Coarsen only where that at least halves the grid (typical runs keep the default).
COARSEN_MIN_FACTOR = 2.0


def step_variance(mechanism: Mechanism) -> float | None:
    """The smallest per-step loss variance v (Eq. 1) over a DP-SGD run's subsampled phases,
    or None where the rule does not apply (other mechanisms, full batches, shuffling)."""
    run = training_run(mechanism)
    if run is None or run.sampling == "shuffled":
        return None
    delta = 1.0
    if run.relation == "replace-one":
        delta = FIXED_SIZE_SENSITIVITY
    collinear = (run.sampling, run.relation) == ("fixed-size", "zero-out")
    vs = []
    for ph in run.phases:
        q, sigma = float(ph.sample_rate), float(ph.noise_multiplier)
        if q >= 1.0 or ph.steps < 1:
            continue
        ratio = delta / sigma
        r2 = ratio * ratio  # inf where it overflows (** raised OverflowError at sigma = 1e-308)
        r = min(r2, 170.0)
        if collinear:  # P_2 vs P_1 (accounting.without_replacement): E[(e^{L_2} - e^{L_1})^2] under N(0)
            vs.append(q * q * (math.expm1(4 * r) - 2 * math.expm1(2 * r) + math.expm1(r)))
        else:
            vs.append(q * q * math.expm1(min(r2, 700.0)))
    return min(vs) if vs else None


def excess_mu_rtol(v: float | None, d: float) -> float | None:
    """Eq. (1): the estimated relative excess of mu at discretization ``d`` (None: no estimate)."""
    if v is None or not v > 0:
        return None
    return d * d / (12.0 * v)


def choose_discretization(mechanism: Mechanism, *, mu_rtol: float = AUTO_MU_RTOL,
                          budget: Any = None) -> tuple[float, str]:
    """(d, how): by Eq. (3) where the run's steps are so coarse that a grid of at least twice
    the default's width costs mu a relative :data:`AUTO_COARSE_RTOL` or less; else by Eq.
    (2): the default unless the run's steps are finer than it resolves, then coarsened by
    factors of 1.5 while the composition's grid would exceed :data:`AUTO_MAX_GRID` points
    or ``budget``."""
    v = step_variance(mechanism)
    d0 = DISCRETIZATION_DEFAULT
    if v is None or not v >= 0:
        return d0, f"default {d0:g}"
    if v == 0.0:
        # q^2 / sigma^2 underflowed (sigma of about 1e154 and more, or q below 1e-154): the
        # step is finer than any grid resolves, and Eq. (2) gives D_FLOOR, as it does for
        # every v below 1e-14 (at sigma 1e308 the default 1e-4 read mu 2e-5, D_FLOOR 5e-9)
        return _finest_affordable(mechanism, D_FLOOR, budget), (
            "chosen for a per-step loss variance that underflows to 0: the finest grid "
            "the budget allows")
    coarse = _readable(min(D_CEIL, math.sqrt(12.0 * v * AUTO_COARSE_RTOL)))
    if coarse >= COARSEN_MIN_FACTOR * d0:
        return coarse, (f"coarsened from the default {d0:g} (a large per-step loss variance {v:.3g}): "
                        f"estimated relative excess of mu {excess_mu_rtol(v, coarse):.2g} "
                        f"(at the default: {excess_mu_rtol(v, d0):.2g})")
    d = min(d0, max(D_FLOOR, math.sqrt(12.0 * v * mu_rtol)))
    if d >= d0:
        return d0, f"default {d0:g} (estimated relative excess of mu {excess_mu_rtol(v, d0):.2g})"
    d = _finest_affordable(mechanism, _readable(d), budget)
    how = (f"chosen from the per-step loss variance {v:.3g}: estimated relative excess of mu "
           f"{excess_mu_rtol(v, d):.2g} (at the default {d0:g}: {excess_mu_rtol(v, d0):.2g})")
    return d, how


def _finest_affordable(mechanism: Mechanism, d: float, budget: Any) -> float:
    """``d`` coarsened by factors of 1.5 (at most to the default) while the composition's
    grid would exceed :data:`AUTO_MAX_GRID` points or ``budget``."""
    d0 = DISCRETIZATION_DEFAULT
    while d < d0:
        try:
            # a single step's a-priori grid bound (what account() refuses without a budget:
            # q = 1e-12 once chose d = 1e-8 and was refused for "noise_multiplier")
            check_leaf_grids(mechanism, d)
            cost = estimate_cost(mechanism, d)
            cost.check(budget)
        except BudgetExceeded:
            pass
        else:
            if cost.grid_points <= AUTO_MAX_GRID:
                break
        d = _readable(min(d0, 1.5 * d))
    return min(d, d0)


def _readable(d: float) -> float:
    """``d`` rounded down to two significant digits (a reproducible, readable value)."""
    e = math.floor(math.log10(d))
    return max(D_FLOOR, float(f"{math.floor(d / 10.0 ** (e - 1) * (1 + 1e-12))}e{e - 1}"))
