"""Shared plumbing of the ``fdpkit`` command line: the command groups and their help layout
(:func:`command_group`), error conventions (exit code 2 and one readable line), spinners,
small-result output, spec files, the options several commands share. No maths here."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from typer.core import TyperGroup
from rich.console import Console
from rich.table import Table as RichTable

from fdpkit.cli._option_words import in_option_words, option_flags

# No fdpkit maths at import: ``fdpkit --help`` (every level) stays as fast as typer itself.
# Commands import what they need when they run (tests/cli/test_cli_startup.py checks it).

out = Console()
err = Console(stderr=True)
FORMATS = ("text", "json", "csv", "md", "html", "pdf")


#: Largest mechanism spec file read (bytes); anything longer is refused unread.
MAX_SPEC_BYTES = 1_000_000
#: Largest score or counts file read (bytes): 10^7 scores (the CLI's limit) at up to about 100
#: bytes a line. A file is read in chunks up to it, so /dev/zero or an endless pipe fails fast.
MAX_TABLE_BYTES = 1 << 30
#: Largest Opacus accountant or checkpoint file read (bytes): a checkpoint carries the model.
MAX_STATE_BYTES = 4 << 30


def cli_budget():
    """The cost budget the CLI sets on accounting (fdpkit.accounting.estimate_cost): larger
    than the web's, still well inside a workstation's memory."""
    from fdpkit.accounting import CostBudget

    return CostBudget(max_grid_points=50_000_000, max_work=2e10, max_memory_bytes=4 * 1024**3)


def json_safe(value: Any) -> Any:
    """:func:`fdpkit._numerics.json_safe`, imported when first called."""
    from fdpkit._numerics import json_safe as _json_safe

    return _json_safe(value)


def fmt_num(value: Any, digits: int = 4, *, up: bool | None = None) -> str:
    """:func:`fdpkit.report.model.fmt` (a number as the reports print it; ``up=True`` an upper
    bound's last digit rounded up, ``up=False`` a lower bound's down), imported when first called."""
    from fdpkit.report.model import fmt

    return fmt(value, digits, up=up)


def mechanism_from_dict(data: Any) -> Any:
    """:func:`fdpkit.mechanisms.mechanism_from_dict`, imported when first called."""
    from fdpkit.mechanisms import mechanism_from_dict as _from_dict

    return _from_dict(data)


class State:
    quiet = False
    #: ``--force``: overwrite an existing output file (set per invocation by the app's callback)
    force = False
    #: ``--force`` found anywhere on the command line by :func:`fdpkit.cli.run` (which removes
    #: it before parsing), for the duration of that run only
    force_anywhere = False


def one_line(message: str) -> str:
    """A message as one readable line (newlines folded, length capped)."""
    text = " ".join(str(message).split())
    return text if len(text) <= 500 else text[:497] + "..."


def fail(message: str) -> None:
    sys.stderr.write(f"error: {one_line(message)}\n")
    raise typer.Exit(2)


def describe_error(exc: BaseException) -> str:
    """One line for any exception: the library's own message for ValueErrors, a plain
    description otherwise (never a traceback)."""
    if isinstance(exc, MemoryError):
        return "out of memory: use a coarser --discretization or fewer steps"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply"
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}"
    text = str(exc)
    if isinstance(exc, ValueError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def quiet_numerics(fn: Callable) -> Callable:
    """``fn`` under ``np.errstate(all="ignore")`` (numeric edge cases are the library's
    business: it raises or returns a finite value), importing NumPy only when ``fn`` runs, and
    not at all for a group callback that passes on to a subcommand (its ``ctx`` says so)."""
    if getattr(fn, "_fdpkit_quiet", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any):
        if getattr(kwargs.get("ctx"), "invoked_subcommand", None) is not None:
            return fn(*args, **kwargs)
        import numpy as np

        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    wrapper._fdpkit_quiet = True  # type: ignore[attr-defined]
    return wrapper


def guarded(fn: Optional[Callable] = None, *, names: Optional[dict[str, str]] = None) -> Any:
    """Turn every error of a command (library ValueErrors, files, overflow, memory) into
    exit code 2 with one line on stderr, in the command's own words (:func:`in_option_words`);
    typer's own exits pass through. The command runs under :func:`quiet_numerics`.
    ``@guarded(names={"rho": "zcdp"})``: the library's argument ``rho`` is the command's
    parameter ``zcdp`` (its option ``--zcdp``)."""
    if fn is None:
        return functools.partial(guarded, names=names)
    inner = quiet_numerics(fn)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any):
        try:
            return inner(*args, **kwargs)
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - the CLI's one error convention
            fail(in_option_words(option_flags(fn, names), exc, describe_error(exc)))

    return wrapper


def _check_target(target: Path, option: str = "--output") -> None:
    """Refuse directories and existing non-regular files (devices, FIFOs, sockets), and an
    existing file unless ``--force``; errors name ``option``."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ValueError(f"{option} {target}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{option} {target} is a directory; give a file name")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{option} {target} exists and is not a regular file (a device, pipe or socket); "
                         "give another file name")
    if not State.force:
        raise ValueError(f"{option} {target} already exists; add --force to overwrite it")


