"""``fdpkit audit``: read a membership-inference attack against a certified guarantee, and
``fdpkit audit simulate``: the optimal canary attack against a mechanism. No maths here."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table as RichTable

from fdpkit.cli._common import (FORMATS, State, check_distinct, check_output, command_group, err, fail, guarded, load_spec,
                                out, read_input_bytes, working, write_output)

audit_app = command_group("Audit a membership-inference attack against a certified guarantee.")

MechOpt = typer.Option(None, "--mechanism", "-m",
                       help="Certified mechanism: a spec file (JSON or TOML), a JSON privacy "
                       "report, or inline JSON.")
ConfOpt = typer.Option(0.95, "--confidence", help="Joint confidence of all bounds, in (0, 1).")
DeltaOpt = typer.Option(1e-5, "--delta", help="delta of the epsilon lower bound.")
FmtOpt = typer.Option("text", "--format", "-f", help="text, json, csv, md, html or pdf.")
OutOpt = typer.Option(None, "--output", "-o", help="Write to this file (atomically).")
PlotOpt = typer.Option(None, "--plot", help="Also write the log-log ROC plot (.svg, .png or .pdf).")
FailOpt = typer.Option(False, "--fail-on-violation", help="Exit with code 1 when the audit finds a violation.")


def _mechanism(spec: Optional[str]) -> Any:
    """A mechanism from a spec path or inline JSON (None stays None)."""
    from fdpkit.mechanisms import mechanism_from_dict

    if spec is None:
        return None
    text = spec.strip()
    if text.startswith("{"):
        from fdpkit._inputs import load_json

        data = load_json(text, "--mechanism", parameter="mechanism")
    else:
        data = load_spec(Path(spec))
    if isinstance(data, dict) and "schema_version" in data and "mechanism" in data:
        data = data["mechanism"]  # a privacy report (fdpkit report --format json): its mechanism
    return mechanism_from_dict(data)


def _read(path: Path, what: str):
    from fdpkit.audit import io as audit_io

    name = f"{what} file {path.name}"
    return audit_io.read_scores_csv(read_input_bytes(path, name), name, max_rows=audit_io.MAX_SCORES)


def _print(result: Any, title: str, extra: dict[str, str]) -> None:
    from fdpkit.report.audit import audit_tables

    style = "bold red" if result.violation else ("green" if result.violation is False else "")
    out.print(f"[bold]{title}[/bold]")
    out.print(result.verdict, style=style or None, highlight=False, soft_wrap=True)
    for t in audit_tables(result):
        table = RichTable(title=t.title, title_justify="left")
        for h in t.header:
            table.add_column(h)
        for row in t.rows:
            table.add_row(*row)
        out.print(table)
    for k, v in extra.items():
        out.print(f"{k}: {v}", highlight=False, soft_wrap=True)


def _check_outputs(fmt: str, output: Optional[Path], plot: Optional[Path], *more: tuple[Optional[Path], str]) -> None:
    """The output files' rules (as ``fdpkit plot -o``: existing folder, no existing file
    without --force, the plot's suffix), checked before any work."""
    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "text" and output is not None:  # refused before the plot or score files are written
        fail("--output needs a file format (--format json, csv, md, html or pdf)")
    if fmt == "pdf" and output is None:
        fail("PDF output needs --output PATH")
    if output is not None:
        check_output(output)
    if plot is not None:
        check_output(plot, "--plot", ("svg", "png", "pdf"))
    for path, option in more:
        if path is not None:
            check_output(path, option)
    check_distinct((output, "--output"), (plot, "--plot"), *more)


def _emit(result: Any, title: str, fmt: str, output: Optional[Path], plot: Optional[Path],
          extra: dict[str, str], fail_on_violation: bool) -> None:
    from fdpkit._numerics import json_safe
    from fdpkit.report import render_document

    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if plot is not None:
        from fdpkit.report.audit import audit_roc
        from fdpkit.report.figures import render

        write_output(plot, render(lambda ax: audit_roc(ax, result), plot.suffix.lower().lstrip(".")), "--plot")
    if fmt == "text":
        if output:
            fail("--output needs a file format (--format json, csv, md, html or pdf)")
        _print(result, title, extra)
    elif fmt == "json":
        data = (json.dumps(json_safe({**result.to_dict(), **extra}), indent=2, allow_nan=False) + "\n").encode()
        write_output(output, data) if output else sys.stdout.write(data.decode())
    else:
        data = render_document(result.document(), fmt)
        if output:
            write_output(output, data)
        elif fmt == "pdf":
            fail("PDF output needs --output PATH")
        else:
            sys.stdout.write(data.decode("utf-8"))
    if output and not State.quiet:
        err.print(f"wrote {output}")
    if fail_on_violation and result.violation:
        raise typer.Exit(1)


