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

Where the run is cheap, 1 % is more slack than its cost justifies (sigma 10, q 1e-4, T 100:
epsilon(1e-5) read 1.5 % above a 10x finer grid's, in 17 ms), so the grid of Eq. (2), or the
default where Eq. (2) keeps it, is refined towards the stricter target r_fine =
:data:`AUTO_FINE_RTOL`,

    d' = max(sqrt(12 v r_fine), the finest d whose estimated work is <= W_cheap)      (2')

with W_cheap = :data:`AUTO_CHEAP_WORK` (the cost model's grid work, :func:`grid_work`);
a run whose grid already costs more keeps it (the headline run too: its excess at the default
is 6.8e-7). On the runs of ``tests/accounting/test_accounting_cheap_refine.py`` epsilon and mu
then read within 0.3 % of the 10x finer grid's, for 20-80 ms a report.

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

Heavy-tailed steps (Eq. 4)
--------------------------
Eq. (1) rests on mu^2 ~ T v, the Gaussian picture of many comparable steps. At small noise
and tiny sample rates it fails: the step's variance v is made by rare, large losses (sigma
0.3, q 1e-9: v = 6.7e-14, losses up to 17), the composed loss is far from Gaussian and mu
is set by the few steps that sample the example (mu 0.090 where sqrt(T v) = 2.6e-5 at
T = 10^4). A test that exists certifies a lower bound on mu there: reject when the largest
released coordinate exceeds c (``max_test_mu``: under the null all T coordinates are
N(0, sigma^2), under the alternative each is (1 - q) N(0, sigma^2) + q N(Delta, sigma^2),
so FPR and TPR are products of normal CDFs; mu_max = max over FPR in [1e-10, 1/2] of
z(FPR) - z(TPR)). Where it exceeds sqrt(T v) by a factor sqrt(:data:`HEAVY_TAIL_RATIO`)
and Eq. (2) would refine the default by :data:`HEAVY_TAIL_REFINE` or more, the excess is
estimated against mu_max instead, and with the excess variance a grid of width d really
adds to a step whose loss l is mostly far below d: splitting l between its neighbouring
grid points adds at most d min(|l|, d / 4) <= d |l| (not d^2 / 6), so T steps add at most
T d E|l|, and

    r_h(d) = T d E|l| / (2 mu_max^2),   d = min(D_CEIL, max(Eq. (2), r_h^{-1}(mu_rtol)))   (4)

(E|l| under the alternative by quadrature; over the phases, sum_i T_i E|l_i|). The finer
grids of Eq. (2) cost more there than they resolve: the FFT round-off bound of
:mod:`fdpkit.accounting.tilted` is a fixed amount per grid point (the tilted composition
keeps most of its mass on the loss 0, so no tilt isolates the tail), and a tail sum over
L / d points collects it L / d times. At sigma 0.3, q 1e-9, T 10^4, d = 1e-2, 1e-3, 1e-4,
1e-5 report mu 0.0902, 0.0917, 0.105, 0.146 against mu_max 0.0900; Eq. (4) chooses D_CEIL
(0.3 s where Eq. (2)'s 1e-5 took 31 s). Ordinary settings (sigma 0.5..20, q 1e-4..0.5,
T 10..10^5) keep Eq. (2): where it refines the default 4x or more, their ratio
mu_max^2 / (T v) is at most 17 (sigma 1.6, q 1e-4, T 10), below the threshold
:data:`HEAVY_TAIL_RATIO` = 30, and none of 4,704 such settings over the Poisson and
fixed-size schemes changed its d. The threshold was 10^3 at first; tiny sample rates with
moderate noise lie between (sigma 0.6..1.2, q 1e-8..1e-5: ratios 35..1000), and there Eq.
(2)'s fine grids cost up to 100x the time for a looser mu, the round-off again. Of the 39
settings of sigma 0.6..1.2, q 1e-8..1e-5, T 10..10^5 whose d the threshold 30 changes, the
33 measured moved mu by a factor 0.56..1.013, all faster: the largest gains at T >= 1000
(sigma 0.6, q 1e-7, T 10^5 from mu_max x 7.06 in 113 s to x 3.99 in 3 s; sigma 0.7, q 1e-7,
T 1000 from x 1.437 in 31 s to x 1.035 in 0.2 s; sigma 0.7, q 1e-6, T 10^4 from x 1.403 in
24 s to x 1.069 in 0.5 s), and every looser one stays within x 1.0025 of mu_max but one
(sigma 0.7, q 1e-6, T 10^5: d 9.4e-6 -> 8.7e-6, x 1.367 -> x 1.385, where the round-off
decides at either d). Since then the tail sums bound their round-off in l2 as well (Step 4b
of :mod:`fdpkit.accounting.tilted`): at Eq. (4)'s d these two read x 1.69 and x 1.126. A
coarser grid is tighter still where T is large (sigma 0.6, q 1e-7, T 10^5: x 1.14 at
d = 3e-4, x 1.48 at 1e-3; sigma 0.7, q 1e-6, T 10^5: x 1.064 at 1e-4), and no coarser at
T = 1000 (sigma 0.7, q 1e-7: x 1.006 at Eq. (4)'s 1.1e-5, x 1.38 at 3e-4). No a-priori rule
tried fits these, so Eq. (4)'s d_h is where a search starts (Eq. 5,
:mod:`fdpkit.accounting._grid_probe`): a few coarser grids of a fixed ladder, each no costlier
than d_h, are accounted from the coarsest down, and the one whose certified curve reads the
smallest mu is taken (x 1.136, 1.064 and 1.006 of mu_max on the three runs above). Every
grid gives a certified curve, so the search decides tightness only, never soundness.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from fdpkit.accounting._grid_probe import PROBE_POINTS, affordable_cost, candidates, tightest_grid
from fdpkit.accounting.result import DISCRETIZATION_DEFAULT
from fdpkit.mechanisms import Mechanism, training_run
from fdpkit.mechanisms.training import FIXED_SIZE_SENSITIVITY