def check_output(path: Path | str, option: str = "--output", suffixes: Optional[tuple[str, ...]] = None) -> Path:
    """Check a user's output path before any work, as :func:`write_output` checks it again
    when it writes: a file name ending in one of ``suffixes`` (when given, without the dot),
    in an existing folder, not a directory or device, and not an existing file unless
    ``--force``.

    Parameters
    ----------
    path : path
        The file the user named.
    option : str
        The option that named it (``--output``, ``--plot``); every error starts with it.
    suffixes : tuple of str, optional
        The file types the command writes (``("svg", "png", "pdf")``).

    Returns
    -------
    Path
        The path, unchanged.

    Raises
    ------
    ValueError
        One line naming ``option`` and the path.
    """
    target = Path(path)
    if suffixes is not None and target.suffix.lower().lstrip(".") not in suffixes:
        names = [f".{s}" for s in suffixes]
        kinds = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        raise ValueError(f"{option} must end in {kinds}, got {str(target)!r}")
    _check_target(target, option)
    if not target.parent.is_dir():
        raise ValueError(f"{option} {target}: the folder {target.parent} does not exist")
    return target


def check_distinct(*outputs: tuple[Optional[Path], str]) -> None:
    """Refuse two options naming one file (``--members-out s.csv --nonmembers-out s.csv``): the
    first was written, then the second refused as existing, so a failed command left a file.
    ``outputs`` are (path or None, option) pairs; a ValueError names both options."""
    seen: dict[str, str] = {}
    for path, option in outputs:
        if path is None:
            continue
        key = os.path.normcase(os.path.realpath(path))
        if key in seen:
            raise ValueError(f"{seen[key]} and {option} name the same file {str(path)!r}; give each its own file")
        seen[key] = option


