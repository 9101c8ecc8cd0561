"""A report carried to the ledger (session 9): the report's JSON is a mechanism spec for
``fdpkit ledger propose -m`` (and ``fdpkit report -m``), and where the ledger's figures
differ from the report's it says why (its coarser, pessimistic accounting grid)."""

import json
import re
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


def test_a_saved_calibration_keeps_its_delta_in_the_report_and_the_ledger(tmp_path):
    # calibrated to eps <= 2 at delta 2e-5 and saved as JSON: `fdpkit report -m` led with eps at 1e-5
    # (2.09) and `fdpkit ledger check/propose -m` read eps at 1e-5 only, so the target's delta was lost
    cal = tmp_path / "cal.json"
    made = run("calibrate", "dpsgd", "--epsilon", "2", "--delta", "2e-5", "--sample-rate", "0.01", "--steps", "300",
               "-f", "json", "-o", cal)
    assert made.exit_code == 0, made.output
    assert json.loads(cal.read_text())["delta"] == 2e-5
    report = run("report", "-m", cal, "-f", "json")
    assert report.exit_code == 0, report.output
    rows = json.loads(report.stdout)["epsilon_at_delta"]
    assert rows[0]["delta"] == 2e-5 and rows[0]["epsilon"] <= 2 and {r["delta"] for r in rows} >= {1e-5, 1e-6}
    assert "at δ = 2e-05" in run("report", "-m", cal).stdout.splitlines()[1 + 1]  # the summary line
    # --delta still wins; a saved report leads with its own headline delta too
    assert json.loads(run("report", "-m", cal, "--delta", "1e-6", "-f", "json").stdout)["epsilon_at_delta"][0]["delta"] == 1e-6
    saved = tmp_path / "report.json"
    assert run("report", "-m", cal, "-f", "json", "-o", saved).exit_code == 0
    assert json.loads(run("report", "-m", saved, "-f", "json").stdout)["epsilon_at_delta"][0]["delta"] == 2e-5
    db = f"sqlite:///{tmp_path / 'l.sqlite'}"
    assert run("ledger", "--db", db, "init").exit_code == 0
    assert run("ledger", "--db", db, "dataset", "add", "mnist", "--unit", "example").exit_code == 0
    check = run("ledger", "--db", db, "check", "mnist", "-m", cal)
    assert check.exit_code == 0 and "ε at δ = 2e-05" in check.stdout, check.output
    proposed = run("ledger", "--db", db, "propose", "mnist", "-m", cal, "--title", "model", "--user", "ana")
    assert proposed.exit_code == 0 and "at δ = 2e-05" in proposed.output, proposed.output
    # a plain spec names no delta: the table as before
    assert "ε at δ = 2e-05" not in run("ledger", "--db", db, "check", "mnist", "--gaussian", "3").stdout


def test_ledger_and_plan_show_epsilon_at_the_delta_of_the_budget(tmp_path):
    # a census budget of eps 1 at delta 1e-6: the ledger's status, check and propose read eps at 1e-5 only
    # (the hard limit's 1e-6 figure appeared only inside the alert), as did the plan
    db = f"sqlite:///{tmp_path / 'l.sqlite'}"
    assert run("ledger", "--db", db, "init").exit_code == 0
    assert run("ledger", "--db", db, "dataset", "add", "census", "--unit", "person").exit_code == 0
    assert run("ledger", "--db", db, "threshold", "set", "census", "--epsilon", "1", "--delta", "1e-6",
               "--level", "hard", "--user", "ana").exit_code == 0
    eps6 = fp.epsilon_for_delta_from_mu(0.2, 1e-6)
    from fdpkit._numerics import safe_g

    check = run("ledger", "--db", db, "check", "census", "--gaussian", "5")
    line = [x for x in check.stdout.splitlines() if "ε at δ = 1e-06" in x]
    assert check.exit_code == 0 and len(line) == 1 and safe_g(eps6, up=True) in line[0], check.output
    proposed = run("ledger", "--db", db, "propose", "census", "--gaussian", "5", "--title", "t", "--user", "ana")
    assert f"ε = {safe_g(eps6, up=True)} at δ = 1e-06" in proposed.output, proposed.output
    with open_ledger(db) as led:
        led.approve(1, user="bob", report=False)
        led.release(1, user="bob")
        add_user(led, "val", role="viewer", password=PASSWORD, actor="admin")
    status = run("ledger", "--db", db, "status", "census")
    assert any("ε at δ = 1e-06" in x and safe_g(eps6, up=True) in x for x in status.stdout.splitlines()), status.output
    c = TestClient(create_app(ledger_url=db))
    assert c.post("/api/ledger/login", json={"username": "val", "password": PASSWORD}).status_code == 200
    page = unescape(c.get("/ledger/d/census").text)
    assert f"at δ = 1e-05, ε = {safe_g(eps6, up=True)} at δ = 1e-06" in " ".join(re.sub(r"<[^>]+>", "", page).split())
    assert 'class="eps-at-threshold"' in page
    # the plan: eps at the release's delta beside 1e-5's, in the CLI, its JSON (which the ledger reads) and the page
    plan_args = ["plan", "utility-first", "--effect", "0.1", "--n", "60", "--sd", "0.25", "--max-relative-loss", "0.05"]
    plan = fp.utility_first(analysis=fp.ZTestSpec(effect=0.1, n=60, sd=0.25, alpha=0.05), max_relative_loss=0.05)
    want = safe_g(plan.epsilon_for_delta(1e-6), up=True)
    text = run(*plan_args, "--delta", "1e-6")
    assert any("ε at δ = 1e-6" in x and want in x for x in text.stdout.splitlines()), text.output
    saved = tmp_path / "plan.json"
    assert run(*plan_args, "--delta", "1e-6", "-f", "json", "-o", saved).exit_code == 0
    assert json.loads(saved.read_text())["epsilon_at_delta"][0]["delta"] == 1e-6
    assert "ε at δ = 1e-06" in run("ledger", "--db", db, "check", "census", "-m", saved).stdout
    web = TestClient(create_app())
    shown = web.get("/plan", params={"effect": "0.1", "n": "60", "sd": "0.25", "level": "0.05",
                                     "max_relative_loss": "0.05", "delta": "1e-6"}).text
    assert want in unescape(shown.split('id="epsilon-at-delta"')[1].split("</tr>")[0])
    assert web.post("/api/plan", json={"effect": 0.1, "n": 60, "sd": 0.25, "max_relative_loss": 0.05, "delta": 1e-6,
                                       }).json()["epsilon_at_delta"][0]["epsilon"] == plan.epsilon_for_delta(1e-6)
    assert web.post("/api/plan", json={"effect": 0.1, "n": 60, "sd": 0.25, "max_relative_loss": 0.05,
                                       "delta": 0}).status_code == 422


