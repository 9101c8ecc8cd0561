"""Exit codes as the docs state them: 2 for bad input only, 1 where a command was asked to check
something and found it (``fdpkit ledger verify``: a broken chain, an anchor not in it, a
finding; ``audit --fail-on-violation``). ``verify``'s exit 1 on findings was in its ``--help``
but not in the command-line guide, which named exit 2 alone; the ledger guide named only "the
first broken event"."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from fdpkit.cli import app

DOCS = Path(__file__).resolve().parents[2] / "docs" / "guide"


def _run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_verify_exits_as_its_help_says(tmp_path):
    db = str(tmp_path / "l.sqlite")
    assert _run("ledger", "--db", db, "init").exit_code == 0
    assert _run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person").exit_code == 0
    head = _run("ledger", "--db", db, "head").stdout.strip()
    assert _run("ledger", "--db", db, "verify", "--anchor", head).exit_code == 0
    assert _run("ledger", "--db", db, "verify", "--anchor", "5:" + head.split(":")[1]).exit_code == 1  # not in it
    assert _run("ledger", "--db", db, "verify", "--anchor", "5:" + head.split(":")[1], "-f", "json").exit_code == 1
    r = _run("ledger", "--db", db, "verify", "--anchor", "junk")  # bad input, named as typed (was "anchor must ...")
    assert r.exit_code == 2 and r.stderr == ("error: --anchor must be SEQ:HASH (a whole number >= 0 and 64 hex "
                                             "digits), got 'junk'\n")
    assert _run("ledger", "--db", str(tmp_path / "none.sqlite"), "verify").exit_code == 2
    text = " ".join(_run("ledger", "verify", "--help").stdout.split())
    assert "exit 0 when intact, 1 with the first broken event" in text and "or with one finding" in text
    assert "Exit 2 is bad input only" in text


def test_the_guides_state_the_exit_codes():
    cli = " ".join((DOCS / "cli.md").read_text(encoding="utf-8").split())
    assert "Bad input exits with code 2" in cli
    assert re.search(r"1 only where a command was asked to check something and found it: `fdpkit ledger verify` "
                     r"\(a broken chain, an `--anchor` not in it, or a finding", cli)
    assert "`fdpkit audit --fail-on-violation`" in cli
    ledger = (DOCS / "ledger.md").read_text(encoding="utf-8")
    assert "verify --anchor 7:3f9c...   # exit 1: the first broken event, or a finding" in ledger
