"""A report carried to the ledger (session 9): the report's JSON is a mechanism spec for
``fdpkit ledger propose -m`` (and ``fdpkit report -m``), and where the ledger's figures
differ from the report's it says why (its coarser, pessimistic accounting grid)."""

import json
from html import unescape

from fastapi.testclient import TestClient
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit.cli import app
from fdpkit.ledger import GRID_NOTE, open_ledger
from fdpkit.ledger.users import add_user
from fdpkit.web.main import create_app

RUN = ["--noise-multiplier", "1.1", "--batch-size", "50", "--dataset-size", "1000", "--epochs", "2"]
PASSWORD = "s3cret-Passw0rd!"


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
    # its figures are the ledger's grid's, said so beside them
    assert "released total would become" in r.output and "PLD discretization 0.001" in " ".join(r.output.split())
    check = run("ledger", "--db", ledger_url, "check", "mnist", "-m", saved)
    assert "PLD discretization 0.001" in " ".join(check.output.split())
    exact = run("ledger", "--db", ledger_url, "check", "mnist", "--gaussian", "3")  # nothing proposed is released
    assert exact.exit_code == 0 and "PLD discretization" not in exact.output


def test_text_report_names_its_ledger_command(tmp_path):
    # the text report ended at `fdpkit risk` and `convert` (the web report has "Propose this release"): to
    # record the run the user re-typed it into `fdpkit ledger propose`, or re-ran the report as JSON
    import shlex

    text = run("report", "dpsgd", *RUN, "--sampling", "shuffled", "--relation", "zero-out", "--discretization", "1e-3")
    assert text.exit_code == 0, text.output
    line = [x for x in text.output.splitlines() if x.startswith("Record it: ")]
    assert len(line) == 1, text.output
    command = shlex.split(line[0][len("Record it: "):])
    assert command[:4] == ["fdpkit", "ledger", "propose", "DATASET"]
    db = f"sqlite:///{tmp_path / 'l.sqlite'}"
    assert run("ledger", "--db", db, "init").exit_code == 0
    assert run("ledger", "--db", db, "dataset", "add", "mnist", "--unit", "example").exit_code == 0
    r = run("ledger", "--db", db, "propose", "mnist", *command[4:], "--user", "ana", "--format", "json")
    assert r.exit_code == 0, r.output
    reported = fp.dpsgd(1.1, batch_size=50, dataset_size=1000, epochs=2, sampling="shuffled", relation="zero-out")
    assert json.loads(r.stdout)["mechanism"] == reported.to_dict()  # the run the report accounted, relation included
    assert json.loads(r.stdout)["title"] == reported.label()


def test_ledger_pages_say_why_a_release_reads_above_its_report(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    with open_ledger(url) as led:
        led.add_dataset("mnist", unit="example", user="admin")
        add_user(led, "val", role="viewer", password=PASSWORD, actor="admin")
        spec = fp.dpsgd(noise_multiplier=1.1, batch_size=50, dataset_size=1000, epochs=2).to_dict()
        run_id = led.propose("mnist", spec, title="model", user="ana").id
        gauss_id = led.propose("mnist", {"kind": "gaussian", "sigma": 3.0}, title="counts", user="ana").id
    c = TestClient(create_app(ledger_url=url))
    assert c.post("/api/ledger/login", json={"username": "val", "password": PASSWORD}).status_code == 200
    page = c.get(f"/ledger/r/{run_id}").text
    assert 'id="grid-note"' in page and GRID_NOTE in unescape(page)
    assert 'id="grid-note"' not in c.get(f"/ledger/r/{gauss_id}").text  # exact: nothing to explain
    assert 'id="grid-note"' in c.get("/ledger/d/mnist").text  # beside the releases' "ε alone"


def _ledger_with_analyst(tmp_path, dataset: str, unit: str):
    """(url, web client) of a new SQLite ledger with ``dataset`` and the analyst "ana"."""
    url = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    with open_ledger(url) as led:
        led.add_dataset(dataset, unit=unit, user="admin")
        add_user(led, "ana", role="analyst", password=PASSWORD, actor="admin")
    return url, TestClient(create_app(ledger_url=url))


def test_calculator_answer_proposes_its_noise_to_the_ledger(tmp_path):
    # the Calculator answered "exact sigma 4.225" for a census budget (ε 1, δ 1e-6) but, unlike the Report,
    # Calibrate and Plan pages, had no "Propose this release": the σ was copied into the ledger by hand
    import re
    from urllib.parse import urlencode

    url, c = _ledger_with_analyst(tmp_path, "census", "one person")
    page = c.get("/calculator", params={"mode": "gaussian", "sensitivity": "1", "epsilon": "1", "delta": "1e-6"}).text
    shown = re.sub(r"<[^>]+>", "", re.search(r'data-name="exact sigma \(Gaussian DP\)">(.*?)</td>', page).group(1))
    spec = json.loads(unescape(re.search(r'name="mechanism" value="([^"]*)"', page).group(1)))
    assert spec == {"kind": "gaussian", "sigma": float(shown), "sensitivity": 1.0} and shown == "4.225"
    # the printed σ is rounded up: the release it proposes still meets the budget
    assert fp.delta_for_epsilon_from_mu(1 / spec["sigma"], 1.0) <= 1e-6
    assert c.post("/api/ledger/login", json={"username": "ana", "password": PASSWORD}).status_code == 200
    form = c.get("/ledger/propose?" + urlencode({"mechanism": json.dumps(spec), "from": "calculator",
                                                 "title": "Gaussian noise release"}))
    assert form.status_code == 200 and "your <strong>Calculator</strong> result" in form.text
    with open_ledger(url) as led:
        r = led.propose("census", spec, title="counts", user="ana")
        assert led.release_info(r.id).gaussian_mu == 1 / 4.225
    laplace = c.get("/calculator", params={"mode": "laplace", "sensitivity": "1", "epsilon": "0.5"}).text
    assert json.loads(unescape(re.search(r'name="mechanism" value="([^"]*)"', laplace).group(1))) == {
        "kind": "laplace", "scale": 2.0, "sensitivity": 1.0}
    composed = c.get("/calculator", params={"mode": "composition", "epsilon": "0.2", "delta": "0", "k": "50"}).text
    assert 'id="propose-release"' not in composed  # several releases: each is proposed on its own


def test_report_proposes_its_run_under_the_runs_name_and_the_forms_name_the_calculator(tmp_path):
    # the Report page's "Propose this release" titled the release "Privacy report: DP-SGD (...)" (the
    # document's title, not the release's), and the ledger's forms listed Plan, Report and Calibrate as the
    # pages that fill them in, not the Calculator, which now proposes too
    import re

    url, c = _ledger_with_analyst(tmp_path, "mnist", "example")
    page = c.get("/report", params={"kind": "dpsgd", "noise_multiplier": "1.1", "batch_size": "50",
                                    "dataset_size": "1000", "epochs": "2", "discretization": "1e-2"}).text
    title = unescape(re.search(r'id="propose-bridge">.*?name="title" value="([^"]*)"', page, re.S).group(1))
    assert title == fp.dpsgd(1.1, batch_size=50, dataset_size=1000, epochs=2).label()
    assert c.post("/api/ledger/login", json={"username": "ana", "password": PASSWORD}).status_code == 200
    for path in ("/ledger/d/mnist", "/ledger/propose"):
        assert '<a href="/calculator">Calculator</a>' in c.get(path).text, path
