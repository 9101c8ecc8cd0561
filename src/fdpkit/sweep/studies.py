"""Studies built on sweeps: Gomez et al.'s regret map (Fig. 4), where their rule of thumb
holds, and a noise / batch size / epochs design table for training.

- :func:`regret_map` sweeps the regret of the tight mu-GDP summary of DP-SGD against the
  sample rate for several noise multipliers and step counts (Gomez et al. Fig. 4).
- :func:`rule_of_thumb` tests the statement "sigma >= 2 and T >= 400 => regret < 0.01"
  (Gomez et al. Sec. 5) on a grid and reports where it holds and its counter-examples,
  instead of repeating it.
- :func:`design_table` gives, for each (batch size, epochs) pair, the smallest noise
  multiplier that meets a target mu, or epsilon at delta (the calibration of
  :func:`fdpkit.calibrate_dpsgd`, on the safe side) with the resulting mu, epsilon and TPR
  at FPR 1e-3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from fdpkit._numerics import check_scalar
from fdpkit.sweep.runner import SweepResult, _options, run_sweep
from fdpkit.calibrate import calibrate_dpsgd
from fdpkit.errors import ParameterError
from fdpkit.guarantee.privacy import privacy_report
from fdpkit.mechanisms import dpsgd_from_training
from fdpkit.sweep.executors import RUNNERS, check_executor
from fdpkit.sweep.grid import cartesian

#: Gomez et al. Fig. 4: noise multipliers, step counts, and the threshold of the rule of thumb.
FIG4_NOISE = (0.5, 1.0, 2.0, 4.0, 8.0)
FIG4_STEPS = (400, 1000, 2000)
FIG4_SAMPLE_RATES = tuple(float(q) for q in np.geomspace(1e-3, 0.5, 10))
REGRET_THRESHOLD = 0.01
#: The rule of thumb's premise (Gomez et al. Sec. 5).
RULE_MIN_NOISE = 2.0
RULE_MIN_STEPS = 400


def regret_map(noise_multiplier: Sequence[float] = FIG4_NOISE, steps: Sequence[int] = FIG4_STEPS,
               sample_rate: Sequence[float] = FIG4_SAMPLE_RATES, **kwargs: Any) -> SweepResult:
    """Regret of the tight μ-GDP summary of DP-SGD over (noise multiplier, steps, sample
    rate) (Gomez et al. Fig. 4). Keyword arguments go to :func:`fdpkit.run_sweep`.

    Examples
    --------
    >>> r = regret_map([2.0], [400], [0.1], discretization=1e-3, executor="inprocess")
    >>> round(r[0]["regret"], 3) > 0.01   # a counter-example to the rule of thumb
    True
    """
    kwargs.setdefault("metrics", ("mu", "regret", "epsilon"))
    return run_sweep(noise_multiplier, sample_rate, steps, **kwargs)


@dataclass(frozen=True)
class RuleOfThumbStudy:
    """Where "regret < threshold" holds on a grid of DP-SGD settings.

    Attributes
    ----------
    result : SweepResult
        The sweep behind the study.
    threshold : float
    holds : bool
        Whether every setting with noise multiplier ≥ 2 and steps ≥ 400 has regret below
        the threshold (the rule of thumb, as stated).
    counterexamples : list of dict
        Settings inside the rule's premise whose regret is not below the threshold.
    boundary : list of dict
        For each noise multiplier: the smallest step count of the grid from which on
        regret < threshold at every sample rate of the grid (``None`` when no step count
        of the grid suffices).
    """

    result: SweepResult
    threshold: float
    holds: bool
    counterexamples: list[dict[str, Any]]
    boundary: list[dict[str, Any]]

    def summary(self) -> str:
        """A few sentences on what the grid shows."""
        n = len(self.result)
        if self.holds:
            head = (f"On this grid ({n} settings) every DP-SGD run with noise multiplier >= {RULE_MIN_NOISE:g} "
                    f"and >= {RULE_MIN_STEPS} steps has regret below {self.threshold:g}.")
        else:
            worst = max(self.counterexamples, key=lambda r: r["regret"])
            head = (f"The rule of thumb does not hold as stated: {len(self.counterexamples)} of the {n} "
                    f"settings inside its premise have regret >= {self.threshold:g}, the largest "
                    f"{worst['regret']:.4g} at noise multiplier {worst['noise_multiplier']:g}, sample rate "
                    f"{worst['sample_rate']:g}, {worst['steps']} steps.")
        parts = []
        for b in self.boundary:
            if b["min_steps"] is None:
                parts.append(f"sigma {b['noise_multiplier']:g}: no step count of the grid suffices")
            else:
                parts.append(f"sigma {b['noise_multiplier']:g}: from {b['min_steps']} steps")
        return head + " Regret below the threshold at every sample rate of the grid: " + "; ".join(parts) + "."

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"threshold": self.threshold, "holds": self.holds, "counterexamples": self.counterexamples,
                "boundary": self.boundary, "summary": self.summary(), "rows": self.result.rows}


def rule_of_thumb(noise_multiplier: Sequence[float] = (1.0, 2.0, 4.0, 8.0),
                  steps: Sequence[int] = (100, 400, 1000, 2000),
                  sample_rate: Sequence[float] = FIG4_SAMPLE_RATES, *,
                  threshold: float = REGRET_THRESHOLD, **kwargs: Any) -> RuleOfThumbStudy:
    """Test Gomez et al.'s rule of thumb ("σ ≥ 2 and T ≥ 400 => regret < 0.01") on a
    grid. Keyword arguments go to :func:`fdpkit.run_sweep`."""
    t = check_scalar("threshold", threshold)
    if not 0 < t < 1:
        raise ParameterError(f"threshold must be in (0, 1), got {threshold!r}", "threshold")
    kwargs.setdefault("metrics", ("mu", "regret", "epsilon"))
    result = run_sweep(noise_multiplier, sample_rate, steps, **kwargs)
    inside = [r for r in result if r["noise_multiplier"] >= RULE_MIN_NOISE and r["steps"] >= RULE_MIN_STEPS]
    counter = [r for r in inside if not r["regret"] < t]
    boundary = []
    for nm in sorted({r["noise_multiplier"] for r in result}):
        by_steps: dict[int, bool] = {}
        for r in result:
            if r["noise_multiplier"] == nm:
                by_steps[r["steps"]] = by_steps.get(r["steps"], True) and r["regret"] < t
        min_steps = None
        for s in sorted(by_steps, reverse=True):  # from the largest T down, while all below t
            if not by_steps[s]:
                break
            min_steps = s
        boundary.append({"noise_multiplier": nm, "min_steps": min_steps,
                         "max_regret": max(r["regret"] for r in result if r["noise_multiplier"] == nm)})
    return RuleOfThumbStudy(result, t, not counter, counter, boundary)


def _design_rows(group: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Calibrate each (batch size, epochs) setting of ``group`` (a plain function of plain
    data, run by the sweep executors)."""
    target = {"mu": options["mu"]} if options.get("mu") is not None else \
        {"epsilon": options["epsilon"], "delta": options["delta"]}
    rows = []
    for s in group:
        probe = dpsgd_from_training(1.0, batch_size=s["batch_size"], dataset_size=s["dataset_size"],
                                    epochs=s["epochs"])
        q, steps = probe.sample_rate, probe.steps
        cal = calibrate_dpsgd(**target, sample_rate=q, steps=steps, discretization=options["discretization"])
        rep = privacy_report(dpsgd_from_training(cal.value, batch_size=s["batch_size"],
                                                 dataset_size=s["dataset_size"], epochs=s["epochs"]),
                             deltas=(options["delta"],), fprs=(1e-3,), discretization=options["discretization"])
        rows.append({**s, "sample_rate": q, "steps": steps, "noise_multiplier": cal.value,
                     "mu": rep.mu, "regret": rep.regret, "epsilon": rep.epsilon_for_delta(options["delta"]),
                     "tpr_at_0.001": rep.tpr(1e-3), "converged": bool(cal.converged),
                     "target": cal.target})
    return rows


