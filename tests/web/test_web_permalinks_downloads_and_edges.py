"""Issue 25 problems 2 (rest), 5 and 10: drop_last in calibration (library, CLI, page, API),
permalinks on Sweep, Compare and Audit, downloads named from the inputs, and the rough edges
(favicon, styled 403, /docs way back, login keeps the user name, Audit's blank σ)."""

import re

import pytest

import fdpkit as fp

SHUFFLED = dict(batch_size=256, dataset_size=60000, sampling="shuffled", relation="replace-one")


@pytest.mark.parametrize("drop", [False, True])
def test_calibrate_counts_loader_steps(drop):
    r = fp.calibrate_dpsgd(mu=20, epochs=60, drop_last=drop, **SHUFFLED)
    assert r.unknown == "noise_multiplier"
    assert r.mechanism.steps == (60 * 234 if drop else 60 * 235)
    assert r.to_dict()["drop_last"] is drop
    solved = fp.calibrate_dpsgd(mu=20, noise_multiplier=1.1, drop_last=drop, **SHUFFLED)
    per = 234 if drop else 235
    assert solved.achieved["epochs_equivalent"] == pytest.approx(solved.mechanism.steps / per)
    assert solved.achieved["mu"] <= 20


def test_cli_calibrate_drop_last_quotes_no_sample_rate():
    from typer.testing import CliRunner

    from fdpkit.cli import app

    args = ["calibrate", "dpsgd", "--mu", "20", "--epochs", "60", "--batch-size", "256", "--dataset-size", "60000",
            "--sampling", "shuffled", "--relation", "replace-one", "--format", "json"]
    import json

    plain = json.loads(CliRunner().invoke(app, args).stdout)
    dropped = json.loads(CliRunner().invoke(app, [*args, "--drop-last"]).stdout)
    assert plain["steps"] == 14100 and dropped["steps"] == 14040 and dropped["drop_last"] is True
    text = CliRunner().invoke(app, [*args[:-2], "--drop-last"]).output
    assert "sample rate" not in text and "batch size" in text


def test_calibrate_page_and_api_drop_last(client):
    q = ("/calibrate?target=mu&target_value=20&batch_size=256&dataset_size=60000&epochs=60&sampling=shuffled"
         "&relation=replace-one&discretization=0.001")
    plain, dropped = client.get(q), client.get(q + "&drop_last=on")
    assert plain.status_code == dropped.status_code == 200
    assert re.search(r'id="steps-out">14[,]?100<', plain.text) and re.search(r'id="steps-out">14[,]?040<', dropped.text)
    assert "sample rate q</th>" not in dropped.text and 'id="batch-size-out">256<' in dropped.text
    assert "14,040 steps (60 epochs of 234 batches" in dropped.text  # the statement counts the loader's steps
    assert 'name="drop_last"' in dropped.text and "checked" in dropped.text.split('id="drop_last"')[1][:40]
    api = client.post("/api/calibrate/dpsgd", json={"mu": 20, "epochs": 60, "drop_last": True, **SHUFFLED,
                                                    "discretization": 1e-3})
    assert api.status_code == 200 and api.json()["steps"] == 14040 and api.json()["drop_last"] is True


@pytest.mark.parametrize("url, marker", [
    ("/compare?kind_1=mu&value_1=1&kind_2=epsilon_delta&value_2=1&delta_2=1e-5", 'id="compare-table"'),
    ("/sweep?task=map&noise_multiplier=2&sample_rate=0.01&steps=100&delta=1e-5", 'id="sweep-table"'),
    ("/audit?mode=counts&true_positives=900&false_positives=100&n_members=1000&n_nonmembers=1000", 'id="mu-lower"'),
])
def test_more_permalinks_render_the_answer(client, url, marker):
    r = client.get(url)
    assert r.status_code == 200 and marker in r.text and 'id="edit-inputs"' in r.text
    blank = client.get(url.split("?")[0])
    assert marker not in blank.text and 'id="edit-inputs"' not in blank.text


def test_compare_and_sweep_forms_live_in_the_url(client):
    for path in ("/compare", "/sweep"):
        page = client.get(path).text
        assert 'method="get"' in page and 'hx-push-url="true"' in page


def test_one_sweep_form_does_not_blank_the_other(client):
    r = client.get("/sweep?task=map&noise_multiplier=2&sample_rate=0.01&steps=100&delta=1e-5"
                   "&mu=0.7&batch_size=512&epochs=3&dataset_size=50000")
    design = r.text.split('id="design-form"')[1]
    assert 'value="0.7"' in design and 'value="512"' in design and 'value="50000"' in design
    only_map = client.get("/sweep?task=map&noise_multiplier=2&sample_rate=0.01&steps=100").text
    assert 'id="batch_size" name="batch_size" type="text" value="256, 1024"' in only_map  # not blanked


