"""Calibrate DP-SGD to any target, solving for any one unknown (statsmodels ``solve_power``
pattern: leave exactly one parameter out).

Targets (:mod:`fdpkit.calibrate.targets`): mu, epsilon at delta, certified TPR at an FPR,
advantage, posterior for a prior. Unknowns: the noise multiplier (default), the sample rate
or batch size, the number of steps or epochs; any sampling scheme and relation of
:func:`fdpkit.dpsgd`. Every target metric decreases in the noise multiplier and increases
in the sample rate and the number of steps, so the safe side is "more noise" or "fewer
samples / steps". The solver

1. starts from the central-limit approximation mu ~ k q sqrt(T (e^{(Delta/sigma)^2} - 1))
   (Dong, Roth & Su 2022, Cor. 5.4 and Thm. 5.3 for sampling without replacement; exact
   sqrt(P) Delta / sigma for shuffled batches), with the target mapped to the mu of a
   Gaussian curve that just meets it;
2. refines with secant steps on log(metric) in log(unknown) at a coarse discretization
   (cheap accounting runs);
3. at the requested discretization takes Newton steps with the coarse slope aimed a little
   inside the safe side (usually one or two runs), and for whole-number unknowns brackets
   and bisects.

A candidate whose accounting run the cost budget refuses is replaced by the closest value on
its safe side that the budget allows (:mod:`fdpkit.calibrate._frontier`).

The returned value always achieves ``metric <= target`` at the requested discretization:
never more optimistic than asked. Plain bisection at the requested discretization needs
about 20 runs for 0.02% precision (see ``benchmarks/``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from fdpkit._numerics import check_real, norm_isf
from fdpkit.accounting._resolution import choose_discretization
from fdpkit.accounting import DISCRETIZATION_DEFAULT, BudgetExceeded, CostBudget, account, closed_form_curve, estimate_cost
from fdpkit.accounting.cost import check_leaf_grids
from fdpkit.calibrate._frontier import CostFrontier, answer_beyond, budget_note
from fdpkit.calibrate.outcome import SAFE_ROUNDING, CalibrationResult  # noqa: F401  (re-exported)
from fdpkit.calibrate.targets import Target, achieved_values, make_target
from fdpkit.errors import ParameterError
from fdpkit.fit import ALPHA_MIN_DEFAULT, fit_gdp
from fdpkit.mechanisms import dpsgd
from fdpkit.mechanisms.training import DPSGD, MAX_STEPS

#: Relative precision of the returned value: the achieved metric is within this of target.
CALIBRATION_RTOL = 2e-4
#: Relative precision of a continuous unknown: converged once the secant puts the exact
#: solution within this of the (safe) value returned (plain bisection's stopping rule).
X_RTOL = 1e-4
#: Discretization used for the cheap first stage.
COARSE_DISCRETIZATION = 2e-3
#: Most accounting runs at the requested discretization before the solver gives up precision.
MAX_FINE_RUNS = 12
NOISE_RANGE = (0.05, 1e4)
#: The full-resolution discretization in the search (the requested one, or the rule's per run).
FINE = None
UNKNOWNS = ("noise_multiplier", "sample_rate", "batch_size", "steps", "epochs")


def dpsgd_mu(noise_multiplier: float, sample_rate: float, steps: int, *,
             discretization: float = DISCRETIZATION_DEFAULT, alpha_min: float = ALPHA_MIN_DEFAULT) -> float:
    """The tight pessimistic mu of Poisson DP-SGD (certified curve, FPR/FNR >= alpha_min)."""
    curve = account(dpsgd(noise_multiplier, sample_rate, steps), discretization=discretization).curve
    return fit_gdp(curve, alpha_min=alpha_min).mu


def _clt_mu(m: DPSGD) -> float:
    """Central-limit mu of a one-phase run (step 1 of the module docs)."""
    ph, k = m.phases[0], (m.examples_per_user or 1)
    d = m.sensitivity
    if m.sampling == "shuffled":
        return k * d * math.sqrt(ph.participations) / ph.noise_multiplier
    ratio = d / ph.noise_multiplier  # (a float square, not **: no OverflowError at sigma = 1e-200)
    growth = math.expm1(min(ratio * ratio, 700.0))
    return k * ph.sample_rate * math.sqrt(ph.steps * growth)


@dataclass
class _Problem:
    """The one-unknown family x -> DP-SGD run, with its bounds and direction."""

    unknown: str
    build: Callable[[float], DPSGD]
    lo: float
    hi: float
    integer: bool
    increasing: bool

    def clamp(self, x: float) -> float:
        x = min(max(x, self.lo), self.hi)
        return float(math.floor(x)) if self.integer else x


def _problem(unknown: str, kw: dict[str, Any]) -> _Problem:
    def build(x: float) -> DPSGD:
        args = dict(kw)
        if unknown == "noise_multiplier":
            args["noise_multiplier"] = x
        elif unknown == "sample_rate":
            args["sample_rate"] = x
        elif unknown == "batch_size":
            args["batch_size"] = int(x)
        else:
            args["steps"], args["epochs"] = int(x), None
        nm = args.pop("noise_multiplier")
        return dpsgd(nm, **args)

    n = kw.get("dataset_size")
    if unknown == "noise_multiplier":
        return _Problem(unknown, build, *NOISE_RANGE, False, False)
    if unknown == "sample_rate":
        return _Problem(unknown, build, 1e-9, 1.0, False, True)
    if unknown == "batch_size":
        return _Problem(unknown, build, 1.0, float(n), True, True)
    return _Problem(unknown, build, 1.0, float(MAX_STEPS), True, True)


def _initial_guess(p: _Problem, target: Target, probe: float) -> float:
    """Solve the central-limit mu = target's mu-equivalent for x (bisection in log x)."""
    goal = target.mu_equivalent()
    lo, hi = math.log(p.lo), math.log(p.hi)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        try:
            val = _clt_mu(p.build(p.clamp(math.exp(mid)) if not p.integer else max(1.0, math.floor(math.exp(mid)))))
        except ValueError:
            val = math.inf
        if (val > goal) == p.increasing:
            hi = mid
        else:
            lo = mid
    return p.clamp(math.exp(0.5 * (lo + hi))) if not p.integer else max(p.lo, float(round(math.exp(0.5 * (lo + hi)))))