def write_output(path: Path | str, data: bytes, option: str = "--output") -> Path:
    """Write ``data`` to the user's ``--output`` path safely: checks of :func:`check_output`,
    then a temporary file (short name, same folder) renamed over the target. Errors name
    ``option`` and the target, never the temporary file."""
    target = check_output(path, option)
    parent = target.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=".fdpkit-", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise ValueError(f"cannot write {option} {target}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())  # on disk before the rename, as fdpkit.report.write_atomic
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        _check_target(target, option)  # again, just before the rename
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ValueError(f"cannot write {option} {target}: {exc.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    # function-level: the CLI imports no report code before a command runs (tests/cli/test_cli_startup.py)
    from fdpkit.report.render import sync_folder

    sync_folder(parent)  # the rename too
    return target


def read_input_text(path: Path, option: str, *, hint: str = "", encoding: str = "utf-8") -> str:
    """The text of the file an ``option`` names, reading at most :data:`MAX_SPEC_BYTES`
    (``/dev/zero`` fails fast); a directory, an unreadable file, a larger one or one that is
    not UTF-8 is a ValueError naming the option."""
    try:
        with open(path, "rb") as fh:
            if stat.S_ISDIR(os.fstat(fh.fileno()).st_mode):
                raise ValueError(f"{option} {path} is a directory")
            raw = fh.read(MAX_SPEC_BYTES + 1)
    except IsADirectoryError:
        raise ValueError(f"{option} {path} is a directory") from None
    except OSError as exc:
        raise ValueError(f"{option} {path}: {exc.strerror}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise ValueError(f"{option} {path} is larger than {MAX_SPEC_BYTES:,} bytes{hint}")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError:
        raise ValueError(f"{option} {path} is not UTF-8 text") from None


def read_input_bytes(path: Path, name: str, *, limit: int = MAX_TABLE_BYTES, text: bool = True) -> bytes:
    """The bytes of the file ``path`` (a regular file or a pipe: ``<(cut -f2 scores.tsv)``), read
    in 1 MiB chunks and refused as soon as it passes ``limit`` bytes or, with ``text``, holds a
    NUL byte: ``--members /dev/zero`` read 6 GB in 8 s before this. Errors are ValueErrors whose
    message starts with ``name``."""
    chunks, total = [], 0
    try:
        with open(path, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise ValueError(f"{name} is a directory")
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # /dev/zero, /dev/urandom, a disk: no file of data
                raise ValueError(f"{name} is a device, not a file")
            while chunk := fh.read(1 << 20):
                if text and b"\x00" in chunk:
                    raise ValueError(f"{name} is not a text CSV file (it contains NUL bytes)")
                total += len(chunk)
                if total > limit:
                    raise ValueError(f"{name} is larger than {limit:,} bytes")
                chunks.append(chunk)
    except IsADirectoryError:
        raise ValueError(f"{name} is a directory") from None
    except OSError as exc:
        raise ValueError(f"{name}: {exc.strerror or exc}") from None
    return b"".join(chunks)


def read_spec_text(path: Path) -> str:
    """A spec file's text, reading at most :data:`MAX_SPEC_BYTES` (``/dev/zero`` fails fast)."""
    return read_input_text(path, "--mechanism", hint="; is it a mechanism spec?", encoding="utf-8-sig")


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
            write_output(output, data.encode())
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
    from fdpkit._inputs import parse_fraction

    return parse_fraction(value, name)  # plain decimal numbers only (not "1_000")


#: The deprecated ``--alpha`` option of the commands that take a test's level (issue 23: alpha
#: is the FPR; the level is ``--level``): hidden from ``--help``, still accepted.
AlphaOpt = typer.Option(None, "--alpha", hidden=True, help="Deprecated: use --level.")


#: The warning of the deprecated ``--alpha``.
ALPHA_DEPRECATED = "--alpha is deprecated and will be removed in the next minor version; use --level"


def level_option(level: Any, alpha: Any, warnings: Optional[list[str]] = None) -> Any:
    """``--level``, or the deprecated ``--alpha`` (with a warning on stderr, also appended to
    ``warnings`` for ``--format json``); both -> exit 2."""
    if alpha is None:
        return level
    if level is not None:
        fail("give --level (or its deprecated name --alpha), not both")
    err.print(f"warning: {ALPHA_DEPRECATED}", highlight=False, soft_wrap=True)
    if warnings is not None:
        warnings.append(ALPHA_DEPRECATED)
    return alpha


def load_points(path: Path, bound: str = "lower") -> Any:
    """A curve from a CSV of (FPR, FNR) error points (:func:`fdpkit.curve_from_points`;
    header ``fpr,fnr`` or R fdp's ``alpha,beta``)."""
    from fdpkit.curves.points import curve_from_points, points_from_csv

    fpr, fnr = points_from_csv(read_input_text(path, "--points", encoding="utf-8-sig"))
    return curve_from_points(fpr, fnr, bound=bound)


def load_spec(path: Path) -> dict:
    text = read_spec_text(path)
    if path.suffix.lower() == ".toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # pragma: no cover - Python 3.10
            fail("TOML mechanism specs need Python 3.11 or newer; use JSON")
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"mechanism spec is not valid TOML: {exc}") from None
    from fdpkit._inputs import load_json

    return load_json(text, "mechanism spec", parameter="mechanism")


def saved_delta(data: Any) -> Optional[float]:
    """The δ a saved result leads with, for whatever reads it again (``fdpkit report -m``,
    ``fdpkit ledger propose/check -m``): a calibration's (``fdpkit calibrate -f json``, its target's
    or reported ε's ``delta``) or a report's headline δ (the first of its ``epsilon_at_delta``).
    None for a plain mechanism spec, or where the file gives none."""
    if not isinstance(data, dict) or "kind" in data or not isinstance(data.get("mechanism"), dict):
        return None
    rows = data.get("epsilon_at_delta")
    value = data.get("delta") if "unknown" in data else rows[0].get("delta") if (
        isinstance(rows, list) and rows and isinstance(rows[0], dict)) else None
    try:
        d = float(value)
    except (TypeError, ValueError):
        return None
    return d if 0.0 < d < 1.0 else None


def kv(title: str, rows: dict, *, up: bool | None = None) -> None:
    """A two-column table of ``rows``; numbers through :func:`fmt_num` (``up=True``: every value
    is an upper bound, its last digit rounded up; ``False``: lower bounds, down)."""
    table = RichTable(title=title, title_justify="left")
    table.add_column("")
    table.add_column("value")
    for k, v in rows.items():
        table.add_row(k, fmt_num(v, up=up))
    out.print(table)


FormatOpt = typer.Option("text", "--format", "-f", help="text, json, csv, md, html or pdf.")
#: ``--format`` of the commands that print a small result (:func:`emit`).
ResultFormatOpt = typer.Option("text", "--format", "-f", help="text or json.")
OutputOpt = typer.Option(None, "--output", "-o", help="Write to this file (atomically).")
DiscOpt = typer.Option(None, "--discretization", show_default=False,
                       help="PLD discretization interval (default: the library's rule, as fdpkit.privacy_report "
                            "chooses it: 1e-4, finer where a DP-SGD run's steps are tiny, coarser up to 1e-3 where "
                            "they are so large that mu changes by an estimated 1e-6; stated in the report).")


#: What each number type of an option may be written as: a plain decimal number for floats
#: (:func:`fdpkit._inputs.is_plain_number`), ASCII digits with an optional sign for ints.
_PLAIN = {"float": ("a plain decimal number (such as 2, 0.5 or 1e-3)", None),
          "int": ("a whole number written with the digits 0-9", re.compile(r"[+-]?[0-9]+", re.ASCII))}


def _plain_kind(annotation: Any) -> Optional[str]:
    """"float" or "int" for an option typed float, int or a list of them; None otherwise."""
    if annotation in (float, list[float]):
        return "float"
    if annotation in (int, list[int]):
        return "int"
    return None


def plain_numbers(command: Any) -> None:
    """Let every float and int option and argument of the click tree under ``command`` read only
    plain numbers: typer converts with ``float`` and ``int``, which also take ``1_000`` and other
    scripts' digits (``١``), refused by the score files too. In place (each parameter's
    ``process_value`` checks the text first, once); run on the tree the app builds before it parses."""
    from fdpkit._inputs import beyond_floats, is_plain_number

    for param in getattr(command, "params", ()):
        descriptor = getattr(param, "type_descriptor", None)
        kind = _plain_kind(getattr(descriptor, "annotation", None))
        if kind is None or getattr(param.process_value, "_fdpkit_plain", False):
            continue
        what, pattern = _PLAIN[kind]

        def check(ctx: Any, value: Any, _param: Any = param, _what: str = what, _pattern: Any = pattern,
                  _process: Callable = param.process_value) -> Any:
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, str):
                    text = item.strip(" \t")
                    if not (_pattern.fullmatch(text) if _pattern is not None else is_plain_number(text)):
                        raise typer.BadParameter(f"{item!r} is not {_what}", ctx=ctx, param=_param)
                    why = beyond_floats(text)  # "1e-400" read as 0, "1e400" as inf
                    if why is not None:
                        raise typer.BadParameter(why, ctx=ctx, param=_param)
            return _process(ctx, value)

        check._fdpkit_plain = True  # type: ignore[attr-defined]
        param.process_value = check
    for sub in (getattr(command, "commands", None) or {}).values():
        plain_numbers(sub)


def summary(command: Any) -> str:
    """What a group's help lists for one of its commands: its ``short_help``, else the whole first
    paragraph of its help on one line (click would cut it to the terminal's width with "...")."""
    if command.short_help:
        return " ".join(command.short_help.split())
    text = (command.help or "").partition("\f")[0].strip()
    return " ".join(text.split("\n\n")[0].split())


#: U+2011 NON-BREAKING HYPHEN: stands in for "-" while :class:`HelpFormatter` wraps text.
_KEEP_HYPHEN = "\u2011"


def _keep_hyphens(text: str) -> str:
    return text.replace("-", _KEEP_HYPHEN)


#: click's help formatter, as the installed typer uses it (recent typers carry their own copy of click).
_ClickHelpFormatter: Any = typer.Context.formatter_class


class HelpFormatter(_ClickHelpFormatter):
    """click's help formatter, except that it never breaks a line at a hyphen: ``--batch-size``
    and ``add-remove`` stay whole in wrapped help text (click wraps with Python's textwrap,
    which breaks after any hyphen between letters)."""

    def write_text(self, text: str) -> None:
        super().write_text(_keep_hyphens(text))

    def write_dl(self, rows: Any, *args: Any, **kwargs: Any) -> None:
        super().write_dl([tuple(_keep_hyphens(cell) for cell in row) for row in rows], *args, **kwargs)

    def write(self, string: str) -> None:
        super().write(string.replace(_KEEP_HYPHEN, "-"))


class HelpContext(typer.Context):
    """The context of every command of this CLI: its help uses :class:`HelpFormatter`."""

    formatter_class = HelpFormatter


class HelpGroup(TyperGroup):
    """A command group whose ``--help`` reads well in an 80-column terminal: its commands listed
    with their :func:`summary`, wrapped to the width, and every command under it formatted by
    :class:`HelpFormatter`. The apps made by :func:`command_group` use it, with click's plain
    layout (``rich_markup_mode=None``)."""

    context_class = HelpContext

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            command.context_class = HelpContext
        return command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, summary(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def command_group(help: str, *, cls: type[TyperGroup] = HelpGroup, **kwargs: Any) -> typer.Typer:
    """The one way this CLI makes a typer app (the root and each command group).

    Its ``--help`` uses click's plain layout rather than rich's panels: rich's option table
    shrinks every column to fit, and at 80 columns it cut long option names
    (``--max-relative-lo…``), kept the source's line breaks and swallowed ``[default: ...]`` as
    markup; click's layout wraps the text to the terminal and puts a long option name on a line
    of its own (tests/cli/test_cli_help.py checks every command at ``COLUMNS=80``)."""
    return typer.Typer(help=help, cls=cls, rich_markup_mode=None, **kwargs)


class PlainNumbersGroup(HelpGroup):
    """The app's root group: :func:`plain_numbers` on its tree before every parse, whoever runs it
    (:func:`fdpkit.cli.run`, a test's CliRunner)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        plain_numbers(self)
        return super().main(*args, **kwargs)
