r"""The tightest of a few grids for heavy-tailed DP-SGD steps (Eq. 5 of
:mod:`fdpkit.accounting._resolution`).

Eq. (4) of that module chooses the discretization d_h of a heavy-tailed run (small noise,
tiny sample rates) so that the discretization adds an estimated 1% to mu. It does not see
the other source of looseness there: the FFT round-off bound of
:mod:`fdpkit.accounting.tilted`, which a tail sum collects over its L / d grid points (in l2
since Step 4b, still growing as d shrinks). At large T the round-off decides, and a coarser
grid is tighter as well as cheaper (measured against the max test's mu_max, a lower bound
on the true mu, see ``_resolution.max_test_mu``):

=======================  ===========  =========  =========  =========  =========
run (sigma, q, T)        d_h (Eq. 4)  at d_h     1e-4       3e-4       1e-3
=======================  ===========  =========  =========  =========  =========
0.6, 1e-7, 10^5          1.1e-5       x 1.692    x 1.183    x 1.136    x 1.482
0.7, 1e-6, 10^5          8.7e-6       x 1.126    x 1.064    x 1.133    x 1.875
0.6, 1e-7, 10^4          4.6e-5       x 1.057    x 1.038    x 1.027    x 1.089
0.7, 1e-7, 10^3          1.1e-5       x 1.006    x 1.016    x 1.379    x 4.226
=======================  ===========  =========  =========  =========  =========

and no a-priori rule tried fits all four (the last one is tightest at d_h). So the grids of
:data:`LADDER` coarser than d_h, and d_h itself, are accounted from the coarsest (the
cheapest) down, and the first one whose certified curve is not tighter than the one before
ends the search:

    d = argmin over the grids tried of mu_stat(curve(d)),
    mu_stat(f) = max over alpha in A of z(alpha) - z(f(alpha)),                      (5)

A = :data:`PROBE_POINTS` FPRs geometrically spaced over [1e-10, 1/2] (the report's default
fitting range; z = Phi^-1(1 - .)), the mu that G_mu must reach to lie below f there: the
report's fitted mu up to the sampling of A. Every grid's curve is a certified, pessimistic
curve of the run, so whichever is chosen the report stays sound; the search only decides
how tight it is. A grid whose estimated work (:func:`fdpkit.accounting.cost.estimate_cost`)
exceeds d_h's, or that ``budget`` or the process's memory refuses, is not tried, so the
search costs at most a few times what the report at d_h costs (the grids coarser than d_h
are cheaper, up to the cost model's misses).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from fdpkit.accounting.cost import BudgetExceeded, CostEstimate, check_leaf_grids, estimate_cost
from fdpkit.accounting.entry_point import account, keep
from fdpkit.mechanisms import Mechanism

#: The grids Eq. (5) may choose above d_h (coarse to fine; none coarser than D_CEIL).
LADDER = (1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6)
#: FPRs at which Eq. (5)'s statistic reads a curve.
PROBE_POINTS = 200
#: A finer grid must lower the statistic by more than this relative amount to be taken
#: (grids whose curves agree to round-off keep the coarser, cheaper one on every CPU).
MIN_GAIN = 1e-6
_ALPHAS = np.geomspace(1e-10, 0.5, PROBE_POINTS)
_Z_ALPHAS = -special.ndtri(_ALPHAS)


def mu_statistic(curve: Any) -> float:
    """Eq. (5): max over :data:`PROBE_POINTS` FPRs in [1e-10, 1/2] of z(alpha) - z(beta(alpha)),
    read as z(alpha) + Phi^-1(TPR(alpha)) (TPR = 1 - beta keeps its digits where beta is near 1)."""
    tpr = np.asarray(curve.tpr(_ALPHAS), dtype=float)
    with np.errstate(all="ignore"):
        mu = _Z_ALPHAS + special.ndtri(tpr)
    mu = mu[np.isfinite(mu)]
    return float(mu.max()) if mu.size else math.inf


def candidates(mechanism: Mechanism, d_h: float, budget: Any = None) -> list[tuple[float, float]]:
    """The grids Eq. (5) may try for a run whose Eq. (4) grid is ``d_h``, coarse to fine, with
    their estimated work [(d, work)]: :data:`LADDER`'s grids coarser than ``d_h`` that cost no
    more than it and that ``budget`` allows, then ``d_h``. Estimates only: nothing is accounted."""
    base = estimate_cost(mechanism, d_h).work
    out = []
    for d in [x for x in LADDER if x > 1.5 * d_h] + [d_h]:
        cost = affordable_cost(mechanism, d, budget)
        if cost is not None and (d == d_h or cost.work <= base):
            out.append((d, cost.work))
    return out


def affordable_cost(mechanism: Mechanism, d: float, budget: Any) -> CostEstimate | None:
    """The estimated cost of accounting ``mechanism`` at ``d``, or None where a single step's
    a-priori grid bound (what :func:`account` refuses without a budget) or ``budget`` refuses it."""
    try:
        check_leaf_grids(mechanism, d)
        cost = estimate_cost(mechanism, d)
        cost.check(budget)
    except BudgetExceeded:
        return None
    return cost


def tightest_grid(mechanism: Mechanism, d_h: float, budget: Any = None) -> tuple[float, list[tuple[float, float]]]:
    """Eq. (5): the grid of :data:`LADDER` (coarser than ``d_h``) or ``d_h`` whose certified
    curve has the smallest mu statistic, searched from the coarsest down; with the grids
    tried and their statistics [(d, mu_stat)] (what the report's provenance states)."""
    tried: list[tuple[float, float]] = []
    best: tuple[float, float, Any] | None = None
    for d, _ in candidates(mechanism, d_h, budget):
        try:
            # account() refuses a composition beyond this process's memory, as the report would
            acc = account(mechanism, discretization=d, budget=budget)
        except BudgetExceeded:
            continue
        stat = mu_statistic(acc.curve)
        tried.append((d, stat))
        if best is not None and not stat < best[1] * (1.0 - MIN_GAIN):
            break
        best = (d, stat, acc)
    if best is None:
        return d_h, tried
    if best[2].discretization == best[0]:
        keep(best[2])  # the report that asked accounts this grid next: not twice
    return best[0], tried