#: Target relative excess of mu from the discretization (Eq. 1).
AUTO_MU_RTOL = 0.01
#: Eq. (2'): a run whose composition is cheap is resolved further, towards this target
#: relative excess of mu (100x stricter than :data:`AUTO_MU_RTOL`) ...
AUTO_FINE_RTOL = 1e-4
#: ... while its estimated grid work (:func:`grid_work`) stays at most this. A tightness
#: threshold, not a time limit: it was 5e5 units of the cost model before its 2026-11 refit
#: (a quarter of the headline report's 2.1e6 then), which now reads such runs' grid work
#: :data:`REFIT_FACTOR` times lower, so it is rescaled by that factor and chooses the grids
#: it chose before (about 5 ms on one core).
REFIT_FACTOR = 5.8
AUTO_CHEAP_WORK = 5e5 / REFIT_FACTOR
#: ... judged first by a quick look: work units per grid step d of one standard deviation
#: sqrt(T v) of the composed loss. On 14 runs of Eq. (2) and (2') the estimates read 1.15 to
#: 2,700 times 100 units of the model before its refit (heavier tails, more passes), so a
#: run whose quick look exceeds AUTO_CHEAP_WORK is not cheap, and it is not estimated
#: (rescaled with AUTO_CHEAP_WORK: the same runs are looked at).
CHEAP_WORK_PER_SD = 100.0 / REFIT_FACTOR
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
#: Eq. (4) applies where the max test's mu exceeds the Gaussian picture's sqrt(T v) by
#: sqrt(this) (a step far from Gaussian; ordinary settings reach 17 at most, see the
#: module docs) ...
HEAVY_TAIL_RATIO = 30.0
#: ... and Eq. (2) would refine the default by this factor or more.
HEAVY_TAIL_REFINE = 4.0
#: The FPRs (and their lower end: the report's fitting range) over which mu_max is read.
MAX_TEST_ALPHA_MIN = 1e-10
MAX_TEST_POINTS = 60


def _phases(mechanism: Mechanism) -> list[tuple[float, float, int, float]] | None:
    """A DP-SGD run's subsampled phases [(q, sigma, steps, v)] with their per-step loss
    variance v (Eq. 1); None where the rule does not apply (other mechanisms, shuffling)."""
    run = training_run(mechanism)
    if run is None or run.sampling == "shuffled":
        return None
    delta = 1.0
    if run.relation == "replace-one":
        delta = FIXED_SIZE_SENSITIVITY
    collinear = (run.sampling, run.relation) == ("fixed-size", "zero-out")
    out = []
    for ph in run.phases:
        q, sigma = float(ph.sample_rate), float(ph.noise_multiplier)
        if q >= 1.0 or ph.steps < 1:
            continue
        ratio = delta / sigma
        r2 = ratio * ratio  # inf where it overflows (** raised OverflowError at sigma = 1e-308)
        r = min(r2, 170.0)
        if collinear:  # P_2 vs P_1 (accounting.without_replacement): E[(e^{L_2} - e^{L_1})^2] under N(0)
            v = q * q * (math.expm1(4 * r) - 2 * math.expm1(2 * r) + math.expm1(r))
        else:
            v = q * q * math.expm1(min(r2, 700.0))
        out.append((q, sigma, int(ph.steps), v))
    return out


