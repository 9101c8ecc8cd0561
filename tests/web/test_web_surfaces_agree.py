"""One question, one answer on every surface (session 12): the web page, its JSON twin, the CLI
and the Python API give the same numbers for the same inputs, as each user meets them."""

import json
import re
from html import unescape
from urllib.parse import parse_qsl

from typer.testing import CliRunner

import fdpkit as fp
from fdpkit._numerics import safe_g
from fdpkit.cli import app

runner = CliRunner()
#: a run where the calibrated sigma depends on the discretization (1e-3: 2.768; the rule's 1e-4: 2.753)
TARGET = {"target": "epsilon", "target_value": "1", "delta": "1e-5", "sample_rate": "0.01", "steps": "5000"}


def _form_defaults(page: str) -> dict:
    """The values the served form submits when the user leaves a field as it is."""
    found = {}
    for tag in re.findall(r"<input [^>]*>", page):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and value and 'type="radio"' not in tag and 'type="checkbox"' not in tag:
            found[name.group(1)] = unescape(value.group(1))
    for select in re.finditer(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', page, re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(2))
        if chosen:
            found[select.group(1)] = chosen.group(1)
    return found


def test_calibrate_gives_one_sigma_on_web_cli_and_python(client):
    # the page prefilled discretization 1e-3 while the CLI and Python use the library's rule
    # (1e-4 here): sigma 2.768 on the page, 2.753 from `fdpkit calibrate` for the same target
    python = fp.calibrate_dpsgd(epsilon=1, delta=1e-5, sample_rate=0.01, steps=5000).rounded()
    cli = runner.invoke(app, ["calibrate", "dpsgd", "--epsilon", "1", "--delta", "1e-5", "--sample-rate", "0.01",
                              "--steps", "5000"])
    assert cli.exit_code == 0, cli.output
    cli_sigma = re.search(r"noise multiplier\s+│?\s*([0-9.]+) \(rounded up", cli.output).group(1)
    served = client.get("/calibrate").text
    form = {**_form_defaults(served), **TARGET}
    page = client.post("/calibrate", data=form).text
    web_sigma = re.sub(r"<[^>]+>", "", re.search(r'id="value">(.*?)</span>\s*</p>', page, re.S).group(1))
    api = client.post("/api/calibrate/dpsgd", json={"epsilon": 1, "delta": 1e-5, "sample_rate": 0.01,
                                                    "steps": 5000}).json()
    cli_json = json.loads(runner.invoke(app, ["calibrate", "dpsgd", "--epsilon", "1", "--delta", "1e-5",
                                              "--sample-rate", "0.01", "--steps", "5000", "-f", "json"]).stdout)
    assert web_sigma == cli_sigma == f"{python.value:g}"
    assert api["noise_multiplier"] == cli_json["noise_multiplier"]
    # the example the page loads is accounted the same way (no discretization of its own)
    example = json.loads(unescape(re.search(r'data-example="([^"]*)"', served).group(1)))
    assert "discretization" not in example


def test_plan_json_says_no_gaussian_noise_where_the_text_says_none_needed(client):
    # a relative-risk limit R = 2000 >= 1/FPR does not bind Gaussian noise: the text recommends the
    # Laplace option and says the Gaussian option needs none, but the JSON read "sigma": 0.0 (and
    # options[0].noise_scale 0.0, budget split "sigma_per_test" 0.0; the page "σ per test 0")
    args = ["plan", "privacy-first", "--effect", "0.5", "--n", "100", "--sd", "1", "--max-relative-risk", "2000",
            "--fpr", "0.001"]
    text = runner.invoke(app, args, env={"COLUMNS": "200"}).output
    assert "Recommended: the Laplace option" in text and "none needed (the limit does not bind)" in text
    for tests in ("1", "2"):
        d = json.loads(runner.invoke(app, [*args, "--tests", tests, "-f", "json"]).stdout)
        gauss, lap = d["options"]
        assert d["recommended"] == 1 and gauss["value"] == "inf"
        assert d["sigma"] is None and gauss["noise_scale"] is None and gauss["mechanism"] is None
        assert d["laplace_scale"] == lap["noise_scale"] > 0 and d["mechanism"] == lap["mechanism"]
        if tests == "2":
            assert d["budget_split"]["sigma_per_test"] is None
            assert d["budget_split"]["laplace_scale_per_test"] == lap["noise_scale"]
    python = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_relative_risk=2000,
                              fpr=1e-3, analysis=fp.ZTestSpec(effect=0.5, n=100, sd=1))
    assert python.sigma is None and python.recommended is python.options[1]
    page = client.get("/plan", params={"guide": "privacy_first", "effect": "0.5", "n": "100", "sd": "1",
                                       "max_relative_risk": "2000", "fpr": "0.001",
                                       "tests": "2"})
    assert page.status_code == 200, page.text[:500]
    row = re.search(r"<tr><th>σ per test</th><td>(.*?)</td>", page.text)
    assert re.sub(r"<[^>]+>", "", row.group(1)) == "none needed (the limit does not bind)"  # it read "0"