def design_table(*, mu: float | None = None, batch_size: Sequence[int], epochs: Sequence[float],
                 dataset_size: int, epsilon: float | None = None, delta: float = 1e-5,
                 discretization: float = 1e-4, executor: str | None = None, workers: int | None = None,
                 scheduler: str | None = None, dask_local: int | None = None,
                 progress=None) -> list[dict[str, Any]]:
    """For a target (μ, or ε at δ), the smallest noise multiplier of DP-SGD for
    each (batch size, epochs) pair, with the resulting μ, ε at ``delta`` and the
    certified TPR at FPR 1e-3: what an engineer needs to pick hyperparameters.

    Parameters
    ----------
    mu : float, optional
        Target μ-GDP (the table's runs have μ ≤ target).
    epsilon : float, optional
        Target ε at ``delta`` instead (the runs have ε(δ) ≤ target, from
        the accountant's privacy profile); give exactly one of ``mu`` and ``epsilon``.
    batch_size, epochs : sequences
        The pairs (Cartesian product); Poisson sampling at rate batch_size / dataset_size,
        steps = ceil(epochs x dataset_size / batch_size) (see :func:`fdpkit.dpsgd`).
    dataset_size : int
    delta : float
        δ of the ε target and of the ``epsilon`` column.
    discretization, executor, workers, scheduler, dask_local, progress
        As for :func:`fdpkit.run_sweep`; the pairs are calibrated in parallel
        (:func:`fdpkit.calibrate_dpsgd`, on the safe side of the target).

    Returns
    -------
    list of dict
        One row per pair: batch_size, epochs, dataset_size, sample_rate, steps,
        noise_multiplier, μ, regret, ε, ``tpr_at_0.001``, converged, target.

    Examples
    --------
    ``executor="inprocess"`` keeps a small table in this process (the default process pool
    needs ``if __name__ == "__main__":`` in a script):

    >>> rows = design_table(mu=1, batch_size=[256], epochs=[1], dataset_size=60000,
    ...                     discretization=1e-3, executor="inprocess")
    >>> rows[0]["steps"], round(rows[0]["noise_multiplier"], 2)
    (235, 0.58)
    """
    if (mu is None) == (epsilon is None):
        raise ParameterError("give exactly one target: mu, or epsilon (with delta)", "mu", ("mu", "epsilon", "delta"))
    opts = _options(delta, (1e-3,), None, discretization)
    if mu is not None:
        target = check_scalar("mu", mu)
        if not (0 < target < math.inf):
            raise ParameterError(f"mu must be positive and finite, got {mu!r}", "mu")
        opts["mu"] = target
    else:
        target = check_scalar("epsilon", epsilon)
        if not (0 < target < math.inf):
            raise ParameterError(f"epsilon must be positive and finite, got {epsilon!r}", "epsilon")
        opts["epsilon"] = target
    settings = cartesian(batch_size=batch_size, epochs=epochs, dataset_size=[dataset_size])
    for s in settings:
        if s["batch_size"] > s["dataset_size"]:
            raise ValueError(f"batch_size must be at most dataset_size ({s['dataset_size']}), got {s['batch_size']}")
    executor = check_executor(executor, workers=workers, scheduler=scheduler, dask_local=dask_local)
    out: dict[tuple, dict[str, Any]] = {}
    total = len(settings)

    def on_done(rows: list) -> None:
        for r in rows:
            out[(r["batch_size"], r["epochs"])] = r
        if progress is not None:
            progress(len(out), total)

    RUNNERS[executor]([[s] for s in settings], opts, on_done, fn=_design_rows, workers=workers,
                      scheduler=scheduler, dask_local=dask_local)
    return [out[(s["batch_size"], s["epochs"])] for s in settings]