#: Default cost budget of each accounting run of a search (see :func:`calibrate_dpsgd`):
#: about 10 CPU-seconds of work (``fdpkit.accounting.cost.WORK_PER_SECOND``) and 2 GiB.
CALIBRATION_BUDGET = CostBudget(max_grid_points=20_000_000, max_work=1e8, max_memory_bytes=2 * 1024**3)
#: The whole search's estimated work may be at most this many times the per-run budget
#: (as many as the full-resolution runs it may make: about 2 minutes at the default) ...
SEARCH_WORK_RUNS = 12.0
#: ... and it makes at most this many accounting runs (coarse and full together).
MAX_SEARCH_RUNS = 60


def _exact_family(run: DPSGD, unknown: str) -> bool:
    """Whether every run of the search is accounted by a closed form (an exact Gaussian
    curve): shuffled batches, and full batches (sample rate 1, Poisson or fixed-size) when
    the sample rate is not the unknown (:func:`fdpkit.accounting.closed_form.full_batch_gaussian`)."""
    if run.sampling == "shuffled":
        return True
    return unknown not in ("sample_rate", "batch_size") and closed_form_curve(run) is not None


class _SearchCapped(Exception):
    """The search reached MAX_SEARCH_RUNS or its total work cap."""


def _mu_ceiling(alpha_min: float) -> float:
    """The largest finite mu a fit over FPR, FNR >= alpha_min certifies for a numeric curve:
    2 z(alpha_min) (the corner alpha = beta = alpha_min; Gomez et al. Eq. 21). Beyond it
    the fit reads inf, so a mu target at or above it only asks where mu turns infinite."""
    return 2.0 * float(norm_isf(alpha_min)) if alpha_min > 0 else math.inf


