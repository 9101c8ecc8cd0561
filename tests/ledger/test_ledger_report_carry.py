"""A report carried to the ledger (session 9): the report's JSON is a mechanism spec for
``fdpkit ledger propose -m`` (and ``fdpkit report -m``)."""

import json

from typer.testing import CliRunner

import fdpkit as fp
from fdpkit.cli import app

RUN = ["--noise-multiplier", "1.1", "--batch-size", "50", "--dataset-size", "1000", "--epochs", "2"]


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_report_json_is_a_spec_for_the_ledger_and_the_report(ledger_url, tmp_path):
    saved = tmp_path / "report.json"
    assert run("--force", "report", "dpsgd", *RUN, "--discretization", "1e-3", "-f", "json", "-o", saved).exit_code == 0
    report = json.loads(saved.read_text())
    # the report's JSON was refused as a spec ("mechanism kind must be one of ..., got None"):
    # the run had to be re-typed as --noise-multiplier/--sample-rate/--steps
    assert fp.mechanism_from_dict(report).to_dict() == report["mechanism"]
    again = run("report", "-m", saved, "--discretization", "1e-3", "-f", "json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["guarantee"]["mu"] == report["guarantee"]["mu"]
    assert run("ledger", "--db", ledger_url, "init").exit_code == 0
    assert run("ledger", "--db", ledger_url, "dataset", "add", "mnist", "--unit", "example").exit_code == 0
    r = run("ledger", "--db", ledger_url, "propose", "mnist", "-m", saved, "--title", "model", "--user", "ana")
    assert r.exit_code == 0, r.output
