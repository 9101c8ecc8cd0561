"""Shared plumbing of the ``fdpkit`` command line: error conventions (exit code 2 and one
readable line), spinners, small-result output, spec files. No maths here."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.table import Table as RichTable

from fdpkit._numerics import json_safe
from fdpkit.report.model import fmt as fmt_num

out = Console()
err = Console(stderr=True)
FORMATS = ("text", "json", "csv", "md", "html", "pdf")


class State:
    quiet = False


def fail(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    raise typer.Exit(2)


def guarded(fn: Callable) -> Callable:
    """Turn library ValueErrors (and missing files) into exit code 2 with one line."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any):
        try:
            return fn(*args, **kwargs)
        except (ValueError, OSError) as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    return wrapper


@contextlib.contextmanager
def working(message: str):
    """A rich spinner on stderr for anything that may take more than a second."""
    if State.quiet or not err.is_terminal:
        yield
        return
    with err.status(message, spinner="dots"):
        yield


def emit(payload: dict, fmt: str, output: Optional[Path], text: Callable[[], None]) -> None:
    """Print or write a small result (convert/risk/calibrate) as text or JSON."""
    if fmt == "json":
        data = json.dumps(json_safe(payload), indent=2, allow_nan=False) + "\n"
        if output:
            from fdpkit.report import write_atomic

            write_atomic(output, data.encode())
        else:
            sys.stdout.write(data)
        return
    if fmt != "text":
        fail(f"--format must be text or json for this command, got {fmt!r}")
    text()


def fraction_option(value: Any, name: str) -> Optional[float]:
    """A probability option given as 0.05 or 5% (None stays None); bad text -> exit 2."""
    if value is None:
        return None
    from fdpkit.plausibility import parse_fraction

    return parse_fraction(value, name)


def load_spec(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # pragma: no cover - Python 3.10
            fail("TOML mechanism specs need Python 3.11 or newer; use JSON")
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"mechanism spec is not valid TOML: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"mechanism spec is not valid JSON: {exc}") from None


def kv(title: str, rows: dict) -> None:
    table = RichTable(title=title, title_justify="left")
    table.add_column("")
    table.add_column("value")
    for k, v in rows.items():
        table.add_row(k, fmt_num(v))
    out.print(table)


FormatOpt = typer.Option("text", "--format", "-f", help="text, json, csv, md, html or pdf.")
OutputOpt = typer.Option(None, "--output", "-o", help="Write to this file (atomically).")
DiscOpt = typer.Option(1e-4, "--discretization", help="PLD discretization interval.")