def _sensitivity(mechanism: Mechanism) -> float:
    run = training_run(mechanism)
    return FIXED_SIZE_SENSITIVITY if run is not None and run.relation == "replace-one" else 1.0


def step_variance(mechanism: Mechanism) -> float | None:
    """The smallest per-step loss variance v (Eq. 1) over a DP-SGD run's subsampled phases,
    or None where the rule does not apply (other mechanisms, full batches, shuffling)."""
    phases = _phases(mechanism)
    return min(v for _, _, _, v in phases) if phases else None


def max_test_mu(phases: list[tuple[float, float, int]], sensitivity: float = 1.0, *,
                alpha_min: float = MAX_TEST_ALPHA_MIN) -> float:
    """mu_max of Eq. (4): the mu that the test "the largest of the T released coordinates
    exceeds c" attains on FPRs in [``alpha_min``, 1/2], for Poisson-subsampled Gaussian
    phases [(q, sigma, steps)] of sensitivity ``sensitivity`` (the example's gradient
    shifts its coordinate by that many noise units times sigma). A test that exists: a lower
    bound on the mu of any certified curve of the run (up to rounding), used only to choose
    the discretization. FPR 1 - prod Phi(c / sigma)^T, TPR 1 - prod ((1 - q) Phi(c / sigma)
    + q Phi((c - Delta) / sigma))^T; c by bisection on the log FPR complement."""
    alphas = np.geomspace(alpha_min, 0.5, MAX_TEST_POINTS)
    target = np.log1p(-alphas)
    top = min(40.0 * max(s for _, s, _ in phases), 1e300) + sensitivity
    lo, hi = np.full(alphas.shape, -top), np.full(alphas.shape, top)

    def log_null(c: np.ndarray) -> np.ndarray:
        return sum((t * special.log_ndtr(c / s) for _, s, t in phases), np.zeros_like(c))

    for _ in range(100):
        mid = 0.5 * (lo + hi)
        above = log_null(mid) > target  # increasing in c
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    log_alt = np.zeros_like(hi)
    for q, s, t in phases:
        a, b = hi / s, (hi - sensitivity) / s
        gap = special.ndtr(-b) - special.ndtr(-a)  # Phi(a) - Phi(b), accurate in the tails
        log_alt += t * (special.log_ndtr(a) + np.log1p(-q * gap / special.ndtr(a)))
    fpr, tpr = -np.expm1(log_null(hi)), -np.expm1(log_alt)
    with np.errstate(all="ignore"):
        # z(FPR) - z(TPR), each from its small tail (the complement of a tail near 1 would
        # leave rounding noise of 6e-8 in mu where the two hypotheses are alike)
        z_tpr = np.where(tpr < 0.5, -special.ndtri(tpr), special.ndtri(np.exp(log_alt)))
        mu = -special.ndtri(fpr) - z_tpr
    mu = mu[np.isfinite(mu)]
    return float(mu.max()) if mu.size else 0.0


def mean_abs_loss(q: float, sigma: float, sensitivity: float = 1.0, points: int = 20001) -> float:
    """E|l| of Eq. (4): the mean absolute privacy loss log(1 - q + q e^{(x Delta - Delta^2 / 2)
    / sigma^2}) of one Poisson-subsampled Gaussian step under its alternative (1 - q)
    N(0, sigma^2) + q N(Delta, sigma^2), by the trapezoidal rule over 14 sigma either side."""
    x = np.linspace(-14.0 * sigma, 14.0 * sigma + sensitivity, points)
    loss = np.logaddexp(math.log1p(-q), math.log(q) + (x * sensitivity - sensitivity ** 2 / 2) / sigma ** 2)
    z0, z1 = x / sigma, (x - sensitivity) / sigma
    density = ((1 - q) * np.exp(-z0 * z0 / 2) + q * np.exp(-z1 * z1 / 2)) / (sigma * math.sqrt(2 * math.pi))
    return float(np.trapezoid(np.abs(loss) * density, x))