def test_audit_counts_post_carries_its_permalink(client):
    data = {"mode": "counts", "true_positives": "900", "false_positives": "100", "n_members": "1000",
            "n_nonmembers": "1000", "mechanism": ""}
    r = client.post("/audit", data=data)
    assert r.status_code == 200 and 'id="mu-lower"' in r.text
    link = re.search(r'data-permalink="([^"]+)"', r.text).group(1).replace("&amp;", "&")
    assert link.startswith("/audit?mode=counts&true_positives=900") and "mechanism" not in link  # blanks left out
    assert 'id="mu-lower"' in client.get(link).text
    scores = client.post("/audit", data={"mode": "scores"})
    assert "data-permalink" not in scores.text  # files cannot live in a URL


def test_audit_never_judges_counts_against_a_sigma_nobody_chose(client):
    page = client.get("/audit").text
    box = page.split('id="mechanism"')[1].split("</textarea>")[0]
    assert box.endswith(">")  # empty: the example is a placeholder only
    r = client.get("/audit?mode=counts&true_positives=900&false_positives=100&n_members=1000&n_nonmembers=1000")
    assert "Lower bounds" in r.text and "Violation" not in r.text and "No violation" not in r.text


def test_downloads_are_named_from_the_inputs(client):
    form = {"kind": "dpsgd", "noise_multiplier": "9.4", "sample_rate": "0.32768", "steps": "2000"}
    r = client.post("/report/download?format=json", data=form)
    assert r.status_code == 200
    assert 'filename="fdpkit-dpsgd-sigma9.4-q0.32768-T2000.json"' in r.headers["content-disposition"]
    r = client.post("/api/report/dpsgd?format=md", json={"noise_multiplier": 1.1, "batch_size": 256,
                                                         "dataset_size": 60000, "epochs": 2, "sampling": "shuffled",
                                                         "relation": "replace-one", "drop_last": True})
    assert r.status_code == 200, r.text
    assert ('filename="fdpkit-dpsgd-shuffled-replace-one-sigma1.1-b256-n60000-T468-droplast.md"'
            in r.headers["content-disposition"])
    r = client.post("/calculator/export?format=csv", data={"mode": "gaussian", "epsilon": "1", "delta": "1e-5"})
    assert r.status_code == 200 and 'filename="fdpkit-calculator-gaussian-' in r.headers["content-disposition"]


def test_download_names_are_safe():
    from fdpkit.web.names import MAX_STEM, download_name

    assert download_name(fp.Repeated(fp.PureDP(0.2), 50), "pdf") == "fdpkit-repeated-pure_dp-epsilon0.2-x50.pdf"
    assert download_name({"kind": 'a"/..\\b;c' * 40}, "pdf").endswith(".pdf")
    odd = download_name({"kind": 'a"/..\\b;c' * 40}, "pdf")
    assert re.fullmatch(r"[A-Za-z0-9._-]+", odd) and len(odd) <= MAX_STEM + 4
    assert download_name(None, "json", "audit") == "fdpkit-audit.json"


def test_favicon_no_404(client):
    assert client.get("/favicon.ico").status_code == 200
    assert client.get("/static/favicon.svg").status_code == 200
    assert 'rel="icon" href="/static/favicon.svg"' in client.get("/calculator").text


def test_docs_in_the_site_nav_with_a_way_back(client):
    page = client.get("/docs").text
    assert 'nav aria-label="Main"' in page and 'id="way-back"' in page and 'href="/calculator"' in page
    assert 'id="swagger-ui"' in page and "/static/swagger/init.js" in page


def test_styled_404_for_browsers_json_for_the_rest(client):
    r = client.get("/no-such-page", headers={"Accept": "text/html"})
    assert r.status_code == 404 and 'nav aria-label="Main"' in r.text and 'id="way-back"' in r.text
    r = client.get("/no-such-page")
    assert r.status_code == 404 and r.json()["detail"] == "Not Found"
    assert client.get("/api/nothing", headers={"Accept": "text/html"}).headers["content-type"].startswith(
        "application/json")


@pytest.fixture(scope="module")
def ledger_client(tmp_path_factory):
    from fastapi.testclient import TestClient

    from fdpkit.ledger import open_ledger
    from fdpkit.ledger.users import add_user
    from fdpkit.web.main import create_app

    url = f"sqlite:///{tmp_path_factory.mktemp('polish') / 'ledger.sqlite'}"
    led = open_ledger(url)
    add_user(led, "viewer1", role="viewer", password="s3cret-Passw0rd!v", actor="admin")
    led.close()
    return TestClient(create_app(ledger_url=url), follow_redirects=False)


def _csrf(page):
    return re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)


