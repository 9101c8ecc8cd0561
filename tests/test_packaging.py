"""The wheel: builds with `pip wheel .`, ships py.typed, installs lean.

A clean virtual environment with the wheel and no extras runs the headline report and
has no psycopg; neither `[ledger]` (SQLite only) nor the core requires psycopg, only
`[postgres]` does (and never the binary build). Slow: it builds a wheel and a venv
(pip's cache makes the second run fast).
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow
HEADLINE = ("import fdpkit as fp; "
            "r = fp.privacy_report(fp.dpsgd(noise_multiplier=9.4, sample_rate=0.32768, steps=2000)); "
            "print(round(r.mu, 3), round(r.epsilon_for_delta(1e-5), 2)); print(r.statement()[:20]); print(r)")


def _run(*cmd, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    proc = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, env=env, timeout=900, **kw)
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    src = tmp_path_factory.mktemp("source") / "fdpkit"  # build from a copy: no build/ or egg-info here
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "site", "out", "build", "dist", "benchmarks", "tests", "docs", "*.egg-info",
        "__pycache__", ".*cache*", ".hypothesis"))
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, src)
    (whl,) = out.glob("fdpkit-*.whl")
    return whl


def _requires(whl: Path) -> list[str]:
    with zipfile.ZipFile(whl) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return [line.split(":", 1)[1].strip() for line in z.read(meta).decode().splitlines()
                if line.startswith("Requires-Dist:")]


def test_wheel_ships_py_typed_and_package_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "fdpkit/py.typed" in names
    assert any(n.startswith("fdpkit/ledger/migrations/versions/") for n in names)
    assert any(n.startswith("fdpkit/web/templates/") for n in names)


def test_wheel_metadata_keeps_psycopg_out_of_core_and_ledger(wheel):
    reqs = _requires(wheel)
    psycopg = [r for r in reqs if r.lower().startswith("psycopg")]
    assert psycopg and all('extra == "postgres"' in r for r in psycopg), psycopg
    assert not any("binary" in r for r in psycopg), psycopg
    assert any(r.startswith("dp-accounting") and "<0.7" in r and ">=0.6" in r for r in reqs), reqs
    assert any(r.startswith("platformdirs") for r in reqs)


def test_clean_venv_without_extras_runs_the_headline_report(wheel, tmp_path):
    venv = tmp_path / "venv"
    # No pip of its own (ensurepip costs ~5 CPU s): this interpreter's pip installs into and
    # lists the venv (``pip --python``); the venv holds the wheel and its dependencies only.
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    py = venv / "bin" / "python"
    pip = (sys.executable, "-m", "pip", "--python", py, "--disable-pip-version-check")
    _run(*pip, "install", "-q", wheel)
    installed = {d["name"].lower() for d in json.loads(_run(*pip, "list", "--format", "json"))}
    assert not {"psycopg", "psycopg-binary", "psycopg-c"} & installed, installed
    assert not {"sqlalchemy", "matplotlib", "fastapi"} & installed, installed  # extras stay extras
    out = _run(py, "-c", HEADLINE, cwd=tmp_path).splitlines()
    assert out[0] == "1.567 7.42", out
    assert out[1] == "We train with DP-SGD"
    assert "mu=1.567" in out[2]


def test_ledger_extra_resolves_without_psycopg(wheel, tmp_path):
    report = tmp_path / "report.json"
    _run(sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed",
         "--disable-pip-version-check", "--report", report, f"fdpkit[ledger] @ {wheel.as_uri()}")
    names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert "sqlalchemy" in names and "fdpkit" in names
    assert not {"psycopg", "psycopg-binary", "psycopg-c"} & names, names