def calibrate_dpsgd(
    *,
    mu: float | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    tpr: float | None = None,
    fpr: float | None = None,
    advantage: float | None = None,
    posterior: float | None = None,
    prior: float | None = None,
    noise_multiplier: float | None = None,
    sample_rate: float | None = None,
    steps: int | None = None,
    batch_size: int | None = None,
    dataset_size: int | None = None,
    epochs: float | None = None,
    sampling: str = "poisson",
    relation: str = "add-remove",
    max_batch_size: int | None = None,
    unit: str = "example",
    examples_per_user: int | None = None,
    drop_last: bool = False,
    discretization: float | None = None,
    alpha_min: float = ALPHA_MIN_DEFAULT,
    max_steps: int | None = None,
    min_noise_multiplier: float | None = None,
    budget: CostBudget | None = CALIBRATION_BUDGET,
) -> CalibrationResult:
    """Solve DP-SGD for the one training parameter left out, to meet one target.

    Parameters
    ----------
    mu, epsilon (with delta), tpr (with fpr), advantage, posterior (with prior, fpr)
        The target: exactly one; with none, the run is only accounted (all training
        parameters given; ``unknown`` is then "mu").
    noise_multiplier, sample_rate or batch_size, steps or epochs
        Training parameters (see :func:`fdpkit.dpsgd`): leave exactly one of the three
        out; it is solved for (a batch size when ``dataset_size`` is given and
        the sampling scheme has fixed batches, or steps/epochs as given by the other
        parameters: epochs when batch_size and dataset_size are known).
    dataset_size, sampling, relation, max_batch_size, unit, examples_per_user
        As for :func:`fdpkit.dpsgd`.
    drop_last : bool
        Shuffled or fixed-size batches counted in epochs: the data loader dropped the last,
        smaller batch (floor(n/b) steps per epoch instead of ceil(n/b); as for
        :func:`fdpkit.dpsgd`).
    discretization, alpha_min
        Accounting settings (see :func:`fdpkit.privacy_report`). ``discretization`` None
        (the default): the library's rule, as :func:`fdpkit.privacy_report` applies it to
        each candidate run (1e-4, finer where the run's steps are too small for it, issue
        29; coarser where they are so large that μ changes by an estimated 1e-6), so the calibrated run meets the target as its default report states it.
    max_steps, min_noise_multiplier
        Optional bounds of the search (a server's limits on the work of one request).
    budget : CostBudget or None
        Cost limit of each accounting run (:func:`fdpkit.accounting.estimate_cost`;
        default: :data:`CALIBRATION_BUDGET`). A candidate over it is not accounted: the
        search goes on from the closest value on its safe side that the budget allows
        (:mod:`fdpkit.calibrate._frontier`). Where the answer itself lies beyond that edge, a
        ValueError naming the target; where the target is estimated to hold all the way past
        it, that edge's value (``converged`` False, ``reason`` says why).

    Returns
    -------
    CalibrationResult
        The smallest noise multiplier, or the largest sample rate, batch size or number of
        steps, that keeps the target; ``achieved`` holds every metric of that run.

    Examples
    --------
    >>> r = calibrate_dpsgd(epsilon=3.0, delta=1e-5, sample_rate=0.05, steps=100, discretization=1e-3)
    >>> r.unknown, r.achieved["epsilon"] <= 3.0, r.converged
    ('noise_multiplier', True, True)
    """
    target = make_target(mu=mu, epsilon=epsilon, delta=delta, tpr=tpr, fpr=fpr, advantage=advantage,
                         posterior=posterior, prior=prior)
    groups = {"noise_multiplier": noise_multiplier is None,
              "sample_rate": sample_rate is None and batch_size is None,
              "steps": steps is None and epochs is None}
    missing = [k for k, v in groups.items() if v]
    kw = dict(noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps, batch_size=batch_size,
              dataset_size=dataset_size, epochs=epochs, sampling=sampling, relation=relation,
              max_batch_size=max_batch_size, unit=unit, examples_per_user=examples_per_user,
              drop_last=drop_last)
    if target is None:
        if missing:
            raise ParameterError("give a target (mu, epsilon, tpr, advantage or posterior) to solve for "
                                 f"{', '.join(missing)}, or give every training parameter to account the run", missing[0],
                                 tuple(dict.fromkeys((*missing, "mu", "epsilon", "tpr", "advantage", "posterior"))))
        m = dpsgd(**kw)
        d = choose_discretization(m, budget=budget)[0] if discretization is None else discretization
        acc = account(m, discretization=d, budget=budget)
        ach = achieved_values(acc, None, alpha_min)
        return CalibrationResult("mu", ach["mu"], ach["mu"], True, 1, 0, "", "", ach, m, discretization=d)
    if len(missing) != 1:
        raise ParameterError(
            "exactly one of noise_multiplier, sample_rate (or batch_size), steps (or epochs) must be left out "
            f"to be solved for, got {len(missing)} left out ({', '.join(missing) or 'none'})", (missing or ["noise_multiplier"])[0],
            tuple(dict.fromkeys((*missing, "noise_multiplier", "sample_rate", "batch_size", "steps", "epochs"))))
    unknown = missing[0]
    fixed_batches = sampling in ("fixed-size", "shuffled", "truncated-poisson")
    if unknown == "sample_rate" and dataset_size is not None and (fixed_batches or epochs is not None):
        unknown = "batch_size"
    report_epochs = unknown == "steps" and batch_size is not None and dataset_size is not None
    # validate the given parameters once (errors name them), with a placeholder unknown
    probe = {"noise_multiplier": 1.0, "sample_rate": 0.5, "batch_size": 1, "steps": 1}[unknown]
    p = _problem(unknown, kw)
    probe_run = p.build(probe)
    if target.name == "mu" and not _exact_family(probe_run, unknown):
        a_min = float(check_real("alpha_min", alpha_min, low=0.0, high=0.5, high_open=True, scalar=True))
        ceiling = _mu_ceiling(a_min)
        if target.value >= ceiling:
            raise ParameterError(
                f"mu must be below {ceiling:.4g} for a numeric curve fitted with alpha_min={a_min:g}, got {mu!r}: "
                f"the fit certifies no finite mu above 2 z(alpha_min) = {ceiling:.4g} (it reads inf there), so "
                "every run with a finite mu already meets this target; give a smaller mu, or a smaller alpha_min", "mu", ("mu", "alpha_min"))
    if max_steps is not None and p.unknown == "steps":
        p.hi = float(min(p.hi, int(max_steps)))
    if min_noise_multiplier is not None and p.unknown == "noise_multiplier":
        p.lo = max(p.lo, float(min_noise_multiplier))
    try:
        return _solve(p, target, discretization, alpha_min, report_epochs, budget)
    except _SearchCapped as exc:
        raise ParameterError(f"{target.name}: no run meeting this target was found by changing {p.unknown} within "
                             f"the search's limits ({exc}); choose a weaker target or change the other parameters",
                             target.name) from None
    except BudgetExceeded as exc:
        raise ParameterError(f"{target.name}: meeting this target by changing {p.unknown} needs more than the cost "
                             f"budget allows ({exc}); choose a weaker target, change the other parameters "
                             "or pass a larger budget=", target.name) from None