def test_risk_from_a_report_shows_what_it_used_and_why_the_report_reads_less(client):
    # the report's Risk link carries μ and its range only: the page answered at prior 0.01 and FPR
    # 0.001 with both fields empty, and its TPR 0.002398 sat beside the report's 0.002217 for the same
    # run with no word on why (the Convert page says it for ε)
    report = client.get("/report", params={"kind": "dpsgd", "noise_multiplier": "1.1", "batch_size": "256",
                                           "dataset_size": "60000", "epochs": "10"}).text
    link = unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', report).group(1))
    page = client.get(link).text
    form = _form_defaults(page)
    assert form["prior"] == "0.01" and form["fpr"] == "0.001" and form["mu"] == "0.2698"
    said = unescape(page)
    # the link carries the run's own figures (signed): the page quotes them and says so
    assert "the privacy report's own certified figures for this run" in said
    # without them (a link of μ and its range only) the page says why the report reads less
    alone = unescape(client.get(link.split("&run_mu=")[0]).text)
    assert "the report's own figures for the run" in alone and "Quote the report's figures for the run" in alone
    cli = runner.invoke(app, ["risk", "--mu", "0.2698", "--mu-fpr-min", "1e-10", "--mu-tau", "5.592e-10"],
                        env={"COLUMNS": "200"}).output
    assert "Quote the report's figures for the run" in cli
    assert "Quote the report's figures" not in runner.invoke(app, ["risk", "--mu", "0.2698"]).output


def test_report_statement_quotes_the_tpr_the_tables_print():
    # the statement read "a true-positive rate above 0.00222" under a headline and table of 0.002217
    args = ["report", "dpsgd", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "60000",
            "--epochs", "10"]
    text = runner.invoke(app, args, env={"COLUMNS": "200"}).output
    table = re.search(r"best attack TPR at FPR 0\.001\s*│\s*([0-9.e-]+)", text).group(1)
    assert table == "0.002217"
    assert f"no membership-inference attack reaches a true-positive rate above {table} at a false-positive rate" \
        in text


def test_gaussian_equivalent_mu_has_one_spelling(client):
    # the headline of Risk and Convert read "as a Gaussian mechanism ... (μ = 1.67 at δ = 1e-05)" beside
    # Convert's table and the Calculator's "mu of the exact mechanism" 1.667, and the CLI's 1.667
    risk = unescape(client.get("/risk", params={"guarantee": "epsilon_delta", "epsilon": "8", "delta": "1e-5"}).text)
    convert = unescape(client.get("/convert", params={"epsilon": "8", "delta": "1e-5"}).text)
    calc = client.get("/calculator", params={"mode": "gaussian", "epsilon": "8", "delta": "1e-5",
                                             "sensitivity": "1"}).text
    mu = re.sub(r"<[^>]+>", "", re.search(r"mu of the exact mechanism</th>\s*<td[^>]*>(.*?)</td>", calc, re.S).group(1))
    assert mu.strip() == "1.667"
    for page in (risk, convert):
        said = re.sub(r"<[^>]+>", "", page)
        assert "as a Gaussian mechanism it would be 'weak' (μ = 1.667 at δ = 1e-05)" in said
    cli = runner.invoke(app, ["risk", "--epsilon", "8", "--delta", "1e-5"], env={"COLUMNS": "200"}).output
    assert "(μ = 1.667 at δ = 1e-05)" in cli


