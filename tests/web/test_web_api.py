"""Every page and API endpoint through FastAPI's TestClient: numbers, validation, exports,
bounded work and security headers."""

import csv
import io
import json
import math
import re

import pytest

import fdpkit as fp

CALC = {"mode": "gaussian", "sensitivity": "1", "epsilon": "1", "delta": "1e-5", "k": "1", "delta_prime": "1e-5"}
SMALL_DPSGD = {"noise_multiplier": 2.0, "sample_rate": 0.05, "steps": 50, "discretization": 1e-3}


@pytest.mark.parametrize("path", ["/calculator", "/report", "/convert", "/risk", "/plan", "/docs", "/openapi.json", "/healthz"])
def test_pages_load_with_security_headers(client, path):
    r = client.get(path)
    assert r.status_code == 200
    assert "default-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["referrer-policy"] == "no-referrer"


def test_no_external_assets(client):
    for path in ("/calculator", "/docs"):
        text = client.get(path).text
        assert "http://" not in text and "https://" not in text and "cdn" not in text.lower()
    assert client.get("/static/htmx.min.js").status_code == 200


def test_root_redirects_to_calculator(client):
    r = client.get("/", follow_redirects=False)
    assert r.status_code in (302, 307) and r.headers["location"] == "/calculator"


def test_calculator_page_and_api(client):
    r = client.post("/calculator", data=CALC)
    assert r.status_code == 200 and "4.845" in r.text and "3.731" in r.text
    assert "only proven for epsilon &lt; 1" in r.text or "only proven for epsilon < 1" in r.text
    api = client.post("/api/calculator", json={"mode": "gaussian", "epsilon": 1, "delta": 1e-5}).json()
    assert api["outputs"]["classic sigma"] == pytest.approx(4.844805262605389, rel=1e-9)
    lap = client.post("/api/calculator", json={"mode": "laplace", "epsilon": 0.5}).json()
    assert lap["outputs"]["scale b"] == 2.0
    comp = client.post("/api/calculator", json={"mode": "composition", "epsilon": 0.1, "delta": 0, "k": 10, "sigma": 5.0}).json()
    assert comp["outputs"]["advanced epsilon"] == pytest.approx(1.6225980474607942, rel=1e-9)


def test_calculator_out_of_range_names_the_field_shown(client):
    """An epsilon whose sigma overflows is a 422 naming epsilon, shown beside that field (it
    named "scale", which the Gaussian mode hides, so the page showed nothing)."""
    r = client.post("/api/calculator", json={"mode": "gaussian", "epsilon": 1e-320, "delta": 1e-5})
    assert r.status_code == 422 and r.json()["parameter"] == "epsilon"
    r = client.post("/api/calculator", json={"mode": "gaussian", "epsilon": 1, "delta": 1e-320})
    assert r.status_code == 200 and r.json()["outputs"]["classic sigma"] == pytest.approx(38.394019962548, rel=1e-9)
    page = client.get("/calculator?mode=gaussian&sensitivity=1&epsilon=1e-320&delta=1e-5")
    assert 'id="epsilon-error"' in page.text and "out of range" in page.text
    assert 'id="scale-error"' not in page.text


def test_calculator_composition_errors_name_the_releases(client):
    """Releases whose epsilon is above 100 or whose composed mu is above 1000 were refused
    naming ``epsilon`` (shown beside the hidden per-release field) or the internal ``mu``."""
    r = client.post("/calculator", data={"mode": "composition", "releases": "1, 0\n150, 0"})
    assert r.status_code == 422
    errors = re.findall(r'<div class="error" id="[\w-]+" role="alert">([^<]*)</div>', r.text)
    assert errors == ["releases[1].epsilon must be &lt;= 100, got 150.0"], errors
    assert re.search(r'id="releases"[^>]*>[^<]*</textarea>\s*<div class="error" id="releases-error" role="alert">releases\[1\]',
                     r.text)
    r = client.post("/api/calculator", json={"mode": "composition", "releases": [[99, 0]] * 1400})
    assert r.status_code == 422 and r.json()["parameter"] == "releases", r.text
    assert "mu must be" not in r.json()["detail"] and "mu = sqrt(sum of mu_i^2) = 1034" in r.json()["detail"]


def test_calculator_published_examples(published):
    ref = published["classic_calculator"]
    from fdpkit.convert.classic import advanced_composition, classic_gaussian_sigma

    g = ref["classic_gaussian_sigma"]
    assert classic_gaussian_sigma(g["sensitivity"], g["epsilon"], g["delta"]) == pytest.approx(g["value"], rel=1e-9)
    for row in ref["advanced_composition"]:
        eps, _ = advanced_composition(row["k"], row["eps"], 0.0, row["delta_prime"])
        assert eps == pytest.approx(row["eps_total"], rel=1e-9)


