"""The ``fdpkit`` command line (typer + rich), one module per command group. It parses,
calls the library and prints: no maths here. Bad input exits with code 2 and one readable
line on stderr."""

from __future__ import annotations

import typer

from fdpkit.cli import audit
from fdpkit.cli import calibrate
from fdpkit.cli import convert
from fdpkit.cli import ledger
from fdpkit.cli import plot
from fdpkit.cli import report
from fdpkit.cli import risk
from fdpkit.cli import serve
from fdpkit.cli import sweep
from fdpkit.cli import utility
from fdpkit.cli._common import State

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Honest, tight, readable privacy guarantees (f-DP, Gaussian DP).")
app.add_typer(report.report_app, name="report")
app.add_typer(convert.convert_app, name="convert")
app.add_typer(calibrate.calibrate_app, name="calibrate")
app.add_typer(sweep.sweep_app, name="sweep")
app.add_typer(ledger.ledger_app, name="ledger")
app.add_typer(audit.audit_app, name="audit")
app.command("risk")(risk.risk)
app.command("tables")(convert.tables)
app.command("power")(utility.power)
app.command("plan")(utility.plan)
app.command("plot")(plot.plot)
app.command("serve")(serve.serve)


@app.callback()
def main_callback(quiet: bool = typer.Option(False, "--quiet", "-q", help="No spinners or extra text.")) -> None:
    State.quiet = quiet


def main() -> None:  # pragma: no cover - console entry point
    app()


__all__ = ["app", "main"]
