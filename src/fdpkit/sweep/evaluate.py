"""One group of sweep settings -> rows of metrics: a plain function of plain data.

:func:`evaluate_group` is what every executor runs (in-process, in a process pool, or as a
Dask task), so the three give the same numbers: a row's metrics depend only on its
setting and the sweep's options, never on where it ran.

Metrics per setting (the numbers :func:`fdpkit.privacy_report` gives for the setting, to the
last digit: the same accountant, fit and readings, so every number is on the safe side;
only the requested ones are computed):

- ``mu``, ``regret``, ``alpha_min``: the tight pessimistic mu-GDP, its regret and FPR range
  (Gomez et al. Eq. 5 and Def. 2.6);
- ``epsilon``: epsilon at the sweep's ``delta``, from the accountant's own profile (a sweep
  asking for no curve metric builds only the profile, not the trade-off curve);
- ``tpr_at_<fpr>``: the certified TPR of the best attack at each requested FPR;
- ``advantage``: max TPR - FPR;
- ``seconds``: wall time of this setting's accounting (shared work counted once, in the
  first setting of its group: the single-step PMF of settings that differ only in their
  step count is built once, :func:`fdpkit.accounting.shared_single_steps`; where the
  default rule searches a few grids, Eq. 5 of ``accounting._resolution``, the search too:
  it accounts the chosen grid);
- ``note``: shuffled batches (no amplification claimed; Poisson accounting is not a
  guarantee for them) and (sampling, relation) pairs without a sound analysis, which are
  reported as a row with the refusal and no numbers.
"""

from __future__ import annotations

import math
import time
from typing import Any, Mapping, Sequence

import numpy as np
from fdpkit._numerics import InputTypeError
from fdpkit.errors import ParameterError
from fdpkit.accounting import account, shared_single_steps
from fdpkit.accounting._resolution import choose_discretization
from fdpkit.accounting.closed_form import closed_form_curve
from fdpkit.accounting.cost import check_leaf_grids, check_machine_memory
from fdpkit.accounting.pld import dpsgd_pld
from fdpkit.accounting.profile import PldProfile
from fdpkit.fit import ALPHA_MIN_DEFAULT, fit_gdp_adapted
from fdpkit.mechanisms import dpsgd, training_run
from fdpkit.mechanisms.training import REFUSED
from fdpkit.risk import advantage

from fdpkit.vocabulary import ADD_REMOVE, POISSON, SHUFFLED, TRUNCATED_POISSON

METRICS = ("mu", "regret", "alpha_min", "epsilon", "tpr", "advantage", "seconds")
"""Metric names a sweep can report (``tpr`` expands to one column per FPR)."""
DEFAULT_METRICS = METRICS


def tpr_column(fpr: float) -> str:
    """Column name of the certified TPR at ``fpr`` (``tpr_at_0.001``): the float's shortest
    repr, so two FPRs never share a column (``:g`` kept 6 digits, and 0.0009999999 filled
    the column ``tpr_at_0.001`` with a TPR below the one at 0.001)."""
    return f"tpr_at_{float(fpr)!r}"


def metric_columns(options: Mapping[str, Any]) -> frozenset[str]:
    """The metric columns of a row this sweep computes (:func:`evaluate_setting` with
    ``options``): the metrics, ``tpr`` as one column per FPR. A refused pair's row has none."""
    cols: set[str] = set()
    for m in options["metrics"]:
        if m == "tpr":
            cols.update(tpr_column(a) for a in options["fprs"])
        else:
            cols.add(m)
    return frozenset(cols)


def check_metrics(metrics: Sequence[str] | None) -> tuple[str, ...]:
    """Validate a metric list (names from :data:`METRICS`)."""
    if metrics is None:
        return DEFAULT_METRICS
    if isinstance(metrics, str):
        items = [m.strip() for m in metrics.split(",")]
        if any(not m for m in items) and any(items):
            raise ParameterError(f"metrics has an empty name in {metrics!r}", "metrics")
        metrics = [m for m in items if m]
    if np.ndim(metrics) == 0 and not isinstance(metrics, (list, tuple)):  # 5, an object: not a list of names
        try:
            metrics = list(metrics)
        except TypeError:
            raise InputTypeError(f"metrics must be a list of metric names, got {metrics!r}", "metrics") from None
    bad = [m for m in metrics if not isinstance(m, str) or m not in METRICS]
    if bad:
        raise ParameterError(f"unknown metric(s) {', '.join(map(repr, bad))}; choose from {', '.join(METRICS)}",
                             "metrics")
    if not metrics:
        raise ParameterError("metrics must not be empty", "metrics")
    return tuple(dict.fromkeys(metrics))


def mechanism_for(setting: Mapping[str, Any]):
    """The DP-SGD mechanism of one setting (the keyword arguments of ``fdpkit.dpsgd``)."""
    kwargs = dict(setting)
    kwargs.pop("discretization", None)  # the sweep's, per row (not an argument of dpsgd)
    nm = kwargs.pop("noise_multiplier")
    if kwargs.get("sampling", POISSON) != TRUNCATED_POISSON:
        kwargs.pop("max_batch_size", None)  # a grid over schemes: only truncated Poisson reads it
    return dpsgd(nm, **kwargs)


def refusal(setting: Mapping[str, Any]) -> str | None:
    """Why a (sampling, relation) pair of ``setting`` has no sound analysis (the message
    :func:`fdpkit.dpsgd` raises), or None. A grid over schemes and relations reports such a
    pair as a row with this ``note`` and no numbers, instead of failing the whole sweep."""
    return REFUSED.get((setting.get("sampling", POISSON), setting.get("relation", ADD_REMOVE)))


