"""``fdpkit.sweep``: account a grid of DP-SGD settings, on one core, a process pool or Dask.

Each setting is accounted exactly as :func:`fdpkit.privacy_report` accounts it (so a sweep
row equals the report of that setting), one row per setting, in a tidy table.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from fdpkit._numerics import check_probability, check_scalar
from fdpkit.accounting._resolution import search_plan
from fdpkit.accounting.entry_point import check_fits_memory
from fdpkit.accounting.result import DISCRETIZATION_DEFAULT
from fdpkit.sweep import store
from fdpkit.errors import ParameterError
from fdpkit.sweep.evaluate import check_metrics, cost_hint, mechanism_for, metric_columns, refusal
from fdpkit.sweep.executors import RUNNERS, check_executor
from fdpkit.sweep.grid import INPUT_COLUMNS, cartesian, explicit, group_by_steps, setting_key

#: Discretizations a sweep accepts (as :func:`fdpkit.privacy_report`).
DISCRETIZATION_RANGE = (1e-5, 0.5)
#: The sweep's ``metadata["discretization_rule"]`` without a ``discretization``: the library
#: default of :func:`fdpkit.privacy_report` (``discretization=None``), per setting.
DISCRETIZATION_RULE = ("library default, per setting (fdpkit.privacy_report(discretization=None), "
                       "fdpkit.accounting._resolution.choose_discretization): 1e-4, or finer where a run's "
                       "per-step loss variance v is too small for it to resolve, d = sqrt(12 v 0.01) for an "
                       "estimated 1% excess of mu, coarsened by factors of 1.5 to fit the grid budget, and refined "
                       "towards an estimated 1e-4 where the run is cheap (Eq. 2'); or coarser, "
                       "d = min(1e-3, sqrt(12 v 1e-6)) where that is at least 2e-4, for an estimated 1e-6; "
                       "heavy-tailed steps (small noise, tiny sample rates): the tightest of a few grids, "
                       "each accounted by the worker that accounts the row (Eq. 5); "
                       "the value used is the row's discretization column")


@dataclass
class SweepResult:
    """The table of a sweep: one dict per setting, in grid order.

    Iterating, ``len`` and indexing act on :attr:`rows`. :meth:`to_records` gives a NumPy
    record array and :meth:`to_pandas` a DataFrame (when pandas is installed).
    """

    rows: list[dict[str, Any]]
    output: Path | None = None
    computed: int = 0
    reused: int = 0
    executor: str = "inprocess"
    dashboard: str | None = field(default=None, repr=False)
    #: How the sweep was run, for its output: ``discretization`` (the value given, or None)
    #: and ``discretization_rule`` (how each row's discretization was chosen).
    metadata: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.rows[i]

    @property
    def columns(self) -> list[str]:
        """Column names: the inputs, then δ/discretization, then metrics."""
        return store.columns(self.rows)

    def column(self, name: str) -> np.ndarray:
        """One column as an array."""
        if name not in self.columns:
            raise ValueError(f"name must be one of the columns {self.columns}, got {name!r}")
        return np.array([r.get(name) for r in self.rows])

    def to_records(self) -> np.recarray:
        """The rows as a NumPy record array."""
        cols = self.columns
        arrays = [np.array([r.get(c) for r in self.rows]) for c in cols]
        return np.rec.fromarrays(arrays, names=cols)

    def to_pandas(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - optional
            raise ImportError("to_pandas needs pandas; use .rows or .to_records() instead") from None
        return pd.DataFrame(self.rows, columns=self.columns)


def _options(delta: Any, fprs: Any, metrics: Any, discretization: Any) -> dict[str, Any]:
    d = float(check_probability("delta", check_scalar("delta", delta), open_low=True, open_high=True))
    fpr_list = [float(check_probability("fprs", check_scalar("fprs", a), open_low=True, open_high=True))
                for a in ([fprs] if np.ndim(fprs) == 0 else list(fprs))]
    checked_metrics = check_metrics(metrics)
    if "tpr" in checked_metrics and not fpr_list:
        raise ParameterError("fprs must list at least one FPR for the metric tpr (or leave tpr out of metrics)",
                             "fprs")
    disc = None
    if discretization is not None:
        disc = check_scalar("discretization", discretization)
        lo, hi = DISCRETIZATION_RANGE
        if not lo <= disc <= hi:
            raise ParameterError(f"discretization must be in [{lo:g}, {hi:g}], got {discretization!r}", "discretization")
    return {"delta": d, "fprs": tuple(dict.fromkeys(fpr_list)), "metrics": checked_metrics,
            "discretization": disc}


def _row_key(row: Mapping[str, Any]) -> tuple:
    """A row's setting and delta (its discretization is checked against :func:`_plan`'s grids)."""
    return setting_key(row) + (("delta", row.get("delta")),)


#: Columns of a row that are not metrics (its inputs, delta, discretization and note).
_NOT_METRICS = frozenset(INPUT_COLUMNS) | {"delta", "discretization", "note"}

#: For each wanted row (:func:`_row_key`), the discretizations its row may hold.
Wanted = Mapping[tuple, frozenset]


def _why_not_reusable(row: Mapping[str, Any], wanted: Wanted, metrics: frozenset[str]) -> str | None:
    """Why a saved row is not a row of this sweep (None: it is, and is reused as it is)."""
    if row.get("discretization") not in wanted.get(_row_key(row), ()):
        return "it holds settings this sweep does not ask for: another grid, delta or discretization"
    have = {k for k in row if k not in _NOT_METRICS}
    if have != (set() if refusal(row) is not None else metrics):
        return "it was written with other metrics or FPRs"
    return None


def _resumable_rows(out_path: Path, checkpoint: store.Checkpoint, wanted: Wanted, metrics: frozenset[str],
                    overwrite: bool) -> list[dict[str, Any]]:
    """The rows of an existing output (and its checkpoint) that this sweep reuses.

    An existing output that is not a table of this sweep (another file, another grid, delta,
    discretization, metrics or FPRs) is refused, since writing the table would replace it;
    with ``overwrite`` its rows are ignored and the file is replaced at the end. Checkpoint
    rows of another sweep are scratch: they are recomputed, as are the rows of a chunk that
    does not match the digest saved with it (a :class:`UserWarning` names each such chunk).
    A table without a digest (:func:`fdpkit.sweep.store.unchecked`) is reused, with a
    :class:`UserWarning` saying that its rows were not checked.
    """
    try:
        table = store.read_table(out_path)
        why_unchecked = store.unchecked(out_path) if table else None
        for r in table:
            why = _why_not_reusable(r, wanted, metrics)
            if why is not None:
                raise store.not_a_table(out_path, why)
    except ParameterError as exc:
        if not overwrite or exc.parameter != "output":
            raise
        table = []
    else:
        if why_unchecked is not None:  # stacklevel 3: the caller of run_sweep
            warnings.warn(why_unchecked, UserWarning, stacklevel=3)
    saved = checkpoint.rows()
    for why in checkpoint.skipped:
        warnings.warn(why, UserWarning, stacklevel=3)
    return table + [r for r in saved if _why_not_reusable(r, wanted, metrics) is None]


def run_sweep(
    noise_multiplier: Sequence[float] | None = None,
    sample_rate: Sequence[float] | None = None,
    steps: Sequence[int] | None = None,
    *,
    batch_size: Sequence[int] | None = None,
    dataset_size: Sequence[int] | None = None,
    epochs: Sequence[float] | None = None,
    sampling: Sequence[str] | None = None,
    relation: Sequence[str] | None = None,
    max_batch_size: Sequence[int] | None = None,
    rows: Sequence[Mapping[str, Any]] | None = None,
    delta: float = 1e-5,
    fprs: Sequence[float] = (1e-3,),
    metrics: Sequence[str] | None = None,
    discretization: float | None = None,
    executor: str | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    dask_local: int | None = None,
    output: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_client: Callable[[Any], None] | None = None,
    client: Any = None,
    overwrite: bool = False,
) -> SweepResult:
    """Account every DP-SGD setting of a grid and return one row of metrics per setting.

    Parameters
    ----------
    noise_multiplier, sample_rate, steps, batch_size, dataset_size, epochs, sampling, relation, max_batch_size
        Lists of values; the grid is their Cartesian product (the keyword arguments of
        :func:`fdpkit.dpsgd`: a sample rate or batch size + dataset size, steps or epochs;
        sampling scheme, neighbouring relation and the truncation of truncated Poisson).
        A (sampling, relation) pair that has no sound analysis (e.g. shuffled batches with
        add-remove) is a row whose ``note`` says why, with no numbers; shuffled batches
        carry a ``note`` that no amplification is claimed.
    rows : sequence of dict, optional
        An explicit table of settings instead of a Cartesian product.
    delta : float
        δ at which ``epsilon`` is reported (from the accountant's profile).
    fprs : sequence of float
        FPRs at which the certified attack TPR is reported (columns ``tpr_at_<fpr>``).
    metrics : sequence of str, optional
        Subset of ``mu, regret, alpha_min, epsilon, tpr, advantage, seconds`` (default all).
    discretization : float, optional
        PLD discretization interval, as in :func:`fdpkit.privacy_report`. None (the
        default): the library's rule, per setting, as ``privacy_report(discretization=None)``
        chooses it (1e-4, or finer where a run's steps are too small for 1e-4 to resolve:
        tiny sample rates; or coarser, up to 1e-3, where a coarser grid adds an estimated
        relative 1e-6 or less to μ: small noise, large sample rates); each row's ``discretization`` column holds the value used and
        ``metadata["discretization_rule"]`` (also written beside ``output``) says how.
    executor : {"inprocess", "processes", "dask"}, optional
        Default: ``"dask"`` when ``scheduler`` or ``dask_local`` is given, else
        ``"processes"`` (a local pool of ``workers`` processes, default all cores).
    workers : int, optional
        Size of the local process pool.
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:port``).
    dask_local : int, optional
        Start a Dask ``LocalCluster`` with this many single-threaded workers.
    output : path, optional
        ``.csv`` or ``.parquet`` file. Finished rows are checkpointed beside it as they
        arrive; a sweep run again with the same arguments computes only what is missing.
        An existing file that is not a table of this sweep (another file, or another grid,
        δ, discretization, metrics or FPRs), or whose rows no longer match the digest the
        sweep wrote with them (a value edited after the sweep: ``rows_sha256`` in its
        metadata), is refused before any work, unless ``overwrite``. Each checkpoint chunk
        carries the digest of its rows too: a chunk edited after the sweep saved it is not
        reused, its settings are recomputed, with a :class:`UserWarning` naming the chunk. A
        Parquet table without a digest that another program wrote (re-saved by pandas or
        Polars) is refused; a table an earlier fdpkit wrote, without a digest, is resumed with
        a :class:`UserWarning` that its rows are reused unchecked.
    progress : callable(done, total), optional
        Called as settings finish.
    on_client : callable(client), optional
        Called with the Dask client once connected (e.g. to print its dashboard link).
    client : dask.distributed.Client, optional
        An existing Dask client to run on (implies ``executor="dask"``; left open).
    overwrite : bool
        Replace an existing ``output`` that is not a table of this sweep (default: refuse it;
        a table of this sweep is resumed either way).

    Raises
    ------
    fdpkit.accounting.cost.BudgetExceeded
        Before any setting is accounted, when one would not fit this machine's memory at its
        discretization (:func:`fdpkit.accounting.entry_point.check_fits_memory`, naming the
        parameter to change); on a Dask cluster given by ``scheduler`` or ``client`` each
        worker checks its own memory as its settings come.

    Returns
    -------
    SweepResult
        The rows, and ``metadata`` (written to ``output`` too: Parquet key-value metadata,
        or ``<output>.meta.json`` beside a CSV file).

    Examples
    --------
    >>> r = run_sweep([2.0], [0.01], [100, 400], discretization=1e-3, executor="inprocess",
    ...               metrics=["mu", "epsilon"])
    >>> [(row["steps"], round(row["mu"], 3)) for row in r]
    [(100, 0.065), (400, 0.117)]
    """
    if rows is not None:
        if any(v is not None for v in (noise_multiplier, sample_rate, steps, batch_size, dataset_size,
                                       epochs, sampling, relation, max_batch_size)):
            raise ParameterError("give either rows or parameter lists, not both", "rows")
        settings = explicit(rows)
    else:
        settings = cartesian(noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=steps,
                             batch_size=batch_size, dataset_size=dataset_size, epochs=epochs,
                             sampling=sampling, relation=relation, max_batch_size=max_batch_size)
        if noise_multiplier is None:  # a grid of sample rates and steps alone: was a bare KeyError
            raise ParameterError("noise_multiplier must be given: a list of noise multipliers", "noise_multiplier")
    options = _options(delta, fprs, metrics, discretization)
    for s in settings:  # validate every setting before any work (errors name the parameter)
        # a (sampling, relation) pair without a sound analysis becomes a row with the refusal
        # (a grid over schemes and relations); its numbers are still validated
        mechanism_for({**s, "relation": "replace-one"} if refusal(s) is not None else s)
    executor = check_executor(executor, workers=workers, scheduler=scheduler, dask_local=dask_local, client=client)
    out_path = store.check_output_path(output) if output is not None else None

    # every row's discretization is known before any work (the given one, or the library's
    # rule for its setting), or where the rule searches a few grids (Eq. 5, heavy-tailed
    # steps) the grids it may choose: the worker that accounts the row searches them and
    # accounts the chosen one once (a row's numbers are those of
    # privacy_report(discretization=None) for its setting), and a resumed sweep finds its
    # rows by their setting and one of those grids
    plans = [_plan(s, options["discretization"]) for s in settings]
    settings = [{**s, "discretization": d} for s, (d, _) in zip(settings, plans)]
    if scheduler is None and client is None:  # workers on this machine: every setting's memory, before any work
        for s, (_, allowed) in zip(settings, plans):  # (a setting beyond it was refused only when its turn
            if refusal(s) is None:  # came, after the others ran; a searched row: its finest, costliest grid)
                check_fits_memory(mechanism_for(s), min(allowed))

    def tagged(s: Mapping[str, Any]) -> dict[str, Any]:
        return {**s, "delta": options["delta"]}

    wanted = [tagged(s) for s in settings]
    grids = {_row_key(w): allowed for w, (_, allowed) in zip(wanted, plans)}
    done: dict[tuple, dict[str, Any]] = {}
    checkpoint = store.Checkpoint(out_path) if out_path is not None else None
    if out_path is not None and checkpoint is not None:
        for r in _resumable_rows(out_path, checkpoint, grids, metric_columns(options), overwrite):
            done[_row_key(r)] = r
    todo = [s for s, w in zip(settings, wanted) if _row_key(w) not in done]
    reused = len(settings) - len(todo)
    total = len(settings)
    finished = [reused]
    if progress is not None:
        progress(finished[0], total)

    def on_done(group_rows: list) -> None:
        group_rows = [tagged(r) for r in group_rows]
        if checkpoint is not None:
            checkpoint.save(group_rows)
        for r in group_rows:
            done[_row_key(r)] = r
        finished[0] += len(group_rows)
        if progress is not None:
            progress(finished[0], total)

    dashboard: list[str | None] = [None]

    def client_hook(client: Any) -> None:
        dashboard[0] = getattr(client, "dashboard_link", None)
        if on_client is not None:
            on_client(client)

    if todo:
        groups = group_by_steps(todo)
        if executor != "inprocess":  # slow groups first: the pool's last groups are short
            groups.sort(key=cost_hint, reverse=True)
        RUNNERS[executor](groups, options, on_done, workers=workers, scheduler=scheduler,
                          dask_local=dask_local, on_client=client_hook, client=client)
    table = [_ordered(done[_row_key(w)]) for w in wanted]
    metadata = {"discretization": options["discretization"],
                "discretization_rule": "given" if options["discretization"] is not None else DISCRETIZATION_RULE}
    if out_path is not None:
        store.write_table(out_path, table, metadata=metadata, digest=True)
        checkpoint.clear()
    return SweepResult(rows=table, output=out_path, computed=len(todo), reused=reused,
                       executor=executor, dashboard=dashboard[0], metadata=metadata)


def _plan(setting: Mapping[str, Any], given: float | None) -> tuple[float | None, frozenset]:
    """(d, grids): the discretization of ``setting``'s row (``given``, else the one
    :func:`fdpkit.privacy_report` chooses by default; a refused (sampling, relation) pair: the
    default, it is not accounted) and the grids its row may hold; d None where the default
    rule searches (Eq. 5): the worker searches, among ``grids``. Nothing is accounted here."""
    if given is not None:
        return given, frozenset({given})
    if refusal(setting) is not None:
        return DISCRETIZATION_DEFAULT, frozenset({DISCRETIZATION_DEFAULT})
    d, tried = search_plan(mechanism_for(setting))
    if not tried:
        return d, frozenset({d})
    return None, frozenset({d, *(g for g, _ in tried)})


def _ordered(row: Mapping[str, Any]) -> dict[str, Any]:
    return {c: row[c] for c in store.columns([row])}