def heavy_tail(mechanism: Mechanism, *, mu_rtol: float = AUTO_MU_RTOL) -> tuple[float, float, float] | None:
    """(d, mu_max, T E|l|) of Eq. (4) where it applies to ``mechanism`` (d before
    :func:`_readable` and the clip to D_CEIL: r_h(d) = ``mu_rtol``), else None."""
    phases = _phases(mechanism)
    if not phases:
        return None
    v = min(p[3] for p in phases)
    if not v > 0 or math.sqrt(12.0 * v * mu_rtol) * HEAVY_TAIL_REFINE > DISCRETIZATION_DEFAULT:
        return None
    delta = _sensitivity(mechanism)
    mu = max_test_mu([(q, s, t) for q, s, t, _ in phases], delta)
    gaussian = sum(t * vi for _, _, t, vi in phases)
    if not mu * mu >= HEAVY_TAIL_RATIO * gaussian:
        return None
    spread = sum(t * mean_abs_loss(q, s, delta) for q, s, t, _ in phases)
    if not spread > 0:
        return None
    return 2.0 * mu * mu * mu_rtol / spread, mu, spread


def excess_mu_rtol(v: float | None, d: float) -> float | None:
    """Eq. (1): the estimated relative excess of mu at discretization ``d`` (None: no estimate)."""
    if v is None or not v > 0:
        return None
    return d * d / (12.0 * v)


def choose_discretization(mechanism: Mechanism, *, mu_rtol: float = AUTO_MU_RTOL,
                          budget: Any = None, search: bool = True) -> tuple[float, str]:
    """(d, how): by Eq. (3) where the run's steps are so coarse that a grid of at least twice
    the default's width costs mu a relative :data:`AUTO_COARSE_RTOL` or less; else by Eq.
    (2): the default unless the run's steps are finer than it resolves, then coarsened by
    factors of 1.5 while the composition's grid would exceed :data:`AUTO_MAX_GRID` points
    or ``budget``, and refined by Eq. (2') where the run is cheap. Heavy-tailed steps take Eq. (4)'s d_h and then, with ``search`` (the
    default), the tightest of the coarser grids of Eq. (5) (:mod:`fdpkit.accounting._grid_probe`:
    it accounts the run on a few grids); ``search=False`` gives d_h without accounting
    anything (a cheap a-priori check: the search tries no grid costlier than d_h)."""
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
    heavy = heavy_tail(mechanism, mu_rtol=mu_rtol)
    if heavy is not None and heavy[0] > d:
        d_h, mu, spread = _readable(min(D_CEIL, heavy[0])), heavy[1], heavy[2]
        if d_h < d0:
            d_h = _finest_affordable(mechanism, d_h, budget)
        how = (f"chosen for heavy-tailed steps (Eq. 4): a test attains mu {mu:.3g}, far above what "
               f"the per-step loss variance {v:.3g} suggests; estimated relative excess of mu "
               f"{d_h * spread / (2.0 * mu * mu):.2g}")
        if search and d_h < D_CEIL:
            d_s, tried = tightest_grid(mechanism, d_h, budget)
            how += (f" at d {d_h:g}; the tightest of the grids tried (Eq. 5; mu read at "
                    f"{PROBE_POINTS} FPRs, the fit's mu up to that sampling: "
                    + ", ".join(f"d {x:g} -> {m:.4g}" for x, m in tried) + f"): {d_s:g}")
            d_h = d_s
        return d_h, how
    if d >= d0:
        d = _refined(mechanism, v, d0, budget)
        if d >= d0:
            return d0, f"default {d0:g} (estimated relative excess of mu {excess_mu_rtol(v, d0):.2g})"
        return d, (f"refined from the default {d0:g} where the run is cheap (Eq. 2'): estimated relative "
                   f"excess of mu {excess_mu_rtol(v, d):.2g} (at the default: {excess_mu_rtol(v, d0):.2g})")
    d = _finest_affordable(mechanism, _readable(d), budget)
    d_eq2, d = d, _refined(mechanism, v, d, budget)
    how = (f"chosen from the per-step loss variance {v:.3g}"
           + (" and refined where the run is cheap (Eq. 2')" if d < d_eq2 else "")
           + f": estimated relative excess of mu {excess_mu_rtol(v, d):.2g} (at the default {d0:g}: "
           f"{excess_mu_rtol(v, d0):.2g})")
    return d, how