def test_calculator_exports(client):
    r = client.post("/calculator/export?format=csv", data=CALC)
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == ["section", "name", "value"]
    assert any(row[0] == "warning" for row in rows) and any("classic sigma" in row[1] for row in rows)
    r = client.post("/calculator/export?format=pdf", data=CALC)
    assert r.status_code == 200 and r.content.startswith(b"%PDF")


def test_csv_export_escapes_formulas(client):
    data = dict(CALC, mode="laplace", epsilon="", scale="1")
    r = client.post("/calculator/export?format=csv", data=data)
    for row in csv.reader(io.StringIO(r.text)):
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@"))


def test_form_errors_are_shown_next_to_the_field(client):
    # a refused form answers 422 with the page (it answered 200); htmx swaps a 422 in (base.html)
    r = client.post("/calculator", data=dict(CALC, sensitivity="-1"))
    assert r.status_code == 422 and 'id="sensitivity-error"' in r.text and "sensitivity must be &gt; 0" in r.text
    r = client.post("/calculator", data=dict(CALC, epsilon="abc"))
    assert r.status_code == 422 and 'id="epsilon-error"' in r.text and "must be a number" in r.text
    r = client.post("/report", data={"kind": "dpsgd", "noise_multiplier": "2", "sample_rate": "1.5", "steps": "10"})
    # in the label's words beside its field (issue 25), no longer the code word sample_rate
    assert r.status_code == 422 and 'id="sample_rate-error"' in r.text and "Sample rate q must be at most 1" in r.text
    r = client.post("/report", data={"kind": "mechanism", "mechanism": "{not json"})
    assert r.status_code == 422 and "not valid JSON" in r.text


@pytest.mark.parametrize("path, query", [
    ("/convert", {"epsilon": "-1"}),
    ("/risk", {"guarantee": "mu", "mu": "-1", "prior": "0.01", "fpr": "0.001"}),
    ("/plan", {"guide": "utility_first", "effect": "0.2", "n": "-5", "sd": "0.25", "required_power": "0.8"}),
    ("/calibrate", {"target": "mu", "target_value": "-1"}),
    ("/compare", {"kind_1": "bogus"}),
    ("/sweep", {"task": "map", "noise_multiplier": "two", "sample_rate": "0.1", "steps": "10"}),
    ("/report", {"kind": "dpsgd", "noise_multiplier": "nan", "sample_rate": "0.1", "steps": "10"}),
])
def test_every_form_page_answers_422_with_its_errors(client, path, query):
    ok = client.get(path)
    assert ok.status_code == 200
    for r in (client.get(path, params=query), client.post(path, data=query)):
        assert r.status_code == 422, (path, r.status_code)
        assert 'role="alert"' in r.text and "<form" in r.text


def test_htmx_swaps_a_422_form_page():
    # htmx 2 swaps no 4xx by default; base.html's htmx-config swaps a 422 (a form with errors)
    import json
    import re

    from fdpkit.web.common import templates

    source = templates.env.loader.get_source(templates.env, "base.html")[0]
    config = json.loads(re.search(r'name="htmx-config" content=\'([^\']*)\'', source).group(1))
    rules = config["responseHandling"]
    first = next(rule for rule in rules if re.fullmatch(rule["code"].replace(".", r"\d"), "422"))
    assert first["swap"] is True and not first.get("error")
    assert next(rule for rule in rules if re.fullmatch(rule["code"].replace(".", r"\d"), "500"))["swap"] is False


def test_report_page_and_downloads(client):
    form = {"kind": "dpsgd", "noise_multiplier": "2", "sample_rate": "0.05", "steps": "50", "discretization": "0.001"}
    r = client.post("/report", data=form)
    assert r.status_code == 200 and "μ =" in r.text and r.text.count("<svg") >= 2
    # in the browser (htmx) the result comes first; the figures and representations follow
    first = client.post("/report", data=form, headers={"HX-Request": "true"})
    assert 'id="report-extras"' in first.text and "<svg" not in first.text and "μ =" in first.text
    extras = client.post("/report/extras", data=form, headers={"HX-Request": "true"})
    assert extras.text.count("<svg") >= 2 and "section-representations" in extras.text
    expected = fp.privacy_report(fp.dpsgd(2.0, 0.05, 50), discretization=1e-3).mu
    assert f"{expected:.4g}" in r.text
    for fmt, magic in (("json", b"{"), ("csv", b"\"# Privacy"), ("md", b"# "), ("html", b"<!DOCTYPE html>"), ("pdf", b"%PDF")):
        d = client.post(f"/report/download?format={fmt}", data=form)
        assert d.status_code == 200 and d.content.startswith(magic), fmt
    r = client.post("/report", data={"kind": "dpsgd", "noise_multiplier": "9.4", "batch_size": "16384",
                                     "dataset_size": "50000", "epochs": "1", "discretization": "0.001"})
    assert r.status_code == 200 and "μ =" in r.text


