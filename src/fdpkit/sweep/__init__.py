"""Parameter sweeps: thousands of DP-SGD settings accounted in-process, on a local process
pool or on a Dask cluster, as one tidy table; Gomez et al.'s regret map and rule of thumb,
and a noise/batch/epochs design table."""

from fdpkit.sweep.runner import SweepResult, sweep
from fdpkit.sweep.evaluate import METRICS
from fdpkit.sweep.executors import EXECUTORS
from fdpkit.sweep.studies import RuleOfThumbStudy, design_table, regret_map, rule_of_thumb

__all__ = ["EXECUTORS", "METRICS", "RuleOfThumbStudy", "SweepResult", "design_table", "regret_map",
           "rule_of_thumb", "sweep"]
