"""``fdpkit --help`` (at every level) and ``--version`` import no maths (issue 30).

The checks run the command line in a fresh subprocess and read its ``sys.modules``: a CLI
module that imports the library at its top again (``from fdpkit.report.model import fmt``)
fails here instead of making every ``--help`` take two seconds.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import fdpkit

SRC = Path(fdpkit.__file__).resolve().parent.parent

#: Modules no ``--help`` or ``--version`` may load.
MATHS = ("numpy", "scipy", "dp_accounting", "matplotlib", "sqlalchemy", "dask", "distributed",
         "pyarrow", "fastapi", "uvicorn", "fpdf")

#: Seconds allowed for one subprocess (generous: the machine may be busy).
SUBPROCESS_TIMEOUT = 180

#: Every command path of the CLI with ``--help`` appended, then ``--version``; runs them all in
#: one process and prints the exit codes and the maths modules loaded.
SCRIPT = """
import contextlib, io, json, sys
from fdpkit.cli import app, run
import typer

def paths(command, prefix):
    yield prefix
    for name, sub in getattr(command, "commands", {}).items():
        yield from paths(sub, prefix + [name])

argvs = [p + ["--help"] for p in paths(typer.main.get_command(app), [])] + [["--version"]]
codes, outputs = {}, {}
for argv in argvs:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        codes[" ".join(argv)] = run(argv)
    outputs[" ".join(argv)] = buf.getvalue()
print(json.dumps({"codes": codes, "outputs": outputs,
                  "loaded": [m for m in %r if m in sys.modules]}))
"""


def _run_script(script: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "120"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=SUBPROCESS_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_help_at_every_level_and_version_import_no_maths():
    got = _run_script(SCRIPT % (MATHS,))
    codes = got["codes"]
    assert len(codes) > 40  # every group and command, not just the top
    assert all(code == 0 for code in codes.values()), {k: v for k, v in codes.items() if v}
    assert got["loaded"] == [], f"--help/--version loaded {got['loaded']}"
    assert "report" in got["outputs"]["--help"] and "--version" in got["outputs"]["--help"]
    assert "--sigma" in got["outputs"]["report gaussian --help"]
    assert got["outputs"]["--version"].strip() == f"fdpkit {fdpkit.__version__}"


def test_console_script_help_in_a_fresh_process():
    # exactly what the console script runs: fdpkit.cli:main
    script = ("import sys\nsys.argv = ['fdpkit', '--help']\nfrom fdpkit.cli import main\n"
              "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
              f"import json\nprint(json.dumps({{'code': code, 'loaded': [m for m in {MATHS!r} if m in sys.modules]}}))")
    got = _run_script(script)
    assert got == {"code": 0, "loaded": []}


def test_a_command_still_does_its_maths():
    # the names used by checks outside this repository
    script = ("import contextlib, io, json, sys\nfrom fdpkit.cli import run\nbuf = io.StringIO()\n"
              "with contextlib.redirect_stdout(buf):\n"
              "    code = run(['report', 'gaussian', '--sigma', '2', '--format', 'json'])\n"
              "print(json.dumps({'code': code, 'report': json.loads(buf.getvalue()),"
              " 'pld': 'dp_accounting' in sys.modules}))")
    got = _run_script(script)
    assert got["code"] == 0
    assert abs(got["report"]["guarantee"]["mu"] - 0.5) < 1e-9
    assert got["pld"] is False  # a Gaussian report is closed form: no PLD, no dp_accounting