def test_a_calibrated_budget_is_not_exceeded_in_the_ledger(ledger_url, tmp_path):
    # calibrated to eps <= 2 at delta 2e-5 (sigma 1.272, batch 256 of 50,000, 60 epochs: eps 1.99975), the run
    # proposed to a ledger with that hard limit read "would exceed the hard threshold: eps 2.008 > 2": the
    # ledger's running grid (1e-3) is coarser than the calibrator's, and releasing it needed an override
    cal = tmp_path / "cal.json"
    made = run("calibrate", "dpsgd", "--epsilon", "2", "--delta", "2e-5", "--batch-size", "256", "--dataset-size",
               "50000", "--epochs", "60", "-f", "json", "-o", cal)
    assert made.exit_code == 0, made.output
    certified = json.loads(cal.read_text())["epsilon"]
    assert certified <= 2
    with open_ledger(ledger_url) as led:
        led.add_dataset("cifar", unit="one example", user="ana")
        led.set_threshold("cifar", metric="epsilon", level="hard", value=2.0, delta=2e-5, user="ana", approver="bob")
        spec = json.loads(cal.read_text())["mechanism"]
        from fdpkit.accounting import Composition

        assert Composition.empty().add([fp.mechanism_from_dict(spec)]).epsilon_for_delta(2e-5) > 2  # the running grid
        check = led.check("cifar", spec)
        hard = [c for c in check.thresholds if c.threshold.level == "hard"][0]
        assert not check.blocked and not hard.exceeded and hard.current <= 2, hard.message()
        assert check.after.epsilon_for_delta(2e-5) == hard.current and hard.current >= certified - 1e-9
        # every figure of that total is the tighter one: ε at 1e-5 is the report's (2.091), not the grid's 2.099
        report = fp.privacy_report(fp.mechanism_from_dict(spec), deltas=(1e-5,))
        assert report.epsilons[0][1] <= check.after.epsilon <= report.epsilons[0][1] + 1e-6
        rel = led.propose("cifar", spec, title="run", user="ana")
        led.approve(rel.id, user="bob", report=False)
        assert led.release(rel.id, user="bob").state == "released"  # no override needed
        st = led.status("cifar")
        assert not [c for c in st.exceeded if c.threshold.level == "hard"]
        assert st.released.epsilon_for_delta(2e-5) <= 2
        from fdpkit.ledger.timeline import timeline

        assert timeline(led, "cifar")[-1].epsilon == st.released.epsilon  # the page's timeline ends at its total
        assert led.verify().ok  # the chain records the running grid's figures, which verify composes again
    cli = run("ledger", "--db", ledger_url, "status", "cifar")
    assert cli.exit_code == 0 and "2.008" not in cli.stdout and "hard threshold exceeded" not in cli.output


def test_a_second_reading_without_all_the_releases_is_not_taken():
    # the finer reading is composed from the releases' mechanisms (``parts``); were one left out,
    # it would read far below the running state and lower the ledger's total: it is not taken
    from fdpkit.accounting import Composition
    from fdpkit.ledger.totals import DELTA_REF, read_total

    run_ = fp.dpsgd(1.272, batch_size=256, dataset_size=50000, epochs=60)
    state = Composition.empty().add([run_, run_])
    whole = read_total(state, 0.0, parts=(run_, run_))
    assert whole.refine() and whole.epsilon_for_delta(DELTA_REF) <= state.epsilon_for_delta(DELTA_REF)
    partial = read_total(state, 0.0, parts=(run_,))  # one release left out
    assert not partial.refine()
    assert partial.epsilon_for_delta(DELTA_REF) == state.epsilon_for_delta(DELTA_REF)