def _solve(p: _Problem, target: Target, disc: float | None, alpha_min: float, report_epochs: bool,
           budget: CostBudget | None = None) -> CalibrationResult:
    """The search of the module docs. ``disc`` None: the full-resolution runs use the
    library's rule for each candidate (``FINE`` below stands for it)."""
    fine = coarse = 0
    spent = [0.0]
    stage = ["coarse"]
    cache: dict[tuple[float, float | None], tuple[float, Any]] = {}
    work_cap = math.inf if budget is None else SEARCH_WORK_RUNS * budget.max_work
    best_safe: list[float] = []  # full-resolution values on the safe side, for a capped search
    refusals: list[BudgetExceeded] = []  # candidates refused for their cost (the first one is reported)

    def resolve(x: float, d: float | None, search: bool = True) -> tuple[DPSGD, float]:
        """The run at ``x`` and its discretization (``d`` FINE: the requested one, or the rule's;
        ``search`` False: the rule's a-priori grid, without the accounting of its Eq. 5)."""
        m = p.build(x)
        if d is None:
            d = disc if disc is not None else choose_discretization(m, budget=budget, search=search)[0]
        return m, d

    def affordable(x: float, d: float | None) -> bool:
        """Whether the budget (or, without one, the machine's memory) allows the run at ``x``:
        the checks :func:`metric` and :func:`fdpkit.accounting.account` make, without accounting."""
        m, dd = resolve(x, d, search=False)  # Eq. 5's search tries no grid costlier than this
        try:
            if budget is not None:
                estimate_cost(m, dd).check(budget)
            elif closed_form_curve(m) is None and m.sampling != "shuffled":
                check_leaf_grids(m, dd)
        except BudgetExceeded:
            return False
        return True

    frontier = CostFrontier(p, affordable, X_RTOL)

    def metric(x: float, d: float | None) -> tuple[float, Any]:
        """(target metric, accounting) of the run at ``x``; ``d`` FINE (None): the requested
        discretization (or the rule's for that run)."""
        nonlocal fine, coarse
        if d is not None and d == disc:  # a coarse stage at the requested discretization itself
            d = FINE
        key = (x, d)
        if key not in cache:
            m, d = resolve(x, d)
            if fine + coarse >= MAX_SEARCH_RUNS:
                raise _SearchCapped(f"{MAX_SEARCH_RUNS} accounting runs")
            if budget is not None:
                est = estimate_cost(m, d)
                est.check(budget)
                if spent[0] + est.work > work_cap:
                    raise _SearchCapped(f"about {work_cap / 1e7:.0f} CPU-seconds of estimated work in all")
                spent[0] += est.work
            acc = account(m, discretization=d)
            cache[key] = (target.read(acc, alpha_min), acc)
            if key[1] is FINE and cache[key][0] <= target.value:
                best_safe.append(x)
            if key[1] is FINE and stage[0] == "fine":
                fine += 1
            else:
                coarse += 1
        return cache[key]

    def probe(x: float, d: float | None) -> tuple[float, float, bool]:
        """(x, target metric, False) of the run at ``x``; where the budget refuses that run,
        (y, metric at y, True) for the closest value y on its safe side that the budget allows
        (the search goes on from there instead of ending with the refusal)."""
        try:
            return x, metric(x, d)[0], False
        except BudgetExceeded as exc:
            refusals.append(exc)
            y = frontier.retreat(x, FINE if d is not None and d == disc else d, refusals[0])
            return y, metric(y, d)[0], True

    def finish(x: float, converged: bool, reason: str = "") -> CalibrationResult:
        val, acc = metric(x, FINE)
        m = acc.mechanism
        ach = achieved_values(acc, target, alpha_min)
        value: float = int(x) if p.integer else x
        unknown = p.unknown
        if report_epochs:
            ph = m.phases[0]
            per = ph.batches_per_epoch(m.dataset_size) if m.sampling in ("fixed-size", "shuffled") else None
            # a data loader's epochs: ceil(n/b) batches each, floor(n/b) with drop_last
            ach["epochs_equivalent"] = ph.steps / per if per else ph.steps * ph.batch_size / m.dataset_size
        return CalibrationResult(unknown, value, ach["mu"], converged, fine, coarse, reason, target.describe(), ach, m,
                                 discretization=acc.discretization)

    try:
        good = lambda v: v <= target.value  # noqa: E731
        # edge: the most private end already fails / the least private end already passes
        least = p.hi if p.increasing else p.lo
        most = p.lo if p.increasing else p.hi
        x = _initial_guess(p, target, least)
        d_c = COARSE_DISCRETIZATION if disc is None or disc < COARSE_DISCRETIZATION else disc
        stage[0] = "fine"
        if p.unknown in ("sample_rate", "batch_size") and affordable(least, FINE) and good(metric(least, FINE)[0]):
            return finish(least, True, f"even {p.unknown} = {least:g} stays within the target")
        stage[0] = "coarse"
        # 1. secant on log metric in log x, coarse discretization
        sign = 1.0 if p.increasing else -1.0

        def gap(x: float, d: float | None) -> tuple[float, float, bool]:
            """(x or the value taken instead, log(metric / target) there, whether x was refused)."""
            y, v, moved = probe(x, d)
            return y, math.log(max(v, 1e-300)) - math.log(target.value), moved

        t0 = math.log(x)
        y, g0, moved = gap(x, d_c)
        t0 = math.log(y) if moved else t0
        t1 = math.log(p.clamp(math.exp(t0 - 0.05 * sign * (1 if g0 > 0 else -1)))) if not p.integer else \
            math.log(max(p.lo, min(p.hi, float(round(math.exp(t0 - 0.05 * sign * (1 if g0 > 0 else -1)))))))
        if t1 == t0:
            t1 = math.log(min(p.hi, math.exp(t0) + 1.0))
        y, g1, moved = gap(math.exp(t1), d_c)
        t1 = math.log(y) if moved else t1
        slope = (g1 - g0) / (t1 - t0) if t1 != t0 else 0.0
        for _ in range(14):
            if g1 == g0 or abs(g1) < 2e-5:
                break
            t2 = t1 - g1 * (t1 - t0) / (g1 - g0)
            t2 = min(max(t2, math.log(p.lo)), math.log(p.hi))
            if p.integer:
                t2 = math.log(max(p.lo, float(round(math.exp(t2)))))
                if t2 == t1:
                    break
            t0, g0, t1 = t1, g1, t2
            y, g1, moved = gap(math.exp(t1), d_c)
            t1 = math.log(y) if moved else t1
        if slope == 0 or (slope > 0) != p.increasing or not math.isfinite(slope):
            slope = sign
        x = math.exp(t1)
        stage[0] = "fine"
        if p.integer:
            def beyond(v: float) -> bool:  # the answer past a safe whole value the budget's edge stops at
                return not target.vacuous() and answer_beyond(gap(v, FINE)[1], v, least, slope)

            return _integer_finish(p, x, lambda v: good(metric(v, FINE)[0]), finish, target.describe(), target.name,
                                   beyond)
        # 2. requested discretization: a Newton step with the coarse slope, then secant steps on
        # the full-resolution points (their slope differs from the coarse one), aimed a little
        # inside the safe side; bisection between safe and unsafe points if that stalls
        aim = CALIBRATION_RTOL / 2
        safe: tuple[float, float] | None = None  # (x, gap) on the safe side closest to the target
        unsafe: float | None = None
        last: tuple[float, float] | None = None
        cand = p.clamp(x)
        for _ in range(3 * MAX_FINE_RUNS):
            if fine >= MAX_FINE_RUNS:
                break
            cand, gp, moved = gap(cand, FINE)
            if last is not None and abs(math.log(cand) - last[0]) > 1e-9:
                s_f = (gp - last[1]) / (math.log(cand) - last[0])
                if s_f != 0 and (s_f > 0) == p.increasing and math.isfinite(s_f):
                    slope = s_f
            last = (math.log(cand), gp)
            if gp <= 0:
                if safe is None or -gp < -safe[1]:
                    safe = (cand, gp)
                # converged: within RTOL of the target, or within X_RTOL of the unknown's solution
                if -gp <= CALIBRATION_RTOL or abs(gp / slope) <= X_RTOL or cand == least:
                    return finish(cand, True)
                if moved:  # safe at the budget's edge: the answer lies past it, or the target holds to the end
                    # a target every mechanism meets never needs more than the budget
                    if not target.vacuous() and answer_beyond(gp, cand, least, slope):
                        raise refusals[0]
                    return finish(cand, False, budget_note(p, refusals[0]))
            else:
                unsafe = cand if unsafe is None or (cand < unsafe) == p.increasing else unsafe
                if cand == most:
                    break
            new = p.clamp(cand * math.exp((-gp - aim) / slope))
            if safe is not None and unsafe is not None:
                lo_b, hi_b = sorted((safe[0], unsafe))
                if not lo_b < new < hi_b:  # the secant left the bracket: bisect in log x
                    new = math.sqrt(safe[0] * unsafe)
            if new == cand:
                new = p.clamp(cand * math.exp(-sign * aim))
            cand = new
        if safe is not None:
            return finish(safe[0], False, "the target was met on the safe side but not to full precision")
        raise ParameterError(f"could not meet {target.describe()} by changing {p.unknown}: even "
                             f"{p.unknown} = {most:g} exceeds it; change the other parameters", target.name)
    except _SearchCapped:
        if not best_safe:
            raise
        # the closest safe full-resolution point found (already accounted: no new run)
        x = max(best_safe) if p.increasing else min(best_safe)
        return finish(x, False, f"the search reached its limits ({MAX_SEARCH_RUNS} runs or its work cap); "
                      "the value returned meets the target but may not be the tightest")


