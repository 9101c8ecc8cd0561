"""``fdpkit <command> --help`` reads well in an 80-column terminal (every command).

With typer's rich panels the option table shrank every column to fit: at ``COLUMNS=80``
``fdpkit plan --help`` printed ``--max-relative-lo…`` and ``--high-confidence…``, kept the
docstrings' source line breaks, and swallowed ``[default: 0.05]`` as markup. The CLI now uses
click's plain layout (``fdpkit.cli._common.command_group``).
"""

import re

import pytest
import typer
from typer.testing import CliRunner

from fdpkit.cli import app
from fdpkit.cli._common import summary

WIDTH = 80


def _commands(command, path=()):
    yield path, command
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def _help(path, columns=WIDTH):
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(columns)})
    assert res.exit_code == 0, res.output
    return res.output


def test_every_command_is_checked():
    assert len(COMMANDS) > 40
    assert ("plan",) in [p for p, _ in COMMANDS] and ("ledger", "propose") in [p for p, _ in COMMANDS]


@pytest.mark.parametrize("path, command", COMMANDS, ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_help_at_80_columns_shows_every_option_name_whole(path, command):
    text = _help(path)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH, [line for line in lines if len(line) > WIDTH]
    assert "…" not in text
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        for name in (*param.opts, *getattr(param, "secondary_opts", ())):
            if name.startswith("-"):
                assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (path, name, text)
    # wrapped text never breaks a hyphenated word (--batch-size, add-remove) across two lines
    assert not [line for line in lines if re.search(r"[A-Za-z]-$", line)], text


def test_every_option_and_argument_says_what_it_is():
    # 36 options (plan --effect/--n/--sd, report approx-dp --epsilon/--delta, --format of the small
    # results, ...) and the ledger's release ID were listed with a type and nothing else
    bare = [f"{' '.join(path)} {param.opts[0]}" for path, command in COMMANDS for param in command.params
            if not getattr(param, "hidden", False) and not getattr(param, "help", None)]
    assert not bare, bare


def test_plan_help_at_80_columns():
    text = _help(("plan",))
    for name in ("--max-relative-loss", "--max-relative-risk", "--high-confidence-ok", "--bounded-confidence"):
        assert name in text
    assert "[default: 0.05]" in " ".join(text.split())  # written in the help text, not eaten as markup


@pytest.mark.parametrize("path, command", [(p, c) for p, c in COMMANDS if getattr(c, "commands", None)],
                         ids=lambda x: " ".join(x) or "fdpkit" if isinstance(x, tuple) else "")
def test_groups_list_each_command_with_its_whole_summary(path, command):
    flat = " ".join(_help(path).split())
    for name, sub in command.commands.items():
        if not sub.hidden:
            assert f"{name} {summary(sub)}" in flat, (name, summary(sub))


def test_summary_is_the_first_paragraph_on_one_line():
    cmd = typer.main.get_command(app).commands["ledger"].commands["release"]
    assert summary(cmd).startswith("Release an approved release (refused beyond the hard limit without --override")
    assert "\n" not in summary(cmd)


# ---------------------------------------------------------------- ledger propose / check
def _option_lines(text, first, last):
    """The lines of a help text from option ``first`` up to (not including) option ``last``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(first))
    end = next(i for i, line in enumerate(lines) if line.lstrip().startswith(last))
    return lines[start:end]


def test_propose_and_check_share_the_dpsgd_options():
    from fdpkit.cli.ledger_input import DPSGD_OPTIONS, DPSGD_PARAMETERS

    ledger = typer.main.get_command(app).commands["ledger"].commands
    release = ["name", "mechanism", "spec", "gaussian", "laplace", *DPSGD_OPTIONS]
    assert [p.name for p in ledger["propose"].params] == [*release, "title", "purpose", "user", "db", "format",
                                                          "from_opacus"]
    assert [p.name for p in ledger["check"].params] == [*release, "db", "format", "from_opacus"]
    assert len(DPSGD_PARAMETERS) == 14
    for command in ("propose", "check"):  # each option as declared once (flag, help, default)
        params = {p.name: p for p in ledger[command].params}
        for name, _, option in DPSGD_PARAMETERS:
            assert params[name].opts == list(option.param_decls) and params[name].help == option.help
            assert params[name].default == option.default
    # the same lines in both --help texts, between --laplace and the next option
    for columns in (80, 200):
        propose = _option_lines(_help(("ledger", "propose"), columns), "--laplace", "--title")
        check = _option_lines(_help(("ledger", "check"), columns), "--laplace", "--db")
        assert propose == check and any("--noise-multiplier" in line for line in propose)
        assert any("--drop-last" in line for line in propose)


def test_every_command_group_is_made_by_command_group():
    # a typer.Typer(...) of its own would bring back rich's panels (and their cut names) for its commands
    from pathlib import Path

    import fdpkit.cli

    cli = Path(fdpkit.cli.__file__).parent
    direct = [p.name for p in sorted(cli.glob("*.py")) if p.name != "_common.py" and "typer.Typer(" in p.read_text()]
    assert not direct
    groups = [c for _, c in COMMANDS if getattr(c, "commands", None) is not None]
    assert len(groups) >= 9 and all(getattr(g, "rich_markup_mode", "rich") is None for g in groups)