#: The ``note`` of a shuffled-batches row (no amplification claimed; see
#: :mod:`fdpkit.accounting.entry_point`).
SHUFFLED_NOTE = ("shuffled batches: no amplification by sampling is claimed (mu = sqrt(P) Delta / sigma, "
                 "P = participations); Poisson accounting is not a guarantee for shuffled batches "
                 "(Chua et al., ICML 2024; Annamalai et al. 2024)")


def evaluate_setting(setting: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """One row of metrics for one setting (see the module docstring).

    The numbers are those of :func:`fdpkit.privacy_report` (the same accountant, fit and
    readings: ``fdpkit.accounting.account``, :func:`fdpkit.fit.fit_gdp_adapted` from the report's
    default ``alpha_min`` (widened, and stated in the ``alpha_min`` column, where a large mu
    leaves that range empty), the accountant's own privacy profile for epsilon, the curve's TPR and
    :func:`fdpkit.advantage`), but only the requested metrics are computed: a report's
    posteriors, failure mode and provenance are skipped.
    """
    metrics = options["metrics"]
    fprs = tuple(options["fprs"])
    delta = options["delta"]
    row: dict[str, Any] = dict(setting)
    why = refusal(setting)
    if why is not None:
        row["note"] = "refused: " + why
        return row
    start = time.perf_counter()
    disc = setting.get("discretization", options["discretization"])
    mech = mechanism_for(setting)
    searched = disc is None
    if searched:
        # the library's rule searches a few grids here (Eq. 5, heavy-tailed steps), in the
        # worker: it keeps the chosen grid's accounting, which account() below takes (once)
        disc = choose_discretization(mech)[0]
        row["discretization"] = disc
    profile = None if searched or _CURVE_METRICS & set(metrics) else _profile_only(mech, disc)
    if profile is not None:  # epsilon (and time) only: the PLD's profile, no curve
        if "epsilon" in metrics:
            row["epsilon"] = float(profile.epsilon_for_delta(delta))
        return _finish(row, setting, metrics, start)
    acc = account(mech, discretization=disc)
    curve = acc.curve
    fit = None
    if {"mu", "regret", "alpha_min"} & set(metrics):
        fit = fit_gdp_adapted(curve, alpha_min=ALPHA_MIN_DEFAULT)
    for m in metrics:
        if m == "tpr":
            tpr = np.asarray(curve.tpr(np.array(fprs or (1e-3,))))
            for a, t in zip(fprs, tpr):
                row[tpr_column(a)] = float(t)
        elif m in ("mu", "regret", "alpha_min"):
            row[m] = float(getattr(fit, m))
        elif m == "epsilon":
            row[m] = float(acc.epsilon_for_delta(delta))
        elif m == "advantage":
            row[m] = float(advantage(curve))
    return _finish(row, setting, metrics, start)


#: Metrics read from the trade-off curve (the rest, epsilon, from the privacy profile).
_CURVE_METRICS = frozenset({"mu", "regret", "alpha_min", "tpr", "advantage"})


def _finish(row: dict[str, Any], setting: Mapping[str, Any], metrics: Sequence[str], start: float) -> dict[str, Any]:
    if "seconds" in metrics:
        row["seconds"] = time.perf_counter() - start
    if setting.get("sampling") == SHUFFLED:
        row["note"] = SHUFFLED_NOTE
    return row


def _profile_only(mechanism, discretization: float) -> PldProfile | None:
    """The privacy profile :func:`fdpkit.accounting.account` reads epsilon from, without the
    trade-off curve it also builds, where the run takes the PLD route (no closed form, no
    shuffling, no group privacy); else None. The same PLD and profile, so the same epsilon."""
    run = training_run(mechanism)
    if (run is None or run.sampling == SHUFFLED or run.examples_per_user is not None
            or closed_form_curve(run) is not None):
        return None
    # as account: refuse a step, or a composition, beyond this process's memory (a setting of
    # dpsgd(0.5, 0.5, 10**6) ended the sweep in a bare MemoryError)
    check_leaf_grids(run, discretization)
    check_machine_memory(run, discretization)
    return PldProfile(dpsgd_pld(run, discretization))


def evaluate_group(group: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows for a group of settings that differ only in their step count.

    A plain function of plain data (lists of dicts of numbers and strings), so that it
    runs unchanged in-process, in a process pool or as a Dask task.
    """
    with shared_single_steps():  # the single step is built once for all step counts
        return [evaluate_setting(s, options) for s in group]


def cost_hint(group: Sequence[Mapping[str, Any]]) -> float:
    """A rough relative cost of a group (larger: slower), to start the slow groups first on
    a pool: small noise multipliers (wide single steps, heavy loss tails) and large mu
    (long composed supports, large curves) cost most. Ordering only; never a number."""
    total = 0.0
    for s in group:
        sigma = float(s.get("noise_multiplier", 1.0))
        q = s.get("sample_rate")
        if q is None and s.get("batch_size") and s.get("dataset_size"):
            q = s["batch_size"] / s["dataset_size"]
        steps = s.get("steps") or 1000
        mu = float(q or 1.0) * math.sqrt(float(steps) * math.expm1(min(1.0 / sigma ** 2, 700.0)))
        total += 1.0 / sigma + mu
    return total


def same_numbers(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two rows agree on every column except the timing."""
    keys = (set(a) | set(b)) - {"seconds"}
    for k in keys:
        x, y = a.get(k), b.get(k)
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if x != y:
            return False
    return True