def test_a_ledger_release_links_to_its_own_report(tmp_path):
    # an approver deciding whether a release is acceptable saw its spec and ε but had to re-type the
    # run into the Report page to read its protection grade and attack risk
    from fastapi.testclient import TestClient

    from fdpkit.ledger import open_ledger
    from fdpkit.ledger.users import add_user
    from fdpkit.web.main import create_app

    url, password = f"sqlite:///{tmp_path / 'ledger.sqlite'}", "s3cret-Passw0rd!"
    run = fp.dpsgd(noise_multiplier=1.1, batch_size=256, dataset_size=60000, epochs=10)
    with open_ledger(url) as led:
        led.add_dataset("mnist", unit="example", user="admin")
        add_user(led, "val", role="viewer", password=password, actor="admin")
        run_id = led.propose("mnist", run.to_dict(), title="model", user="ana").id
        gauss_id = led.propose("mnist", {"kind": "gaussian", "sigma": 3.0}, title="counts", user="ana").id
    c = TestClient(create_app(ledger_url=url))
    assert c.post("/api/ledger/login", json={"username": "val", "password": password}).status_code == 200
    expected = fp.privacy_report(run)
    for rid, mu in ((run_id, expected.mu), (gauss_id, 1 / 3)):
        page = c.get(f"/ledger/r/{rid}").text
        link = unescape(re.search(r'href="(/report\?[^"]*)" id="release-report"', page).group(1))
        report = c.get(link)
        assert report.status_code == 200 and 'id="statement"' in report.text
        assert re.search(r"satisfies μ = ([0-9.]+) Gaussian", unescape(report.text)).group(1) == safe_g(mu, up=True)
    page = c.get(f"/ledger/r/{run_id}").text
    form = unescape(re.search(r'href="(/report\?[^"]*)" id="release-report"', page).group(1))
    assert "kind=dpsgd" in form and "noise_multiplier=1.1" in form and "batch_size=256" in form


def test_report_to_convert_to_risk_keeps_the_range_of_its_mu(client):
    # Report -> Risk carried μ's range (mu_fpr_min, mu_tau), but Report -> Convert -> Risk dropped
    # it: the same μ read as μ-GDP alone on one path and as the run's bound on the other
    report = client.get("/report", params={"kind": "dpsgd", "noise_multiplier": "1.1", "batch_size": "256",
                                           "dataset_size": "60000", "epochs": "10"}).text
    direct = unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', report).group(1))
    convert = unescape(re.search(r'href="(/convert\?[^"]*)" id="convert-link"', report).group(1))
    page = client.get(convert).text
    assert "tighter ε = 0.919" in unescape(re.sub(r"<[^>]+>", "", page))  # the signed profile still reads
    via = unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', page).group(1))
    assert dict(parse_qsl(via.split("?", 1)[1])) == dict(parse_qsl(direct.split("?", 1)[1]))
    cells = [re.search(r'id="failure-mode">(.*?)</td>', client.get(u).text).group(1) for u in (direct, via)]
    assert cells[0] == cells[1] == "graceful: confidence can approach certainty but never reach it"  # the run's own
    # a μ typed on Convert (no report) links to μ alone
    alone = client.get("/convert", params={"mu": "0.2698"}).text
    assert unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', alone).group(1)) == "/risk?guarantee=mu&mu=0.2698"


def test_utility_first_risk_is_of_the_noise_it_prints_and_proposes(client):
    # the plan printed σ = 0.03496 (rounded down, for the power) and proposes it to the ledger, whose
    # μ is 0.01 / 0.03496 = 0.28604, but read the attack risk at μ_min = 0.28597: TPR 0.002522 and
    # posterior 0.02484 as upper bounds, below the proposed release's 0.002523 and 0.02485
    spec = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01)
    plan = fp.utility_first(analysis=spec, max_relative_loss=0.01)
    proposed = plan.mechanism
    assert proposed == {"kind": "gaussian", "sigma": 0.03496, "sensitivity": 0.01}
    released = fp.GaussianCurve(0.01 / 0.03496)
    assert plan.mu_of_noise == 0.01 / 0.03496 > plan.mu_min
    assert plan.attack_power == float(released.tpr(1e-3))
    assert plan.posterior == float(fp.posterior(released, 0.01, 1e-3))
    assert plan.epsilon_at_1e5 == fp.epsilon_for_delta_from_mu(0.01 / 0.03496, 1e-5)
    text = runner.invoke(app, ["plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--level",
                               "0.01", "--max-relative-loss", "0.01"], env={"COLUMNS": "200"}).output
    assert re.search(r"attack TPR at FPR 0\.001\s*│\s*0\.002523\s", text)
    assert re.search(r"posterior for prior 0\.01 at FPR 0\.001\s*│\s*0\.02485\s", text)
    page = client.get("/plan", params={"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25",
                                       "level": "0.01", "max_relative_loss": "0.01"}).text
    assert "0.002523" in page and "0.02485" in page