@audit_app.callback(invoke_without_command=True)
@guarded
def audit_main(
    ctx: typer.Context,
    members: Optional[Path] = typer.Option(None, "--members", help="CSV of the attack's scores on members."),
    nonmembers: Optional[Path] = typer.Option(None, "--nonmembers", help="CSV of its scores on non-members."),
    counts: Optional[Path] = typer.Option(None, "--counts", help="CSV of counts: true_positives, false_positives, "
                                          "members, nonmembers (one row per threshold)."),
    mechanism: Optional[str] = MechOpt, confidence: float = ConfOpt, delta: float = DeltaOpt,
    fmt: str = FmtOpt, output: Optional[Path] = OutOpt, plot: Optional[Path] = PlotOpt,
    fail_on_violation: bool = FailOpt,
) -> None:
    """Audit attack scores (higher = member) or published counts; with --mechanism, check them
    against its certified guarantee."""
    if ctx.invoked_subcommand is not None:
        return
    from fdpkit.audit import audit_from_counts, read_counts_csv, run_audit

    if counts is not None and (members is not None or nonmembers is not None):
        fail("give either --members and --nonmembers, or --counts, not both")
    _check_outputs(fmt, output, plot)
    mech = _mechanism(mechanism)
    if counts is not None:
        from fdpkit.audit.empirical import MAX_THRESHOLDS

        # at most MAX_THRESHOLDS rows of counts (the header not counted): refused while it is read
        name = f"counts file {counts.name}"
        c = read_counts_csv(read_input_bytes(counts, name), name, max_rows=MAX_THRESHOLDS)
        with working("Auditing..."):
            result = audit_from_counts(c["true_positives"], c["false_positives"], c["members"], c["nonmembers"],
                                       confidence=confidence, delta=delta, mechanism=mech)
    else:
        if members is None or nonmembers is None:
            fail("give --members and --nonmembers (CSV files of scores), --counts, or the subcommand simulate")
        m, n = _read(members, "--members"), _read(nonmembers, "--nonmembers")
        with working("Auditing..."):
            result = run_audit(m, n, confidence=confidence, delta=delta, mechanism=mech)
    _emit(result, result.document().title, fmt, output, plot, {}, fail_on_violation)


@audit_app.command("simulate")
@guarded
def audit_simulate(
    mechanism: str = typer.Option(..., "--mechanism", "-m", help="Mechanism that runs: spec file or inline JSON."),
    trials: int = typer.Option(10_000, "--trials", help="Trials per class (members and non-members)."),
    seed: int = typer.Option(0, "--seed", help="Random seed (reproducible)."),
    declared: Optional[str] = typer.Option(None, "--declared", help="Mechanism whose certified guarantee is "
                                           "audited (default: the one that runs)."),
    confidence: float = ConfOpt, delta: float = DeltaOpt, fmt: str = FmtOpt, output: Optional[Path] = OutOpt,
    plot: Optional[Path] = PlotOpt,
    members_out: Optional[Path] = typer.Option(None, "--members-out", help="Write the member scores as CSV."),
    nonmembers_out: Optional[Path] = typer.Option(None, "--nonmembers-out", help="Write the non-member scores."),
    fail_on_violation: bool = FailOpt,
) -> None:
    """Run the optimal likelihood-ratio attack on a canary against the mechanism itself and
    audit the result against its certified guarantee (or --declared)."""
    from fdpkit.audit import scores_csv, simulate_attack

    _check_outputs(fmt, output, plot, (members_out, "--members-out"), (nonmembers_out, "--nonmembers-out"))
    mech = _mechanism(mechanism)
    target = _mechanism(declared) if declared is not None else mech
    with working(f"Simulating {trials:,} trials per class..."):
        sim = simulate_attack(mech, trials=trials, seed=seed)
    with working("Auditing..."):
        result = sim.audit(confidence=confidence, delta=delta, mechanism=target)
    # the scores are written once the audit has run: a refused --confidence or --delta left them
    if members_out is not None:
        write_output(members_out, scores_csv(sim.member_scores).encode(), "--members-out")
    if nonmembers_out is not None:
        write_output(nonmembers_out, scores_csv(sim.nonmember_scores).encode(), "--nonmembers-out")
    extra = {
        "simulated": mech.label(),
        "score": sim.score,
        "without noise": "the canary attack is perfect: TPR 1 at FPR 0",
        "with this noise": (f"empirical TPR {result.empirical_tpr_at(1e-3):.4g} at FPR <= 0.001, "
                            f"{result.empirical_tpr_at(1e-2):.4g} at FPR <= 0.01"),
    }
    _emit(result, f"Simulated attack on {mech.label()}", fmt, output, plot, extra, fail_on_violation)
