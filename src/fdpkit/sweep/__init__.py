"""Parameter sweeps: thousands of DP-SGD settings accounted in-process, on a local process
pool or on a Dask cluster, as one tidy table; Gomez et al.'s regret map and rule of thumb,
and a noise/batch/epochs design table.

:func:`run_sweep` runs a sweep. The package itself is callable for compatibility:
``fdpkit.sweep(...)`` (and the name ``fdpkit.sweep.sweep``) still run a sweep, with a
:class:`DeprecationWarning` (issue 23: a function never shadows a package).
"""

from fdpkit._deprecation import deprecated_alias, make_callable
from fdpkit.sweep.runner import SweepResult, run_sweep
from fdpkit.sweep.evaluate import METRICS
from fdpkit.sweep.executors import EXECUTORS
from fdpkit.sweep.studies import RuleOfThumbStudy, design_table, regret_map, rule_of_thumb

sweep = deprecated_alias(run_sweep, "fdpkit.sweep.sweep", "fdpkit.run_sweep")
"""Deprecated alias of :func:`run_sweep` (renamed in 0.x, issue 23). ``fdpkit.sweep`` itself is
this package, and calling it, ``fp.sweep(...)``, runs :func:`run_sweep` with a
:class:`DeprecationWarning`."""

__all__ = ["EXECUTORS", "METRICS", "RuleOfThumbStudy", "SweepResult", "design_table", "regret_map",
           "rule_of_thumb", "run_sweep", "sweep"]

make_callable(__name__, "run_sweep")