def grid_work(cost: Any) -> float:
    """The work of an estimate that grows with its grids (:attr:`CostEstimate.work` less its
    per-step and per-pass overheads, ``fixed_work``): what Eq. (2') weighs. The refit of
    2026-11 counts those overheads (milliseconds) so that budgets read time; they do not
    depend on d, and with them the work of a cheap run no longer grows like 1 / d."""
    return float(cost.work - cost.fixed_work)


def _refined(mechanism: Mechanism, v: float, d: float, budget: Any) -> float:
    """Eq. (2'): ``d`` refined towards sqrt(12 v AUTO_FINE_RTOL) (Eq. 2 at the stricter target)
    while the composition's estimated work stays at most :data:`AUTO_CHEAP_WORK`; ``d`` itself
    where the run is not that cheap. The work grows about like 1 / d (the composed grid), so
    the first candidate is d scaled by the work's ratio to the cap; it is coarsened by factors
    of 1.5 until its estimate fits. Tightness only: every grid's curve is certified."""
    d_fine = _readable(max(D_FLOOR, math.sqrt(12.0 * v * AUTO_FINE_RTOL)))
    if not d_fine < d:
        return d
    # a quick look first (an estimate costs 10-40 ms; see CHEAP_WORK_PER_SD)
    steps = sum(t for _, _, t, _ in _phases(mechanism) or [])
    if CHEAP_WORK_PER_SD * math.sqrt(steps * v) / d > AUTO_CHEAP_WORK:
        return d
    cost = affordable_cost(mechanism, d, budget)
    if cost is None or not grid_work(cost) < AUTO_CHEAP_WORK:
        return d
    x = _readable(max(d_fine, d * grid_work(cost) / AUTO_CHEAP_WORK))
    while x < d:
        c = affordable_cost(mechanism, x, budget)
        if c is not None and grid_work(c) <= AUTO_CHEAP_WORK and c.grid_points <= AUTO_MAX_GRID:
            return x
        x = _readable(1.5 * x)
    return d


def search_plan(mechanism: Mechanism, *, budget: Any = None) -> tuple[float, list[tuple[float, float]]]:
    """(d, grids): the a-priori grid ``choose_discretization(..., search=False)`` and, where the
    default rule searches (Eq. 5), the grids the search may account, with their estimated work
    [(d, work)] (the grid it chooses is one of them); [] where it searches nothing (then ``d``
    is the rule's choice). Estimates only: nothing is accounted."""
    d_h, how = choose_discretization(mechanism, budget=budget, search=False)
    if not how.startswith("chosen for heavy-tailed") or not d_h < D_CEIL:
        return d_h, []
    return d_h, candidates(mechanism, d_h, budget)


def search_work(mechanism: Mechanism, *, budget: Any = None) -> float:
    """The estimated work of the grids Eq. (5)'s search may account for ``mechanism`` (0 where
    the default rule searches nothing): what a server adds to the a-priori grid's estimate
    (``choose_discretization(..., search=False)``) to schedule the report."""
    return sum(w for _, w in search_plan(mechanism, budget=budget)[1])


def _finest_affordable(mechanism: Mechanism, d: float, budget: Any) -> float:
    """``d`` coarsened by factors of 1.5 (at most to the default) while the composition's
    grid would exceed :data:`AUTO_MAX_GRID` points or ``budget``."""
    d0 = DISCRETIZATION_DEFAULT
    while d < d0:
        # a single step's a-priori grid bound counts too (what account() refuses without a
        # budget: q = 1e-12 once chose d = 1e-8 and was refused for "noise_multiplier")
        cost = affordable_cost(mechanism, d, budget)
        if cost is not None and cost.grid_points <= AUTO_MAX_GRID:
            break
        d = _readable(min(d0, 1.5 * d))
    return min(d, d0)


def _readable(d: float) -> float:
    """``d`` rounded down to two significant digits (a reproducible, readable value)."""
    e = math.floor(math.log10(d))
    return max(D_FLOOR, float(f"{math.floor(d / 10.0 ** (e - 1) * (1 + 1e-12))}e{e - 1}"))
