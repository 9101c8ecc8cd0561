"""``fdpkit report``: the privacy report of a mechanism in every format."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table as RichTable

import fdpkit as fp
from fdpkit.cli import _dpsgd as _dp
from fdpkit.cli._common import (check_output, cli_budget, command_group, write_output, DiscOpt, FormatOpt, FORMATS, OutputOpt, State, err, fail, guarded, load_spec, saved_delta,
                                load_points, mechanism_from_dict, out, working)

report_app = command_group("Privacy report of a mechanism: mu, regret, risk, exports.")
#: ``--delta``: where the report reads ε from the accountant's privacy profile; a calibration's
#: target δ carried on (``fdpkit calibrate``'s Next line), so that its ε is the one the report leads with.
DeltasOpt = typer.Option([], "--delta", show_default=False,
                         help="δ at which the report gives ε (repeatable; the first is the headline's) "
                              "[default: 1e-5, 1e-6, 1e-9].")


def _print_report(r: fp.PrivacyReport) -> None:
    from fdpkit.report import build_document

    doc = build_document(r)
    out.print(f"[bold]{doc.title}[/bold]")
    out.print(doc.summary, highlight=False, soft_wrap=True)
    for s in doc.sections:
        # "None." marks an empty Warnings or Technical notes section in documents; the terminal
        # leaves it out, and names those two sections where they have something to say
        paragraphs = [p for p in s.paragraphs if p != "None."]
        if paragraphs and s.key in ("warnings", "notes"):
            out.print(f"[bold]{s.title}[/bold]", highlight=False)
        for p in paragraphs:
            out.print(f"[yellow]! {p}[/yellow]" if s.title == "Warnings" else p, highlight=False, soft_wrap=True)
        for t in s.tables:
            table = RichTable(title=t.title, title_justify="left")
            for h in t.header:
                table.add_column(h)
            for row in t.rows:
                table.add_row(*row)
            out.print(table)
    if math.isfinite(r.mu) and r.mu > 0:  # the next step, with mu rounded up (the safe side)
        from fdpkit._numerics import safe_text

        mu = safe_text(r.mu, up=True)
        # with μ's range (rounded up): outside it, risk reads the run's bound 1 - G_μ(FPR) + τ
        rng = (f" --mu-fpr-min {safe_text(r.fit.alpha_min, up=True)} --mu-tau {safe_text(min(r.fit.tau, 1.0), up=True)}"
               if 0 < r.fit.alpha_min < 0.5 and math.isfinite(r.fit.tau) else "")
        out.print(f"Next: fdpkit risk --mu {mu}{rng} (attack risk at your prior and FPR); fdpkit convert mu-to-eps "
                  f"--mu {mu} (ε from μ-GDP alone; for this run quote the privacy profile above: μ alone can give more, "
                  f"or less at a δ below the τ it leaves out). μ = {mu} is rounded up.",
                  highlight=False, soft_wrap=True)
    out.print(f"Record it: {ledger_command(r)}", highlight=False, soft_wrap=True)


def ledger_command(r: fp.PrivacyReport) -> str:
    """The ``fdpkit ledger propose`` command of the reported mechanism, its spec inline (the web
    report's "Propose this release", without re-typing the run; its relation stated, so that the
    ledger accounts what the report did). DATASET is the user's.

    >>> print(ledger_command(fp.privacy_report(fp.Gaussian(2.0))))
    fdpkit ledger propose DATASET --spec '{"kind":"gaussian","sigma":2.0,"sensitivity":1.0}' --title 'Gaussian(sigma=2.0, sensitivity=1.0)'
    """
    import json
    import shlex

    spec = json.dumps(r.mechanism.to_dict(), separators=(",", ":"), ensure_ascii=False)
    return f"fdpkit ledger propose DATASET --spec {shlex.quote(spec)} --title {shlex.quote(r.mechanism.label())}"


def _privacy_report(mechanism: fp.Mechanism, discretization: Optional[float],
                    deltas: Optional[list[float]]) -> fp.PrivacyReport:
    """``fp.privacy_report`` at ``--delta`` (the library's δ when none); a bad δ names ``--delta``."""
    kw = {"deltas": tuple(deltas)} if deltas else {}
    try:
        return fp.privacy_report(mechanism, discretization=discretization, budget=cli_budget(), **kw)
    except fp.ParameterError as exc:
        if exc.parameter == "deltas" and str(exc).startswith("deltas "):
            fail("--delta " + str(exc)[len("deltas "):])
        raise


def run_report(mechanism: fp.Mechanism, fmt: str, output: Optional[Path], discretization: Optional[float],
               deltas: Optional[list[float]] = None) -> None:
    # the output rules before any work (as `fdpkit audit` and `fdpkit ledger report` check them): a
    # PDF without --output was refused only after the accounting and the whole PDF (seconds)
    if fmt == "text" and output:
        fail("--output needs a file format (--format json, csv, md, html or pdf)")
    if fmt == "pdf" and not output:
        fail("PDF output needs --output PATH")
    if output is not None and fmt != "text":
        check_output(output)  # before any work, as write_output checks it again when it writes
    if fmt == "statement":
        with working("Accounting the mechanism..."):
            text = _privacy_report(mechanism, discretization, deltas).statement() + "\n"
        if output:
            write_output(output, text.encode("utf-8"))
        else:
            sys.stdout.write(text)
        return
    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)} or statement, got {fmt!r}")
    with working("Accounting the mechanism..."):
        r = _privacy_report(mechanism, discretization, deltas)
    if fmt == "text":
        _print_report(r)
        return
    from fdpkit.report import build_document, render_document

    with working(f"Rendering {fmt}..."):
        data = render_document(build_document(r), fmt)
    if output:
        write_output(output, data)
        if not State.quiet:
            err.print(f"wrote {output}")
    else:
        sys.stdout.write(data.decode("utf-8"))