def test_risk_to_convert_and_back_keeps_the_range(client):
    # Risk (from a report) -> "the same guarantee on Convert" -> Risk read μ-GDP alone on return
    start = "/risk?guarantee=mu&mu=1.567&mu_fpr_min=1e-10&mu_tau=8.159e-07"
    to_convert = unescape(re.search(r'The same guarantee on <a href="([^"]*)"', client.get(start).text).group(1))
    assert dict(parse_qsl(to_convert.split("?", 1)[1])) == {"mu": "1.567", "mu_fpr_min": "1e-10", "mu_tau": "8.159e-07"}
    back = unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', client.get(to_convert).text).group(1))
    assert dict(parse_qsl(back.split("?", 1)[1])) == dict(parse_qsl(start.split("?", 1)[1]))
    # a link whose range is not valid carries none of it on (the Risk page says so)
    bad = client.get("/risk?guarantee=mu&mu=1.567&mu_fpr_min=0.7&mu_tau=8.159e-07").text
    assert "range of the report's μ is not valid" in unescape(bad)
    assert not any("mu_fpr_min" in h for h in re.findall(r'href="([^"]*)"', bad))


def test_plan_page_prints_the_power_of_the_printed_noise(client):
    # the table read the power at the limit to nearest (0.9489) where the plan adds σ = 0.04825
    # (rounded up): that noise's power, rounded down, is 0.9488 (tests/planning/test_noise_plans.py)
    page = client.get("/plan", params={"guide": "privacy_first", "effect": "0.75", "n": "20", "sd": "1",
                                       "max_attack_power": "0.02", "fpr": "0.001"}).text
    cells = re.findall(r'data-label="power of the analysis">(.*?)</td>', page)
    assert [re.sub(r"<[^>]+>", "", c) for c in cells][0] == "0.9488"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html))).strip()