def test_report_api(client):
    r = client.post("/api/report/dpsgd", json=SMALL_DPSGD)
    assert r.status_code == 200 and r.json()["schema_version"] == "1.0"
    assert r.json()["provenance"]["discretization"] == 1e-3 and r.json()["provenance"]["discretization_rule"] == "given"
    spec = {"kind": "composed", "parts": [{"kind": "gaussian", "sigma": 2.0}, {"kind": "laplace", "scale": 2.0}]}
    r = client.post("/api/report", json={"mechanism": spec, "discretization": 1e-3})
    assert r.status_code == 200 and r.json()["mechanism"]["kind"] == "composed"
    r = client.post("/api/report?format=csv", json={"mechanism": {"kind": "gaussian", "sigma": 1.0}})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")


@pytest.mark.parametrize("body, needle", [
    ({"noise_multiplier": 2, "sample_rate": 0.05, "steps": 5_000_000}, "steps must be at most"),
    ({"noise_multiplier": 2, "sample_rate": 0.05, "steps": 10, "discretization": 1e-7}, "discretization must be at least"),
    ({"noise_multiplier": 0.001, "sample_rate": 0.05, "steps": 10}, "noise"),
    ({"noise_multiplier": 2, "sample_rate": 1.5, "steps": 10}, "sample_rate"),
    ({"noise_multiplier": 2, "steps": 10}, "sample_rate"),
    ({"noise_multiplier": -1, "sample_rate": 0.1, "steps": 10}, "noise_multiplier"),
])
def test_api_validation_is_422_with_message(client, body, needle):
    r = client.post("/api/report/dpsgd", json=body)
    assert r.status_code == 422 and needle in r.json()["detail"]


def test_too_many_parts_refused(client):
    spec = {"kind": "composed", "parts": [{"kind": "laplace", "scale": 1.0}] * 60}
    r = client.post("/api/report", json={"mechanism": spec})
    assert r.status_code == 422 and "at most 50 parts" in r.json()["detail"]


def test_convert_risk_plan(client):
    r = client.post("/api/convert", json={"epsilon": 1.0, "delta": 1e-5, "mu": 1.0}).json()
    assert r["pure_epsilon_to_mu"][0]["mu"] == pytest.approx(1.232035385344901, rel=1e-9)
    assert r["mu_to_epsilon"][0]["epsilon"] == pytest.approx(4.3772, abs=1e-4)
    assert client.post("/api/convert", json={}).status_code == 422
    r = client.post("/convert", data={"epsilon": "1", "delta": "", "mu": ""})
    assert r.status_code == 200 and "Prop. 6.1" in r.text
    assert len(client.get("/api/tables").json()["tables"]) == 5  # K&H 4b/5b/6b, Gomez Tables 3 and 2
    r = client.post("/api/risk", json={"guarantee": "mu", "mu": 1.0, "prior": 0.01, "fpr": 1e-3}).json()
    assert r["posterior"] == pytest.approx(0.156, abs=1e-3) and r["failure_mode"] == "graceful"
    assert len(r["plain_language"]) == 3
    r = client.post("/api/risk", json={"guarantee": "epsilon_delta", "epsilon": 1.0, "delta": 1e-5}).json()
    assert r["failure_mode"] == "catastrophic"
    assert client.post("/api/risk", json={"guarantee": "mu"}).status_code == 422
    r = client.post("/api/plan", json={"guide": "utility_first", "effect": 0.2, "n": 100, "sd": 0.25, "alpha": 0.01,
                                       "max_relative_loss": 0.01}).json()
    assert r["mu_min"] == pytest.approx(0.28597, rel=1e-3)
    r = client.post("/api/plan", json={"guide": "privacy_first", "max_relative_risk": 5.0, "high_confidence_ok": False})
    assert r.status_code == 200 and r.json()["admissible_families"] == ["bounded"]
    assert client.post("/api/plan", json={"guide": "utility_first"}).status_code == 422
    r = client.post("/plan", data={"guide": "utility_first", "effect": "0.2", "n": "2", "sd": "0.25", "alpha": "0.01",
                                   "required_power": "0.99"})
    assert r.status_code == 200 and "unreachable" in r.text