@report_app.callback(invoke_without_command=True)
@guarded
def report_main(
    ctx: typer.Context,
    mechanism: Optional[Path] = typer.Option(None, "--mechanism", "-m", help="Mechanism spec (JSON or TOML)."),
    fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt,
    deltas: list[float] = DeltasOpt,
) -> None:
    """Report a mechanism given as a spec file, or use a subcommand."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"fmt": fmt, "output": output, "discretization": discretization, "deltas": deltas}
        return
    if mechanism is None:
        fail("give --mechanism SPEC or a subcommand (dpsgd, gaussian, laplace, randomized-response, pure-dp, "
             "approx-dp, zcdp, rdp, uniform-sampling, points)")
    data = load_spec(mechanism)
    if not deltas:  # a saved calibration or report leads with its own δ (it read ε at 1e-5)
        # function-level: `fdpkit report --help` imports no maths (fdpkit.guarantee loads NumPy)
        from fdpkit.guarantee.privacy import deltas_led_by

        deltas = list(deltas_led_by(saved_delta(data)) or ())
    run_report(mechanism_from_dict(data), fmt, output, discretization, deltas)



def _opts(ctx: typer.Context, fmt: str, output: Optional[Path], disc: Optional[float],
          deltas: Optional[list[float]] = None) -> tuple:
    """A subcommand's options, else the group's (``fdpkit report --format pdf gaussian ...``)."""
    parent = ctx.obj or {}
    return (fmt if fmt != "text" else parent.get("fmt", "text"),
            output or parent.get("output"), disc if disc is not None else parent.get("discretization"),
            deltas or parent.get("deltas") or None)


@report_app.command("dpsgd")
@guarded
def report_dpsgd(ctx: typer.Context,
                 noise_multiplier: Optional[float] = _dp.NoiseOpt, sample_rate: Optional[float] = _dp.RateOpt,
                 steps: Optional[float] = _dp.StepsOpt, batch_size: Optional[float] = _dp.BatchOpt,
                 dataset_size: Optional[int] = _dp.DatasetOpt, epochs: Optional[float] = _dp.EpochsOpt,
                 sampling: str = _dp.SamplingOpt, relation: str = _dp.RelationOpt,
                 max_batch_size: Optional[float] = _dp.MaxBatchOpt, unit: str = _dp.UnitOpt,
                 examples_per_user: Optional[float] = _dp.PerUserOpt, schedule: Optional[Path] = _dp.ScheduleOpt,
                 opacus_history: Optional[Path] = _dp.HistoryOpt, drop_last: bool = _dp.DropLastOpt,
                 fmt: str = typer.Option("text", "--format", "-f", help="text, statement, json, csv, md, html or pdf."),
                 output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt,
                 deltas: list[float] = DeltasOpt) -> None:
    """DP-SGD as trained: noise multiplier; sample rate or batch and dataset size; steps or
    epochs; sampling scheme, neighbouring relation and privacy unit.

    Which scheme was my run? Opacus make_private defaults: --sampling poisson (add-remove).
    Opacus poisson_sampling=False or DataLoader(shuffle=True): --sampling shuffled --relation
    replace-one (or zero-out). jax_privacy fixed batches: --sampling fixed-size. Replace-one
    hides a record's content (2x the mu of zero-out); add-remove and zero-out hide membership.
    A shuffled run: retrain with Poisson sampling, or report the honest shuffled bound, never
    the Poisson figure. Epochs count ceil(n/b) loader batches (floor with --drop-last)."""
    mech = _dp.build(noise_multiplier, sample_rate, steps, batch_size, dataset_size, epochs, sampling, relation,
                     max_batch_size, unit, examples_per_user, schedule, opacus_history, drop_last)
    run_report(mech, *_opts(ctx, fmt, output, discretization, deltas))


@report_app.command("gaussian")
@guarded
def report_gaussian(ctx: typer.Context, sigma: float = typer.Option(..., help="Noise standard deviation."),
                    sensitivity: float = typer.Option(1.0, help="L2 sensitivity of the query."), times: int = typer.Option(1, help="Repetitions."),
                    fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """Gaussian mechanism (repeated TIMES times)."""
    mech = fp.Gaussian(sigma, sensitivity)
    run_report(mech if times == 1 else fp.Repeated(mech, times), *_opts(ctx, fmt, output, discretization))


@report_app.command("laplace")
@guarded
def report_laplace(ctx: typer.Context, scale: float = typer.Option(..., help="Laplace scale b."),
                   sensitivity: float = typer.Option(1.0, help="L1 sensitivity of the query."), times: int = typer.Option(1, help="Repetitions."),
                   fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """Laplace mechanism (repeated TIMES times)."""
    mech = fp.Laplace(scale, sensitivity)
    run_report(mech if times == 1 else fp.Repeated(mech, times), *_opts(ctx, fmt, output, discretization))


@report_app.command("randomized-response")
@guarded
def report_rr(ctx: typer.Context, epsilon: float = typer.Option(..., help="ε of the randomized response."),
              fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """Binary randomized response."""
    run_report(fp.RandomizedResponse(epsilon), *_opts(ctx, fmt, output, discretization))


@report_app.command("pure-dp")
@guarded
def report_pure(ctx: typer.Context, epsilon: float = typer.Option(..., help="ε of the ε-DP guarantee."),
                fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """Any epsilon-DP mechanism (worst case)."""
    run_report(fp.PureDP(epsilon), *_opts(ctx, fmt, output, discretization))


@report_app.command("approx-dp")
@guarded
def report_approx(ctx: typer.Context, epsilon: float = typer.Option(..., help="ε of the (ε, δ)-DP guarantee."),
                  delta: float = typer.Option(..., help="δ of the (ε, δ)-DP guarantee."),
                  fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """Any (epsilon, delta)-DP mechanism (worst case)."""
    run_report(fp.ApproxDP(epsilon, delta), *_opts(ctx, fmt, output, discretization))


@report_app.command("zcdp")
@guarded
def report_zcdp(ctx: typer.Context, rho: float = typer.Option(..., help="zCDP parameter rho >= 0."),
                fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """Any rho-zCDP mechanism (worst case), e.g. a Tumult Analytics or Census TopDown budget."""
    run_report(fp.ZCDP(rho), *_opts(ctx, fmt, output, discretization))


@report_app.command("rdp")
@guarded
def report_rdp(ctx: typer.Context,
               orders: list[float] = typer.Option(..., "--order", help="Rényi order t > 1 (repeatable)."),
               epsilons: list[float] = typer.Option(..., "--epsilon", help="eps(t) at that order (repeatable, same count)."),
               fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """Any mechanism with the given (order, epsilon) RDP pairs, as Opacus or TF Privacy print them."""
    run_report(fp.RDP(orders, epsilons), *_opts(ctx, fmt, output, discretization))


@report_app.command("uniform-sampling")
@guarded
def report_uniform(ctx: typer.Context,
                   mu: float = typer.Option(..., help="De Fondeville's privacy parameter (> 0; not a GDP mu)."),
                   n: int = typer.Option(..., help="Dataset size (>= 1)."),
                   fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """De Fondeville's uniform random sampling (Example 3): fails catastrophically."""
    run_report(fp.UniformSampling(mu, n), *_opts(ctx, fmt, output, discretization))


@report_app.command("points")
@guarded
def report_points(ctx: typer.Context,
                  points: Path = typer.Argument(..., help="CSV of (FPR, FNR) error points: header fpr,fnr (or R fdp's "
                                                "alpha,beta; a tpr column is read as 1 - FNR); FPR 0 included."),
                  bound: str = typer.Option("lower", help="lower (the mechanism's curve is on or above the points' "
                                            "hull) or exact (the points are its vertices)."),
                  fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: Optional[float] = DiscOpt) -> None:
    """A mechanism known by its own error points (R fdp's fdp() of a data frame): their lower
    convex hull, reported with its tight mu (R's est_gdp) and certificate."""
    if bound not in ("lower", "exact"):
        fail(f"--bound must be lower or exact (an upper curve certifies nothing), got {bound!r}")
    curve = load_points(points, bound)
    run_report(fp.CurveMechanism.from_curve(curve), *_opts(ctx, fmt, output, discretization))