def test_risk_page_report_cli_and_pdf_say_one_mu_in_the_same_words(client, tmp_path):
    # mu 0.6531 read "wrongly flags 0.10% of non-members correctly flags at most 0.75% of members"
    # and "starts 1.0% sure" on the Risk page (and `fdpkit risk` printed no sentence), but "wrongly
    # accuses 0.10% of the people who are not in the data ... catches at most 0.75% of those who
    # are" and "starts 1% sure" in the report of the same mu: two rules for one reading
    import pypdf

    sentences = list(fp.read_guarantee("mu", mu=0.6531).plain_language)
    assert sentences[1] == ("An attacker who starts 1% sure that a person is in the data can become at most 7.0% "
                            "sure after a positive attack.")
    page = client.get("/risk?guarantee=mu&mu=0.6531").text
    on_page = [_text(li) for li in re.findall(r"<li>(.*?)</li>", re.search(r'<ul class="plain" id="plain">(.*?)</ul>',
                                                                             page, re.S).group(1), re.S)]
    assert on_page == sentences
    assert client.post("/api/risk", json={"guarantee": "mu", "mu": 0.6531}).json()["plain_language"] == sentences
    cli = runner.invoke(app, ["risk", "--mu", "0.6531"])
    assert cli.exit_code == 0 and all(s in cli.stdout.replace("\n", " ") or s in cli.stdout for s in sentences)
    assert json.loads(runner.invoke(app, ["risk", "--mu", "0.6531", "-f", "json"]).stdout)["plain_language"] == sentences
    # the report of a mechanism with exactly this mu (Gaussian noise 1, sensitivity 0.6531)
    first = sentences[0][0].lower() + sentences[0][1:]
    words = "In plain words: " + " ".join([first] + sentences[1:])
    text = runner.invoke(app, ["report", "gaussian", "--sigma", "1", "--sensitivity", "0.6531"])
    assert text.exit_code == 0 and words in text.stdout.replace("\n", " ")
    spec = json.dumps({"kind": "gaussian", "sigma": 1, "sensitivity": 0.6531})
    shown = client.post("/report", data={"kind": "mechanism", "mechanism": spec}).text
    assert _text(re.search(r'<p id="plain-words">(.*?)</p>', shown, re.S).group(1)) == words
    pdf = tmp_path / "r.pdf"
    made = runner.invoke(app, ["report", "gaussian", "--sigma", "1", "--sensitivity", "0.6531", "-f", "pdf", "-o", str(pdf)])
    assert made.exit_code == 0, made.output
    pdf_text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in pypdf.PdfReader(str(pdf)).pages))
    assert all(s in pdf_text for s in sentences[1:]), pdf_text[:2000]
    assert re.sub(r"\s+", " ", first) in pdf_text


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_risk_from_a_report_quotes_the_runs_own_figures_under_the_servers_signature(client):
    # CIFAR-10 (sigma 1.1, batch 256 of 50,000, 60 epochs): the report read TPR 0.71%, posterior 6.7% and
    # failure mode graceful; the Risk page its link opened read the run through its mu: 0.75%, 7.0% and
    # "catastrophic by the bound" (tau 5.7e-9), with nothing to say which to quote
    report = client.get("/report", params={"kind": "dpsgd", "noise_multiplier": "1.1", "batch_size": "256",
                                           "dataset_size": "50000", "epochs": "60"}).text
    link = unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', report).group(1))
    words = re.search(r"In plain words: an attack (.*?) Judge the risk at a realistic false-positive rate\.",
                      _text(report)).group(1)
    assert "catches at most 0.71% of those" in words and "at most 6.7% sure" in words
    report_mode = re.search(r"<td>failure mode</td><td>(.*?)</td>", report).group(1)
    report_tpr = re.search(r"best attack TPR at FPR 0\.001</th><td>(.*?)</td>", report).group(1)
    page = client.get(link).text
    said = _text(page)
    assert f"An attack {words} Judge the risk" in said  # the report's own sentences, word for word
    assert re.search(r'id="attack-power">(.*?)</td>', page).group(1) == report_tpr == "0.007074"
    assert re.search(r'id="posterior">(.*?)</td>', page).group(1) == "0.06669"  # the report's posterior table
    assert re.search(r'id="failure-mode">(.*?)</td>', page).group(1) == report_mode
    assert report_mode.startswith("graceful") and "the privacy report's own certified figures for this run" in said
    assert "catastrophic by the bound" in re.search(r'id="mu-alone">(.*?)</p>', page, re.S).group(1)
    # "Explain" again with the same inputs keeps them (the form carries the signed fields)
    again = client.get("/risk", params=_form_defaults(page)).text
    assert re.search(r'id="attack-power">(.*?)</td>', again).group(1) == "0.007074"
    # another prior reads mu, as typed
    other = client.get("/risk", params={**_form_defaults(page), "prior": "0.1"}).text
    assert 'id="mu-alone"' not in other and "catches at most 0.75%" in _text(other)
    # a changed figure, a changed mu or range, or no signature: mu alone, never the carried figure as the run's
    for changed in (link.replace("run_tpr=0.007", "run_tpr=0.001"), link.replace("run_failure=graceful", "run_failure=none"),
                    link.replace("mu_tau=5.706e-09", "mu_tau=0"), re.sub(r"&run_sig=[^&]*", "", link),
                    link.replace("mu=0.6531&mu_fpr", "mu=0.6532&mu_fpr").replace("run_mu=0.6531", "run_mu=0.6532")):
        page = client.get(changed)
        assert page.status_code == 200, changed
        said = _text(page.text)
        assert "own certified figures" not in said and 'id="mu-alone"' not in page.text, changed
        assert "catches at most 0.71%" not in said and re.search(r'id="attack-power">(.*?)</td>', page.text).group(1) \
            != "0.007074", changed
        assert ('id="run-unverified"' in page.text) == ("run_sig" in changed), changed
    # a report whose μ holds on all of [0, 1] (no range: Laplace, failure mode "none") links its figures too
    laplace = client.get("/report", params={"kind": "mechanism", "mechanism": '{"kind": "laplace", "scale": 1}'}).text
    link = unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', laplace).group(1))
    assert "mu_tau" not in link and "run_sig=" in link
    page = client.get(link).text
    assert re.search(r'id="failure-mode">(.*?)</td>', page).group(1) == \
        re.search(r"<td>failure mode</td><td>(.*?)</td>", laplace).group(1).replace("&#x27;", "&#39;")
    assert "own certified figures" in _text(page) and re.search(r'id="attack-power">(.*?)</td>', page).group(1) == \
        re.search(r"best attack TPR at FPR 0\.001</th><td>(.*?)</td>", laplace).group(1)
