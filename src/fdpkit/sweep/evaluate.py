"""One group of sweep settings -> rows of metrics: a plain function of plain data.

:func:`evaluate_group` is what every executor runs (in-process, in a process pool, or as a
Dask task), so the three give the same numbers: a row's metrics depend only on its
setting and the sweep's options, never on where it ran.

Metrics per setting (all read from :func:`fdpkit.privacy_report`, so every number is on
the safe side):

- ``mu``, ``regret``, ``alpha_min``: the tight pessimistic mu-GDP, its regret and FPR range
  (Gomez et al. Eq. 5 and Def. 2.6);
- ``epsilon``: epsilon at the sweep's ``delta``, from the accountant's own profile;
- ``tpr_at_<fpr>``: the certified TPR of the best attack at each requested FPR;
- ``advantage``: max TPR - FPR;
- ``seconds``: wall time of this setting's accounting (shared work counted once, in the
  first setting of its group).
"""

from __future__ import annotations

import math
import time
from typing import Any, Mapping, Sequence

#: Metric names a sweep can report (``tpr`` expands to one column per FPR).
METRICS = ("mu", "regret", "alpha_min", "epsilon", "tpr", "advantage", "seconds")
DEFAULT_METRICS = METRICS


def tpr_column(fpr: float) -> str:
    """Column name of the certified TPR at ``fpr`` (``tpr_at_0.001``)."""
    return f"tpr_at_{fpr:g}"


def check_metrics(metrics: Sequence[str] | None) -> tuple[str, ...]:
    """Validate a metric list (names from :data:`METRICS`)."""
    if metrics is None:
        return DEFAULT_METRICS
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise ValueError(f"unknown metric(s) {', '.join(map(repr, bad))}; choose from {', '.join(METRICS)}")
    if not metrics:
        raise ValueError("metrics must not be empty")
    return tuple(dict.fromkeys(metrics))


def mechanism_for(setting: Mapping[str, Any]):
    """The DP-SGD mechanism of one setting (the keyword arguments of ``fdpkit.dpsgd``)."""
    from fdpkit.mechanisms import dpsgd

    kwargs = dict(setting)
    nm = kwargs.pop("noise_multiplier")
    return dpsgd(nm, **kwargs)


def evaluate_setting(setting: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """Rows of metrics for one setting (see the module docstring)."""
    from fdpkit.privacy import privacy_report

    metrics = options["metrics"]
    fprs = tuple(options["fprs"])
    delta = options["delta"]
    start = time.perf_counter()
    report = privacy_report(mechanism_for(setting), deltas=(delta,), fprs=fprs or (1e-3,),
                            discretization=options["discretization"])
    row: dict[str, Any] = dict(setting)
    values = {
        "mu": report.mu,
        "regret": report.regret,
        "alpha_min": report.alpha_min,
        "epsilon": report.epsilon_at(delta),
        "advantage": report.advantage,
    }
    for m in metrics:
        if m == "tpr":
            for a in fprs:
                row[tpr_column(a)] = report.tpr_at(a)
        elif m != "seconds":
            row[m] = float(values[m])
    if "seconds" in metrics:
        row["seconds"] = time.perf_counter() - start
    return row


def evaluate_group(group: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows for a group of settings that differ only in their step count.

    A plain function of plain data (lists of dicts of numbers and strings), so that it
    runs unchanged in-process, in a process pool or as a Dask task.
    """
    return [evaluate_setting(s, options) for s in group]


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