def test_openapi_lists_every_api(client):
    paths = client.get("/openapi.json").json()["paths"]
    for p in ("/api/calculator", "/api/report", "/api/report/dpsgd", "/api/convert", "/api/tables", "/api/risk", "/api/plan"):
        assert p in paths


CAL = {"epsilon": 3.0, "delta": 1e-5, "batch_size": 50, "dataset_size": 1000, "epochs": 2, "discretization": 1e-2}


def test_calibrate_page_and_json_twin(client):
    assert client.get("/calibrate").status_code == 200
    r = client.post("/api/calibrate/dpsgd", json=CAL)
    assert r.status_code == 200
    data = r.json()
    assert {"noise_multiplier", "mu", "epsilon", "tpr", "advantage", "posterior"} <= set(data)
    assert data["epsilon"] <= 3.0 and data["unknown"] == "noise_multiplier"
    assert data["warnings"] == []  # delta 1e-5 < 1/1000
    form = {"target": "epsilon", "target_value": "3", "delta": "1e-5", "batch_size": "50", "dataset_size": "1000",
            "epochs": "2", "discretization": "1e-2", "sampling": "poisson", "relation": "add-remove", "unit": "example"}
    page = client.post("/calibrate", data=form)
    assert page.status_code == 200 and 'id="copy-statement"' in page.text
    assert f"{data['noise_multiplier']:.4g}" in page.text  # the same number as the JSON twin
    assert 'id="grade"' in page.text and "What this grade means" in page.text  # the calibrated run, graded
    assert "Target: ε ≤ 3 at δ = 1e-05." in page.text  # the page's symbols; the JSON keeps the library's text
    bad = client.post("/api/calibrate/dpsgd", json={**CAL, "delta": None})
    assert bad.status_code == 422 and "delta" in bad.json()["detail"]
    bad = client.post("/api/calibrate/dpsgd", json={**CAL, "sampling": "shuffled"})
    assert bad.status_code == 422 and "reshuffles" in bad.json()["detail"]
    bad = client.post("/calibrate", data={**form, "target_value": ""})
    assert 'id="target_value-error"' in bad.text


def test_report_takes_the_training_setting(client):
    body = {"noise_multiplier": 2.0, "batch_size": 50, "dataset_size": 1000, "epochs": 2, "sampling": "shuffled",
            "relation": "replace-one", "discretization": 1e-2}
    d = client.post("/api/report/dpsgd", json=body).json()
    assert d["setting"]["sampling"] == "shuffled" and "not a guarantee" in d["comparison"]["label"]
    assert "replace-one" in d["paper_statement"]
    page = client.post("/report", data={"kind": "dpsgd", **{k: str(v) for k, v in body.items()}})
    assert 'id="statement"' in page.text and 'data-copy="statement"' in page.text
    assert page.text.count("Statement for the paper") == 1  # the card only, not the section again
    assert "What the guarantee is about" in page.text
    page = client.post("/report", data={"kind": "dpsgd", **{k: str(v) for k, v in body.items()}, "relation": "add-remove"})
    assert 'id="relation-error"' in page.text


def test_shuffled_report_whose_comparison_is_over_the_budget(client):
    # a shuffled run's guarantee is a closed form; its Poisson comparison (not a guarantee)
    # here would need far more than the server's budget: it once ran out of the worker's
    # memory (a 422 "ran out of memory" for a free guarantee); now the report answers
    # without it and says why
    body = {"noise_multiplier": 0.6, "batch_size": 5000, "dataset_size": 10000, "epochs": 2000,
            "sampling": "shuffled", "relation": "replace-one"}
    r = client.post("/api/report/dpsgd", json=body)
    assert r.status_code == 200, r.text[:300]
    d = r.json()
    assert d["comparison"] is None and d["guarantee"]["mu"] == pytest.approx(2 * math.sqrt(2000) / 0.6)
    assert any("is left out of this report" in w and "over the cost budget" in w for w in d["warnings"])
    # shown among the report's warnings, not filed away in its technical notes
    page = client.get("/report", params={"kind": "dpsgd", **{k: str(v) for k, v in body.items()}})
    warnings = page.text.split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    assert "is left out of this report" in warnings


