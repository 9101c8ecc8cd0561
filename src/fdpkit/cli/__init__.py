"""The ``fdpkit`` command line (typer + rich), one module per command group. It parses,
calls the library and prints: no maths here. Bad input exits with code 2 and one readable
line on stderr."""

from __future__ import annotations

import typer

from fdpkit.cli import audit
from fdpkit.cli import calibrate
from fdpkit.cli import convert
from fdpkit.cli import ledger
from fdpkit.cli import ledger_chain  # noqa: F401  (registers ledger head and verify)
from fdpkit.cli import ledger_lifts
from fdpkit.cli import ledger_users
from fdpkit.cli import plot
from fdpkit.cli import report
from fdpkit.cli import risk
from fdpkit.cli import serve
from fdpkit.cli import sweep
from fdpkit.cli import utility
from fdpkit.cli._common import PlainNumbersGroup, State, command_group

app = command_group("Honest, tight, readable privacy guarantees (f-DP, Gaussian DP).", cls=PlainNumbersGroup,
                    add_completion=False, no_args_is_help=True)
app.add_typer(report.report_app, name="report")
app.add_typer(convert.convert_app, name="convert")
app.add_typer(calibrate.calibrate_app, name="calibrate")
app.add_typer(sweep.sweep_app, name="sweep")
ledger.ledger_app.add_typer(ledger_users.user_app, name="user")
ledger.ledger_app.add_typer(ledger_lifts.lift_app, name="lift")
app.add_typer(ledger.ledger_app, name="ledger")
app.add_typer(audit.audit_app, name="audit")
app.command("risk")(risk.risk)
app.command("tables")(convert.tables)
app.command("power")(utility.power)
app.command("plan")(utility.plan)
app.command("plot")(plot.plot)
app.command("serve")(serve.serve)


def _print_version(value: bool) -> None:
    """``--version``: print ``fdpkit X.Y.Z`` and exit (eager: before any command, no maths)."""
    if value:
        from fdpkit import __version__

        typer.echo(f"fdpkit {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(quiet: bool = typer.Option(False, "--quiet", "-q", help="No spinners or extra text."),
                  force: bool = typer.Option(False, "--force", help="Overwrite an existing --output file "
                                             "(accepted anywhere on the command line)."),
                  version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                               help="Print the fdpkit version and exit.")) -> None:
    State.quiet = quiet
    # per invocation: a --force of an earlier command in the same process (tests invoking the
    # app again and again) must not carry over
    State.force = force or State.force_anywhere


def _quiet_numerics(command) -> None:
    """Run every command that does the work under ``np.errstate(all="ignore")``, importing
    NumPy only then: ``--help`` and ``--version`` (parsed before any callback) import no maths.
    Wraps the callbacks of the click tree's leaf commands in place; a group's own work (``report
    --mechanism``, ``audit``, ``sweep``) gets the same from :func:`fdpkit.cli._common.guarded`."""
    from fdpkit.cli._common import quiet_numerics

    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        if command.callback is not None and not getattr(command.callback, "_fdpkit_quiet", False):
            command.callback = quiet_numerics(command.callback)
        return
    for sub in subcommands.values():
        _quiet_numerics(sub)


def run(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv``; return the exit code. Every error is one line on
    stderr and exit code 2: usage errors (no typer box), library errors, anything else.
    ``--force`` (overwrite an existing ``--output``) is accepted anywhere before ``--``."""
    import sys

    State.force = State.force_anywhere = False
    State.quiet = False
    args = sys.argv[1:] if argv is None else list(argv)
    cut = args.index("--") if "--" in args else len(args)
    if "--force" in args[:cut]:
        State.force = State.force_anywhere = True
        args = [a for a in args[:cut] if a != "--force"] + args[cut:]
    try:
        return _run(args)
    finally:
        State.force_anywhere = False


def _run(args: list[str]) -> int:
    """:func:`run` on the arguments left after ``--force`` was taken out."""
    import sys
    import warnings

    from typer.exceptions import TyperException

    from fdpkit.cli._common import describe_error, one_line

    with warnings.catch_warnings():
        # numeric edge cases are the library's business: it raises or returns a finite value
        warnings.simplefilter("ignore", RuntimeWarning)
        command = typer.main.get_command(app)
        _quiet_numerics(command)
        try:
            result = command.main(args, prog_name="fdpkit", standalone_mode=False)
        except (typer.Exit, SystemExit) as exc:
            code = getattr(exc, "exit_code", getattr(exc, "code", 0))
            return code if isinstance(code, int) else 2
        except (typer.Abort, KeyboardInterrupt):
            sys.stderr.write("error: interrupted\n")
            return 130
        except TyperException as exc:  # click's usage errors, vendored by typer
            if type(exc).__name__ == "NoArgsIsHelpError":
                sys.stdout.write(exc.ctx.get_help() + "\n")
                return 0
            message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            sys.stderr.write(f"error: {one_line(message)}\n")
            return 2
        except Exception as exc:  # noqa: BLE001 - the CLI's one error convention
            sys.stderr.write(f"error: {one_line(describe_error(exc))}\n")
            return 2
    return result if isinstance(result, int) else 0


def main() -> None:  # pragma: no cover - console entry point
    raise SystemExit(run())


__all__ = ["app", "main", "run"]
