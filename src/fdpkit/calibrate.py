"""Calibrate DP-SGD to a target mu: leave exactly one unknown and solve for it
(statsmodels ``solve_power`` pattern).

The mu of DP-SGD is the tight pessimistic mu-GDP of its certified curve (``fit_gdp`` of the
PLD curve, FPR/FNR range alpha_min). It is decreasing in the noise multiplier and
increasing in the sample rate and the number of steps. The solver

1. starts from the central-limit approximation mu ~ q sqrt(T (e^{1/sigma^2} - 1))
   (Dong, Roth & Su 2022, Cor. 5.4; Bu et al. 2020), solved in closed form for the unknown;
2. refines with secant steps on log mu at a coarse discretization (cheap PLDs);
3. finishes with secant steps at the requested discretization, then steps to the safe side
   and checks: the returned value always achieves mu <= target at the requested
   discretization (it is never more optimistic than asked).

Plain bisection at the final discretization needs about 20 expensive evaluations for 0.1%
precision; this needs two to four, plus a few cheap ones (see ``benchmarks/``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from fdpkit._numerics import MU_MAX, check_real
from fdpkit.accounting import DISCRETIZATION_DEFAULT, BudgetExceeded, CostBudget, account
from fdpkit.fit import ALPHA_MIN_DEFAULT, fit_gdp
from fdpkit.mechanisms import dpsgd
from fdpkit.mechanisms.combinators import MAX_TIMES

#: Relative precision of the returned value (the achieved mu is within about this of target).
CALIBRATION_RTOL = 2e-4
#: Discretization used for the cheap first stage.
COARSE_DISCRETIZATION = 2e-3
_MAX_FINE_STEPS = 8
#: Largest target mu accepted (fdpkit's MU_MAX): beyond it every attack is near-perfect.
CALIBRATE_MU_MAX = MU_MAX
#: Default cost budget of each accounting run during a search: a target that would need a
#: larger grid fails fast with a ValueError instead of exhausting memory.
CALIBRATION_BUDGET = CostBudget()


@dataclass(frozen=True)
class CalibrationResult:
    """Outcome of :func:`calibrate_dpsgd`.

    Attributes
    ----------
    unknown : str
        Which parameter was solved for.
    value : float
        Its value (an int for ``steps``); on the safe side of the target.
    achieved_mu : float
        mu of DP-SGD with ``value`` at the requested discretization (<= target mu).
    converged : bool
        Whether the solver met its tolerance.
    evaluations : int
        Accounting runs at the requested discretization (expensive ones).
    coarse_evaluations : int
        Accounting runs at the coarse discretization.
    reason : str
        Empty when converged; otherwise why not.
    """

    unknown: str
    value: float
    achieved_mu: float
    converged: bool
    evaluations: int
    coarse_evaluations: int = 0
    reason: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def dpsgd_mu(noise_multiplier: float, sample_rate: float, steps: int, *,
             discretization: float = DISCRETIZATION_DEFAULT, alpha_min: float = ALPHA_MIN_DEFAULT,
             budget: CostBudget | None = None) -> float:
    """The tight pessimistic mu of DP-SGD (certified curve, FPR/FNR >= alpha_min)."""
    curve = account(dpsgd(noise_multiplier, sample_rate, steps), discretization=discretization,
                    budget=budget).curve
    return fit_gdp(curve, alpha_min=alpha_min).mu


def _clt_guess(unknown: str, mu: float, sigma, q, steps) -> float:
    if unknown == "noise_multiplier":
        return 1.0 / math.sqrt(math.log1p((mu / q) ** 2 / steps))
    growth = math.expm1(1.0 / sigma**2)
    if unknown == "sample_rate":
        return min(1.0, mu / math.sqrt(steps * growth))
    return max(1.0, (mu / q) ** 2 / growth)


def _check(name: str, value, *, upper: float | None = None, integer: bool = False) -> float:
    """A positive finite number (NumPy scalars welcome) through the shared validator."""
    v = check_real(name, value, allow_inf=True, scalar=True) * 1.0
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    if upper is not None and v > upper:
        raise ValueError(f"{name} must be <= {upper:g}, got {value!r}")
    if integer and v != int(v):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return v


def calibrate_dpsgd(
    *,
    mu: float | None = None,
    noise_multiplier: float | None = None,
    sample_rate: float | None = None,
    steps: int | None = None,
    discretization: float = DISCRETIZATION_DEFAULT,
    alpha_min: float = ALPHA_MIN_DEFAULT,
    budget: CostBudget | None = CALIBRATION_BUDGET,
) -> CalibrationResult:
    """Solve DP-SGD for the one parameter given as None.

    Parameters
    ----------
    mu, noise_multiplier, sample_rate, steps
        Exactly one must be None. With ``mu=None`` this simply accounts the mechanism.
    discretization, alpha_min
        Accounting settings (see :func:`fdpkit.privacy_report`).
    budget : CostBudget or None
        Cost limit of each accounting run (:func:`fdpkit.accounting.estimate_cost`); a
        search that would need more stops with a ValueError naming the target.

    Returns
    -------
    CalibrationResult
        ``achieved_mu <= mu`` always: the smallest noise multiplier, or the largest sample
        rate or number of steps, that keeps DP-SGD mu-GDP.

    Examples
    --------
    >>> r = calibrate_dpsgd(mu=1.0, sample_rate=0.05, steps=100, discretization=1e-3)
    >>> r.unknown, r.achieved_mu <= 1.0, r.converged
    ('noise_multiplier', True, True)
    """
    given = {"mu": mu, "noise_multiplier": noise_multiplier, "sample_rate": sample_rate, "steps": steps}
    unknowns = [k for k, v in given.items() if v is None]
    if len(unknowns) != 1:
        raise ValueError(
            "exactly one of mu, noise_multiplier, sample_rate, steps must be None, got "
            f"{len(unknowns)} ({', '.join(unknowns) or 'none'})"
        )
    unknown = unknowns[0]
    if noise_multiplier is not None:
        noise_multiplier = _check("noise_multiplier", noise_multiplier)
    if sample_rate is not None:
        sample_rate = _check("sample_rate", sample_rate, upper=1.0)
    if steps is not None:
        steps = int(_check("steps", steps, upper=MAX_TIMES, integer=True))
    if unknown == "mu":
        m = dpsgd_mu(noise_multiplier, sample_rate, steps, discretization=discretization, alpha_min=alpha_min,
                     budget=budget)
        return CalibrationResult("mu", m, m, True, 1)
    target = _check("mu", mu, upper=CALIBRATE_MU_MAX)
    try:
        return _solve(unknown, target, noise_multiplier, sample_rate, steps, discretization, alpha_min, budget)
    except BudgetExceeded as exc:
        raise ValueError(f"mu: reaching mu={target:g} by changing {unknown} needs more than the cost budget "
                         f"allows ({exc}); choose a smaller mu or change the other parameters") from None


def _solve(unknown: str, target: float, noise_multiplier, sample_rate, steps, discretization: float,
           alpha_min: float, budget: CostBudget | None) -> CalibrationResult:
    fine_count = coarse_count = 0

    def evaluate(x: float, disc: float) -> float:
        nonlocal fine_count, coarse_count
        if disc == discretization:
            fine_count += 1
        else:
            coarse_count += 1
        p = dict(noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps)
        p[unknown] = int(round(x)) if unknown == "steps" else x
        return dpsgd_mu(p["noise_multiplier"], p["sample_rate"], p["steps"],
                        discretization=disc, alpha_min=alpha_min, budget=budget)

    # which way is safe: mu decreases in sigma, increases in q and T
    increasing = unknown != "noise_multiplier"
    lo_lim, hi_lim = {"noise_multiplier": (1e-2, 1e4), "sample_rate": (1e-9, 1.0), "steps": (1.0, MAX_TIMES)}[unknown]

    if unknown == "sample_rate" and evaluate(1.0, discretization) <= target:
        m = evaluate(1.0, discretization)
        return CalibrationResult(unknown, 1.0, m, True, fine_count, coarse_count,
                                 "even sample_rate = 1 stays within the target mu")
    x = min(max(_clt_guess(unknown, target, noise_multiplier, sample_rate, steps), lo_lim), hi_lim)

    def evaluate_steps_done(cand: float, achieved: float) -> bool:
        # integer steps: done when one more step would exceed the target
        return cand >= hi_lim or evaluate(cand + 1, discretization) > target

    def clamp(v: float) -> float:
        v = min(max(v, lo_lim), hi_lim)
        return float(math.floor(v)) if unknown == "steps" else v

    # 1. secant on log mu(log x) at the coarse discretization (cheap), to high precision
    disc_c = COARSE_DISCRETIZATION if discretization < COARSE_DISCRETIZATION else discretization
    t0, g0 = math.log(x), math.log(evaluate(x, disc_c)) - math.log(target)
    t1 = t0 - 0.05 * (1 if (g0 > 0) == increasing else -1)
    g1 = math.log(evaluate(math.exp(t1), disc_c)) - math.log(target)
    # the slope of log mu in log x over the first, wide step (later steps are too close
    # together for a slope: discretization wiggles dominate there)
    slope = (g1 - g0) / (t1 - t0)
    for _ in range(12):
        if g1 == g0 or abs(g1) < 1e-6:
            break
        t2 = t1 - g1 * (t1 - t0) / (g1 - g0)
        t2 = min(max(t2, math.log(lo_lim)), math.log(hi_lim))
        t0, g0, t1 = t1, g1, t2
        g1 = math.log(evaluate(math.exp(t1), disc_c)) - math.log(target)
    if slope == 0 or (slope > 0) != increasing:
        slope = 1.0 if increasing else -1.0
    x = math.exp(t1)

    # 2. fine discretization: measure, correct with the coarse slope, land on the safe side
    direction = -1.0 if increasing else 1.0
    margin = CALIBRATION_RTOL / 4
    cand = clamp(x)
    prev: tuple[float, float] | None = None
    for _ in range(_MAX_FINE_STEPS + 30):
        achieved = evaluate(cand, discretization)
        gap = math.log(achieved) - math.log(target)
        if prev is not None and abs(math.log(cand) - prev[0]) > 1e-3:
            fine_slope = (gap - prev[1]) / (math.log(cand) - prev[0])
            if fine_slope != 0 and (fine_slope > 0) == increasing:
                slope = fine_slope
        prev = (math.log(cand), gap)
        steps_done = unknown == "steps" and evaluate_steps_done(cand, achieved)
        if achieved <= target and (-gap <= CALIBRATION_RTOL or steps_done or cand in (lo_lim, hi_lim)):
            value = int(cand) if unknown == "steps" else cand
            return CalibrationResult(unknown, value, achieved, True, fine_count, coarse_count)
        if fine_count > _MAX_FINE_STEPS:
            margin *= 2.0  # fall back to safe-side stepping
            cand = clamp(cand * (1.0 + direction * margin)) if achieved > target else cand
            if achieved <= target:
                value = int(cand) if unknown == "steps" else cand
                return CalibrationResult(unknown, value, achieved, False, fine_count, coarse_count,
                                         "the target mu was met on the safe side but not to full precision")
            continue
        # Newton step in log x with the coarse slope, aimed a margin inside the safe side
        step = (-gap - margin) / slope if increasing else (-gap - margin) / slope
        new = clamp(cand * math.exp(step))
        if new == cand:
            new = clamp(cand * (1.0 + direction * margin))
        cand = new
    raise ValueError(f"could not reach mu={target!r} by changing {unknown}: check the other parameters")