def _integer_finish(p: _Problem, x: float, ok: Callable[[float], bool], finish, desc: str = "the target",
                    name: str = "mu", beyond: Callable[[float], bool] | None = None) -> CalibrationResult:
    """Largest whole x with ok(x) (metric increases in x): bracket around the estimate, bisect.
    A value the cost budget refuses counts as not ok; where the answer stops at such a value,
    ``beyond(answer)`` says whether the target's boundary lies past it (the refusal is raised)
    or the target holds to the end of the range (the answer is returned, flagged)."""
    lo_ok: float | None = None
    hi_bad: float | None = None
    refused: dict[float, BudgetExceeded] = {}

    def test(c: float) -> bool:
        try:
            return ok(c)
        except BudgetExceeded as exc:
            refused[c] = exc
            return False

    c = p.clamp(x)
    step = max(1.0, math.floor(0.01 * c))
    for _ in range(60):
        if test(c):
            lo_ok = c
            if c >= p.hi:
                return finish(c, True)
            nxt = min(p.hi, c + step)
        else:
            hi_bad = c
            if c <= p.lo:
                if c in refused:
                    raise refused[c]
                raise ParameterError(f"could not meet the target by changing {p.unknown}: even {p.unknown} = "
                                     f"{int(p.lo)} exceeds it ({desc}); change the other parameters", name)
            nxt = max(p.lo, c - step)
        if lo_ok is not None and hi_bad is not None:
            break
        c, step = nxt, step * 2
    while hi_bad - lo_ok > 1:
        mid = float(math.floor((lo_ok + hi_bad) / 2))
        if test(mid):
            lo_ok = mid
        else:
            hi_bad = mid
    if hi_bad in refused:
        if beyond is None or beyond(lo_ok):
            raise refused[hi_bad]
        return finish(lo_ok, False, budget_note(p, refused[hi_bad]))
    return finish(lo_ok, True)