def test_calibrate_warns_about_delta_and_targets():
    """delta >= 1/n (n = dataset size), a large delta, mu > 10: warned, not refused (issue 15)."""
    from fdpkit.web.routers.calibrate import _warnings

    assert "1/n" in _warnings({"epsilon": 3.0, "delta": 1e-4, "dataset_size": 60000})[0]
    assert "Did you mean ε" in _warnings({"mu": 12.0, "delta": 1e-5, "dataset_size": 60000})[0]
    assert _warnings({"mu": 1.0, "delta": 0.5, "dataset_size": 10}) == []  # delta only matters for an eps target


def _without_time(d: dict) -> dict:
    return {**d, "provenance": {k: v for k, v in d["provenance"].items() if k != "created_utc"}}


def test_report_api_is_the_library_report_at_its_default_discretization(client):
    """Issue 29 on the web: no discretization given -> the library's rule, the same numbers
    as ``fp.privacy_report`` and the rule stated in the provenance; the representations
    section (issue 27: about a second of Rényi accounting) is deferred to the route its entry
    names, which answers the library's section."""
    body = {k: v for k, v in SMALL_DPSGD.items() if k != "discretization"}
    d = client.post("/api/report/dpsgd", json=body).json()
    rep = fp.privacy_report(fp.dpsgd(2.0, 0.05, 50))
    deferred = d.pop("representations")
    assert _without_time(d) == _without_time(rep.to_dict(representations=False))
    assert d["provenance"]["discretization_rule"].startswith("default") and d["provenance"]["discretization"] == 1e-4
    assert deferred["deferred"] and deferred["body"] == {"mechanism": rep.mechanism.to_dict(), "discretization": None}
    spec = {"kind": "gaussian", "sigma": 2.0}
    d = client.post("/api/report", json={"mechanism": spec}).json()
    got = client.post(d["representations"]["href"], json=d["representations"]["body"]).json()
    assert got["representations"] == fp.privacy_report(fp.Gaussian(2.0)).representations().to_dict()
    inline = client.post("/api/report?representations=true", json={"mechanism": spec}).json()
    assert inline["representations"] == got["representations"]
    page = client.post("/report", data={"kind": "dpsgd", **{k: str(v) for k, v in body.items()}}).text
    assert "discretization rule" in page and "default 0.0001" in page


def test_report_api_takes_the_reports_deltas_as_the_cli_does(client):
    # /api/report/* took no deltas: a calibration to eps <= 2 at delta 2e-5 reported through the API
    # led with eps at 1e-5, while `fdpkit report --delta 2e-5` and the Report page lead with 2e-5
    from typer.testing import CliRunner

    from fdpkit.cli import app

    run = {"noise_multiplier": 1.1, "sample_rate": 0.01, "steps": 100}
    got = client.post("/api/report/dpsgd", json={**run, "deltas": [2e-5, 1e-6]})
    assert got.status_code == 200, got.text
    cli = json.loads(CliRunner().invoke(app, ["report", "--delta", "2e-5", "--delta", "1e-6", "-f", "json", "dpsgd",
                                              "--noise-multiplier", "1.1", "--sample-rate", "0.01",
                                              "--steps", "100"]).stdout)
    assert got.json()["epsilon_at_delta"] == cli["epsilon_at_delta"]
    assert [r["delta"] for r in got.json()["epsilon_at_delta"]] == [2e-5, 1e-6]
    md = client.post("/api/report/dpsgd?format=md", json={**run, "deltas": [2e-5]})
    assert md.status_code == 200 and "at δ = 2e-05" in md.text
    spec = {"mechanism": {"kind": "gaussian", "sigma": 1.0, "sensitivity": 1.0}}
    assert [r["delta"] for r in client.post("/api/report", json={**spec, "deltas": [1e-6]}).json()["epsilon_at_delta"]] == [1e-6]
    for route, body in (("/api/report/uniform-sampling", {"mu": 1.0, "n": 100}),
                        ("/api/report/points", {"points": "fpr,fnr\n0,1\n0.1,0.5\n1,0"})):
        assert client.post(route, json={**body, "deltas": [1e-3]}).json()["epsilon_at_delta"][0]["delta"] == 1e-3
    # without deltas: the body as before, the library's deltas
    assert [r["delta"] for r in client.post("/api/report/dpsgd", json=run).json()["epsilon_at_delta"]] == [1e-5, 1e-6, 1e-9]
    for bad in ([0], [1], [1.5], [-1e-5], ["x"], [], "1e-5", [1e-5] * 21):
        r = client.post("/api/report/dpsgd", json={**run, "deltas": bad})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"][:2] == ["body", "deltas"], (bad, r.text)
