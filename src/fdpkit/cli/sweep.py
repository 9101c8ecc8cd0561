"""``fdpkit sweep``: grids of DP-SGD settings -> a table (CSV or Parquet), on one core, a
local process pool or Dask; the regret map, the rule-of-thumb study and the design table."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import typer
from rich.table import Table as RichTable
from rich.text import Text

from fdpkit.cli._common import (DiscOpt, State, check_output, command_group, err, fail, fmt_num, guarded, json_safe, out,
                                write_output)
from fdpkit.vocabulary import DASK_CONNECT_TIMEOUT

sweep_app = command_group("Sweep DP-SGD settings: a table of mu, regret, epsilon and attack risk.")

NoiseOpt = typer.Option(None, "--noise-multiplier", help="Comma-separated noise multipliers, e.g. 1,2,4.")
RateOpt = typer.Option(None, "--sample-rate", help="Comma-separated Poisson sample rates.")
BatchOpt = typer.Option(None, "--batch-size", help="Comma-separated batch sizes (with --dataset-size).")
DataOpt = typer.Option(None, "--dataset-size", help="Comma-separated dataset sizes.")
StepsOpt = typer.Option(None, "--steps", help="Comma-separated step counts.")
EpochsOpt = typer.Option(None, "--epochs", help="Comma-separated epoch counts.")
SamplingOpt = typer.Option(None, "--sampling", help="Comma-separated sampling schemes: poisson, "
                                                    "truncated-poisson, fixed-size, shuffled.")
RelationOpt = typer.Option(None, "--relation", help="Comma-separated neighbouring relations: add-remove, "
                                                    "replace-one, zero-out.")
MaxBatchOpt = typer.Option(None, "--max-batch-size", help="Comma-separated truncations (truncated-poisson).")
DeltaOpt = typer.Option(1e-5, "--delta", help="delta at which epsilon is reported.")
FprOpt = typer.Option("1e-3", "--fpr", help="Comma-separated FPRs for the certified TPR columns.")
OutOpt = typer.Option(None, "--output", "-o", help="Write the table to FILE.csv or FILE.parquet (resumable: the "
                                                   "same command resumes its table; any other existing file "
                                                   "needs --force).")
DaskLocalOpt = typer.Option(None, "--dask-local", help="Start a Dask LocalCluster with N workers.")
SchedOpt = typer.Option(None, "--scheduler", help="Address of a running Dask scheduler (tcp://host:port; "
                                                  f"gives up after {DASK_CONNECT_TIMEOUT:g} s without an answer).")
WorkersOpt = typer.Option(None, "--workers", help="Size of the local process pool (default: all cores).")
ExecOpt = typer.Option(None, "--executor", help="inprocess, processes or dask (default: from the options).")
FmtOpt = typer.Option("text", "--format", "-f", help="text or json (a summary; the table goes to --output).")
SweepDiscOpt = typer.Option(None, "--discretization",
                            help="PLD discretization interval (default: the library's rule per setting, as "
                                 "fdpkit report: 1e-4, finer where the per-step loss is tiny, coarser (up to 1e-3) "
                                 "where it is so large that mu changes by an estimated 1e-6 or less).")


def _decimal(t: str) -> float:
    """A plain decimal number (not "1_000" or other scripts' digits, which float() reads)."""
    from fdpkit._inputs import parse_decimal

    return parse_decimal(t, "item")


def parse_list(option: str, text: Optional[str], kind: Callable[[str], Any] = _decimal) -> Optional[list[Any]]:
    """A comma-separated option value as a list (None when the option was not given); numbers
    are plain decimal numbers."""
    if text is None:
        return None
    items = [t.strip(" \t") for t in str(text).split(",")]  # ASCII spaces: "\u00a01" is no number
    if not any(items):
        raise ValueError(f"{option} must list at least one value")
    values = []
    for t in items:
        if not t:
            raise ValueError(f"{option} has an empty item in {text!r}")
        try:
            values.append(kind(t))
        except ValueError:
            raise ValueError(f"{option} must be a comma-separated list of plain decimal numbers (such as 1,2.5,1e-3), "
                             f"got {text!r}") from None
    return values


def _whole(t: str) -> int:
    x = _decimal(t)
    if x != int(x):
        raise ValueError(t)
    return int(x)


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr (rows done, rate, ETA); silent with --quiet or when piped."""
    if State.quiet or not err.is_terminal:
        yield lambda done, total: None
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    class RateColumn(ProgressColumn):
        """Settings accounted per second."""

        def render(self, task) -> Text:
            return Text(f"{task.speed:.2f} settings/s" if task.speed else "- settings/s")

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=False) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _dashboard(client: Any) -> None:
    link = getattr(client, "dashboard_link", None)
    if link and not State.quiet:
        err.print(f"Dask dashboard: {link}")


@contextlib.contextmanager
def _output_errors() -> Iterator[list[str]]:
    """The library's errors about its ``output`` (an existing file that is not a table of
    this sweep, a bad suffix) in the command line's words: ``--output``, ``--force``; and its
    warnings (a checkpoint chunk not reused, a table reused unchecked) as one ``warning:``
    line each on stderr, after the progress bar. Yields the list of those warnings (for
    ``--format json``'s ``warnings``), filled as they come."""
    import warnings

    from fdpkit.cli._common import one_line
    from fdpkit.errors import ParameterError

    told: list[str] = []
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if issubclass(category, UserWarning):
                told.append(str(message))
            else:
                shown(message, category, *args, **kwargs)

        warnings.showwarning = show
        try:
            yield told
        except ParameterError as exc:
            if exc.parameter != "output":
                raise
            fail("--" + str(exc).replace("overwrite=True", "--force"))
        finally:
            for message in told:
                sys.stderr.write(f"warning: {one_line(message)}\n")


def _interrupted(output: Optional[Path]) -> None:
    where = f" in {output}.partial" if output else ""
    sys.stderr.write(f"interrupted: finished settings are kept{where}; run the same command again to finish\n")
    raise typer.Exit(130)


#: The sweep tables' short headers (the line under the table spells them out): the library's
#: column names cut every column of a regret map to "noise_m…", "sample_…", "discret…" at 80 columns.
_SHORT = {"noise_multiplier": "σ", "sample_rate": "q", "steps": "T", "batch_size": "batch", "dataset_size": "n",
          "epochs": "epochs", "max_batch_size": "max batch", "delta": "δ", "discretization": "disc.", "mu": "μ",
          "alpha_min": "α_min", "epsilon": "ε", "advantage": "adv.", "seconds": "s"}
#: What each short header means, in the line under the table.
_LEGEND = {"σ": "noise multiplier", "q": "sample rate", "T": "steps", "n": "dataset size", "disc.": "discretization",
           "α_min": "smallest FPR of μ's fit", "adv.": "advantage", "s": "seconds"}
#: Columns that, the same in every row, are said once above the table instead of on each row, and how.
_SAID_ONCE = {"delta": "δ", "discretization": "discretization", "sampling": "sampling", "relation": "relation",
              "dataset_size": "dataset size", "max_batch_size": "max batch size", "alpha_min": "μ holds for FPR and FNR ≥"}


def _header(column: str) -> str:
    """A sweep column's short header: ``tpr_at_0.001`` -> ``TPR@0.001``."""
    return f"TPR@{column[len('tpr_at_'):]}" if column.startswith("tpr_at_") else _SHORT.get(column, column)


def _cell(value: Any, up: Optional[bool], column: str = "") -> str:
    if column == "seconds" and isinstance(value, (int, float)):
        return f"{value:.2g}"  # a time: two digits say it
    return "" if value is None else value if isinstance(value, str) else fmt_num(value, up=up)


def _print_rows(rows: list[dict[str, Any]], title: str, limit: int = 50) -> None:
    """A sweep's rows as a table that an 80-column terminal shows whole: short headers (σ, q,
    T, μ, ε, TPR@0.001) explained on the line below, the columns every row shares (δ, the
    discretization, the sampling scheme) said once above it, and a cell too wide for the
    terminal folded onto another line, never cut. ``--output`` keeps the library's columns."""
    if not rows:
        return
    from fdpkit.sweep.store import columns

    cols = columns(rows)
    same = [c for c in _SAID_ONCE if c in cols and len({repr(r.get(c)) for r in rows}) == 1]
    shown = [c for c in cols if c not in same]
    table = RichTable(title_justify="left")
    for c in shown:
        table.add_column(_header(c), overflow="fold")
    # the certified metrics are upper bounds: their last digit rounds up (inputs to nearest)
    up = [True if c in ("mu", "epsilon", "advantage") or c.startswith("tpr_at_") else None for c in shown]
    for r in rows[:limit]:
        table.add_row(*(_cell(r.get(c), u, c) for c, u in zip(shown, up)))
    out.print(f"[bold]{title}[/bold]", highlight=False, soft_wrap=True)
    if same:
        out.print("; ".join(f"{_SAID_ONCE[c]} {_cell(rows[0][c], None)}" for c in same), highlight=False,
                  soft_wrap=True)
    out.print(table)
    notes = [f"{h} {_LEGEND[h]}" for h in map(_header, shown) if h in _LEGEND]
    bounds = [_header(c) + (f" (at δ = {_cell(rows[0]['delta'], None)})" if c == "epsilon" and "delta" in same else "")
              for c, u in zip(shown, up) if u]
    if bounds:
        notes.append(f"{', '.join(bounds)}: upper bounds, their last digit rounded up")
    if notes:
        out.print("; ".join(notes) + ".", highlight=False, soft_wrap=True)
    if len(rows) > limit:
        out.print(f"... {len(rows) - limit} more rows (use --output FILE.csv for the whole table)")


@sweep_app.callback(invoke_without_command=True)
@guarded(names={"fprs": "fpr"})  # the library's fprs is --fpr
def sweep_main(ctx: typer.Context, noise_multiplier: Optional[str] = NoiseOpt, sample_rate: Optional[str] = RateOpt,
               batch_size: Optional[str] = BatchOpt, dataset_size: Optional[str] = DataOpt,
               steps: Optional[str] = StepsOpt, epochs: Optional[str] = EpochsOpt,
               sampling: Optional[str] = SamplingOpt, relation: Optional[str] = RelationOpt,
               max_batch_size: Optional[str] = MaxBatchOpt,
               delta: float = DeltaOpt, fpr: str = FprOpt,
               metrics: Optional[str] = typer.Option(None, help="Comma-separated subset of mu, regret, alpha_min, "
                                                                "epsilon, tpr, advantage, seconds."),
               discretization: Optional[float] = SweepDiscOpt, output: Optional[Path] = OutOpt,
               dask_local: Optional[int] = DaskLocalOpt, scheduler: Optional[str] = SchedOpt,
               workers: Optional[int] = WorkersOpt, executor: Optional[str] = ExecOpt,
               fmt: str = FmtOpt) -> None:
    """Account every combination of the given lists (a Cartesian grid) and write one row per
    setting: mu, regret, epsilon at --delta, certified TPR at each --fpr, advantage, time."""
    if ctx.invoked_subcommand is not None:
        return
    from fdpkit.sweep import run_sweep

    if fmt not in ("text", "json"):
        fail(f"--format must be text or json, got {fmt!r}")
    if noise_multiplier is None:
        fail("give --noise-multiplier (and a sample rate and steps), or a subcommand: "
             "regret-map, rule-of-thumb, design-table")
    grid = {"noise_multiplier": parse_list("--noise-multiplier", noise_multiplier),
            "sample_rate": parse_list("--sample-rate", sample_rate),
            "batch_size": parse_list("--batch-size", batch_size, _whole),
            "dataset_size": parse_list("--dataset-size", dataset_size, _whole),
            "steps": parse_list("--steps", steps, _whole),
            "epochs": parse_list("--epochs", epochs),
            "sampling": parse_list("--sampling", sampling, str),
            "relation": parse_list("--relation", relation, str),
            "max_batch_size": parse_list("--max-batch-size", max_batch_size, _whole)}
    try:
        with _output_errors() as told, progress_bar("Sweeping") as update:
            result = run_sweep(**grid, delta=delta, fprs=parse_list("--fpr", fpr),
                               metrics=parse_list("--metrics", metrics, str),
                               discretization=discretization, output=output, dask_local=dask_local,
                               scheduler=scheduler, workers=workers, executor=executor, progress=update,
                               on_client=_dashboard, overwrite=State.force)
    except KeyboardInterrupt:
        _interrupted(output)
    summary = {"settings": len(result), "computed": result.computed, "reused": result.reused,
               "executor": result.executor, "output": str(result.output) if result.output else None,
               "columns": result.columns, **result.metadata, "warnings": list(told)}
    if fmt == "json":
        payload = summary if output else {**summary, "rows": result.rows}
        sys.stdout.write(json.dumps(json_safe(payload), indent=2, allow_nan=False) + "\n")
        return
    if output is None:
        _print_rows(result.rows, f"DP-SGD sweep ({len(result)} settings)")
    elif not State.quiet:
        err.print(f"wrote {output}: {len(result)} settings ({result.computed} computed, {result.reused} reused)")


def _check_plot(plot: Optional[Path]) -> None:
    """``--plot`` checked before any work, as ``fdpkit plot -o``: a .svg/.png/.pdf name in an
    existing folder, not an existing file without ``--force``."""
    if plot is not None:
        from fdpkit.report.figures import FORMATS

        check_output(plot, "--plot", FORMATS)


def _write_plot(plot: Optional[Path], draw: Callable[[Any], Any]) -> None:
    if plot is None:
        return
    from fdpkit.report.figures import render

    write_output(plot, render(draw, plot.suffix.lower().lstrip("."), size=(7.0, 4.8)), "--plot")
    if not State.quiet:
        err.print(f"wrote {plot}")


PlotOpt = typer.Option(None, "--plot", help="Also draw the figure to FILE.svg, .png or .pdf.")


@sweep_app.command("regret-map")
@guarded
def regret_map_cmd(noise_multiplier: str = typer.Option("0.5,1,2,4,8", "--noise-multiplier",
                                                     help="Comma-separated noise multipliers."),
                   steps: str = typer.Option("400,1000,2000", "--steps", help="Comma-separated step counts."),
                   sample_rate: Optional[str] = typer.Option(None, "--sample-rate",
                                                             help="Default: 10 rates from 1e-3 to 0.5."),
                   discretization: float = DiscOpt, output: Optional[Path] = OutOpt, plot: Optional[Path] = PlotOpt,
                   dask_local: Optional[int] = DaskLocalOpt, scheduler: Optional[str] = SchedOpt,
                   workers: Optional[int] = WorkersOpt, executor: Optional[str] = ExecOpt) -> None:
    """Regret of mu-GDP for DP-SGD against the sample rate (Gomez et al. Fig. 4)."""
    from fdpkit.report.sweep_plots import regret_map_plot
    from fdpkit.sweep import regret_map
    from fdpkit.sweep.studies import FIG4_SAMPLE_RATES

    rates = parse_list("--sample-rate", sample_rate) or list(FIG4_SAMPLE_RATES)
    _check_plot(plot)
    try:
        with _output_errors(), progress_bar("Regret map") as update:
            r = regret_map(parse_list("--noise-multiplier", noise_multiplier), parse_list("--steps", steps, _whole),
                           rates, discretization=discretization, output=output, dask_local=dask_local,
                           scheduler=scheduler, workers=workers, executor=executor, progress=update,
                           on_client=_dashboard, overwrite=State.force)
    except KeyboardInterrupt:
        _interrupted(output)
    if output is None:
        _print_rows(r.rows, "Regret of mu-GDP (Gomez et al. Fig. 4)")
    _write_plot(plot, lambda ax: regret_map_plot(ax, r.rows))


@sweep_app.command("rule-of-thumb")
@guarded
def rule_of_thumb_cmd(noise_multiplier: str = typer.Option("1,2,4,8", "--noise-multiplier",
                                                        help="Comma-separated noise multipliers."),
                      steps: str = typer.Option("100,400,1000,2000", "--steps", help="Comma-separated step counts."),
                      sample_rate: Optional[str] = typer.Option(None, "--sample-rate",
                                                                help="Default: 10 rates from 1e-3 to 0.5."),
                      threshold: float = typer.Option(0.01, help="Regret threshold."),
                      discretization: float = DiscOpt, output: Optional[Path] = OutOpt,
                      plot: Optional[Path] = PlotOpt, dask_local: Optional[int] = DaskLocalOpt,
                      scheduler: Optional[str] = SchedOpt, workers: Optional[int] = WorkersOpt,
                      executor: Optional[str] = ExecOpt, fmt: str = FmtOpt) -> None:
    """Where does "sigma >= 2 and T >= 400 => regret < 0.01" (Gomez et al. Sec. 5) hold?"""
    from fdpkit.report.sweep_plots import regret_map_plot
    from fdpkit.sweep import rule_of_thumb
    from fdpkit.sweep.studies import FIG4_SAMPLE_RATES

    if fmt not in ("text", "json"):
        fail(f"--format must be text or json, got {fmt!r}")
    rates = parse_list("--sample-rate", sample_rate) or list(FIG4_SAMPLE_RATES)
    _check_plot(plot)
    try:
        with _output_errors() as told, progress_bar("Rule of thumb") as update:
            study = rule_of_thumb(parse_list("--noise-multiplier", noise_multiplier),
                                  parse_list("--steps", steps, _whole), rates, threshold=threshold,
                                  discretization=discretization, output=output, dask_local=dask_local,
                                  scheduler=scheduler, workers=workers, executor=executor, progress=update,
                                  on_client=_dashboard, overwrite=State.force)
    except KeyboardInterrupt:
        _interrupted(output)
    if fmt == "json":
        d = study.to_dict()
        d.pop("rows")
        d["warnings"] = list(told)  # as the text says them on stderr (a checkpoint chunk not reused)
        sys.stdout.write(json.dumps(json_safe(d), indent=2, allow_nan=False) + "\n")
    else:
        out.print(study.summary(), soft_wrap=True, highlight=False)
        if study.counterexamples:
            _print_rows(study.counterexamples, "Counter-examples")
    _write_plot(plot, lambda ax: regret_map_plot(ax, study.result.rows, threshold=study.threshold))


@sweep_app.command("design-table")
@guarded
def design_table_cmd(mu: Optional[float] = typer.Option(None, help="Target mu (the table's noise meets it, safe side)."),
                     epsilon: Optional[float] = typer.Option(None, help="Target epsilon at --delta instead of mu."),
                     batch_size: str = typer.Option(..., "--batch-size", help="Comma-separated batch sizes."),
                     epochs: str = typer.Option(..., "--epochs", help="Comma-separated epoch counts."),
                     dataset_size: int = typer.Option(..., "--dataset-size", help="Number of examples."),
                     delta: float = DeltaOpt, discretization: float = DiscOpt, output: Optional[Path] = OutOpt,
                     dask_local: Optional[int] = DaskLocalOpt, scheduler: Optional[str] = SchedOpt,
                     workers: Optional[int] = WorkersOpt, executor: Optional[str] = ExecOpt,
                     fmt: str = FmtOpt) -> None:
    """Smallest noise multiplier for each (batch size, epochs) pair at a target mu, or at a
    target epsilon at --delta."""
    from fdpkit.sweep import design_table
    from fdpkit.sweep.store import check_output_path, write_table

    if fmt not in ("text", "json"):
        fail(f"--format must be text or json, got {fmt!r}")
    if (mu is None) == (epsilon is None):
        fail("give exactly one target: --mu, or --epsilon (at --delta)")
    if output is not None:
        check_output_path(output)
        check_output(output)  # a design table is written whole: an existing file needs --force
    with progress_bar("Calibrating") as update:
        rows = design_table(mu=mu, epsilon=epsilon, batch_size=parse_list("--batch-size", batch_size, _whole),
                            epochs=parse_list("--epochs", epochs), dataset_size=dataset_size, delta=delta,
                            discretization=discretization, executor=executor, workers=workers,
                            scheduler=scheduler, dask_local=dask_local, progress=update)
    if output is not None:
        write_table(output, rows)
        if not State.quiet:
            err.print(f"wrote {output}")
    if fmt == "json":
        target = {"mu": mu} if mu is not None else {"epsilon": epsilon}
        sys.stdout.write(json.dumps(json_safe({**target, "delta": delta, "rows": rows}), indent=2,
                                    allow_nan=False) + "\n")
    else:
        goal = f"μ ≤ {mu:g}" if mu is not None else f"ε ≤ {epsilon:g} at δ = {delta:g}"
        _print_design(rows, f"Smallest noise multiplier for {goal}", delta)


def _print_design(rows: list[dict[str, Any]], title: str, delta: float) -> None:
    """The design table as a reader chooses from it: one row per (batch size, epochs), the noise
    multiplier rounded up (the σ copied into training keeps the target: more noise; the row's μ,
    ε and TPR, upper bounds for the solved σ, stay upper bounds for it) and its certified figures.
    All twelve columns of the library's rows cut every one to "0.5…" in an 80-column terminal,
    σ included; they stay whole in --format json and --output."""
    from fdpkit._numerics import safe_text  # function-level: `fdpkit sweep --help` imports no maths

    table = RichTable(title=title, title_justify="left")
    for c in ("batch size", "epochs", "steps", "σ (rounded up)", "μ", f"ε at δ = {delta:g}", "TPR at FPR 0.001"):
        table.add_column(c, overflow="fold")
    for r in rows:
        table.add_row(str(r["batch_size"]), fmt_num(r["epochs"]), str(r["steps"]),
                      safe_text(r["noise_multiplier"], up=True),
                      *(fmt_num(r[k], up=True) for k in ("mu", "epsilon", "tpr_at_0.001")))
    out.print(table)
    if not all(r.get("converged", True) for r in rows):
        out.print("Some rows did not converge: their σ is the search's last safe value (--format json: converged).")
    out.print("Next: fdpkit report dpsgd --noise-multiplier SIGMA --batch-size B --dataset-size N --epochs E (the full "
              "report of a row's run, SIGMA as printed).", highlight=False, soft_wrap=True)
