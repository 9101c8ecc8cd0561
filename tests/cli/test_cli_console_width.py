"""The CLI's tables are as wide as the test asks (``CliRunner().invoke(..., env={"COLUMNS": ...})``)
in every process of the suite, whatever ran before and whichever worker runs the test.

Under ``make test`` (``pytest -n 2``) two table tests found the console 80 columns wide: pytest
imports readline, GNU readline exports COLUMNS=80 and LINES=24 into the C environment, the
xdist workers inherited them, and ``fdpkit.cli._common.out`` (a rich console built at import)
kept 80 columns for the whole run. tests/conftest.py drops them; these tests fail without it
(the first two in the parallel run, the last in any run)."""

import os
import subprocess
import sys

from typer.testing import CliRunner

from fdpkit.cli import _common, app

#: a risk table whose rows are longer than 80 columns
ARGS = ["risk", "--mu", "1", "--mu-fpr-min", "0.4", "--mu-tau", "1e-3", "--fpr", "1e-3"]


def _table_width(columns: str) -> int:
    res = CliRunner().invoke(app, ARGS, env={"COLUMNS": columns})
    assert res.exit_code == 0, res.output
    return max(len(line) for line in res.output.splitlines() if line.startswith(("┏", "└")))


def test_the_cli_console_keeps_no_width_of_its_own():
    # built at import with COLUMNS=80 in the environment, the console fixed its size for good
    assert (_common.out._width, _common.out._height) == (None, None)
    assert (_common.err._width, _common.err._height) == (None, None)


def test_the_table_takes_the_width_each_invocation_asks_for_and_gives_it_back():
    assert _table_width("200") > 80
    assert _table_width("80") == 80
    assert _table_width("200") > 80  # not narrowed by the 80-column run before it
    assert "COLUMNS" not in os.environ  # CliRunner restored the environment


def test_no_process_the_tests_start_inherits_a_terminal_size():
    # readline's setenv is invisible to os.environ but not to child processes (the xdist workers,
    # `fdpkit serve`, the CLI in a subprocess)
    probe = "import os; print(os.environ.get('COLUMNS'), os.environ.get('LINES'))"
    env_out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert env_out.split() == ["None", "None"]