def test_login_keeps_the_user_name(ledger_client):
    c = ledger_client
    r = c.post("/ledger/login", data={"username": "viewer1", "password": "wrong",
                                      "csrf_token": _csrf(c.get("/ledger/login")), "next": "/ledger"})
    assert r.status_code == 401 and 'id="username" name="username" autocomplete="username" value="viewer1"' in r.text
    assert "wrong" not in r.text.split('id="password"')[1][:120]  # never the password


def test_forbidden_page_is_styled_with_a_way_back(ledger_client):
    c = ledger_client
    r = c.post("/ledger/login", data={"username": "viewer1", "password": "s3cret-Passw0rd!v",
                                      "csrf_token": _csrf(c.get("/ledger/login")), "next": "/ledger"})
    assert r.status_code == 303
    r = c.get("/ledger/users")
    assert r.status_code == 403 and 'id="forbidden"' in r.text
    assert 'nav aria-label="Main"' in r.text and 'id="way-back"' in r.text and 'href="/ledger"' in r.text


def test_shuffled_report_quotes_no_sample_rate_and_no_vacuous_tpr():
    from fdpkit.report import build_document

    rep = fp.privacy_report(fp.dpsgd(1.1, epochs=60, drop_last=True, **SHUFFLED))
    label = rep.mechanism.label()
    assert "sample rate" not in label and "batch size 256 of 60000" in label and "14040 steps" in label
    doc = build_document(rep)
    rows = [r[0] for s in doc.sections for t in s.tables for r in t.rows]
    assert "sample rate q" not in rows and "batch size" in rows
    text = rep.to_markdown() if hasattr(rep, "to_markdown") else rep.to_html()
    assert "TPR ≤ 1." not in text and "sample rate q" not in text
    poisson = fp.privacy_report(fp.dpsgd(1.1, 0.01, 100))
    assert "sample rate 0.01" in poisson.mechanism.label() and "reaches TPR ≤" in poisson.to_html()


def test_refusals_are_styled_pages_for_browsers_json_for_the_api():
    from fastapi.testclient import TestClient

    from fdpkit.web.main import create_app

    app = create_app()

    @app.get("/refused-page")
    async def refused():
        raise ValueError("noise_multiplier must be positive, got -1")

    c = TestClient(app)
    page = c.get("/refused-page", headers={"Accept": "text/html"})
    assert page.status_code == 422 and 'nav aria-label="Main"' in page.text and 'id="way-back"' in page.text
    assert "noise_multiplier must be positive" in page.text
    assert c.get("/refused-page").json()["detail"].startswith("noise_multiplier")


#: Question fields that start empty (issue 25, problem 1): the example is a placeholder and a
#: "Load example" control, never a live value that fights what the user types.
STARTS_EMPTY = {"/calibrate": ("target_value", "delta", "batch_size", "dataset_size", "epochs", "steps", "sample_rate"),
                "/plan": ("effect", "n", "sd", "level", "required_power", "max_relative_loss"),
                "/calculator": ("epsilon", "delta", "scale", "sigma"),
                "/convert": ("epsilon", "delta", "mu", "rho")}


@pytest.mark.parametrize("path", list(STARTS_EMPTY))
def test_forms_start_empty_with_a_load_example_control(client, path):
    page = client.get(path).text
    assert 'id="load-example"' in page and "data-example=" in page
    for name in STARTS_EMPTY[path]:
        tag = re.search(rf'<input id="{name}" name="{name}"[^>]*>', page).group(0)
        assert 'value=""' in tag, tag
    assert re.search(r'placeholder="e\.g\. [^"]+"', page)


#: One permalink per page (cheap ones): the form comes first in the DOM, then the result.
DOM_ORDER = [
    ("/calculator?mode=gaussian&epsilon=1&delta=1e-5", "calculator-form"),
    ("/convert?epsilon=8", "convert-form"),
    ("/risk?guarantee=epsilon&epsilon=8", "risk-form"),
    ("/compare?kind_1=mu&value_1=1", "compare-form"),
    ("/plan?guide=utility_first&effect=0.2&n=100&sd=0.25&level=0.01&max_relative_loss=0.01", "plan-form"),
    ("/audit?mode=counts&true_positives=900&false_positives=100&n_members=1000&n_nonmembers=1000", "audit-form"),
]


def test_the_form_precedes_its_result_in_the_dom(client):
    """Screen readers and keyboard users meet the form, then the result (no CSS ``order``), and
    the result starts with its "edit inputs" link back to the form."""
    for url, form in DOM_ORDER:
        page = client.get(url).text
        f, res = page.index(f'id="{form}"'), page.index('id="results"')
        assert f < res, url
        assert page.index('id="edit-inputs"', res) - res < 200, url  # at the top of the result
        assert f'href="#{form}" id="edit-inputs"' in page, url
    css = client.get("/static/style.css").text
    assert "order:-1" not in css.replace(" ", "")
