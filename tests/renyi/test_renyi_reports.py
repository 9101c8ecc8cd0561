"""The representations table (Gomez et al. Fig. 1c, Sec. 4) in privacy_report and every
report format; the Rényi guarantees through the CLI and the web app."""

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit.cli import app
from fdpkit.report import build_document, render_document

SCHEMA = Path(__file__).resolve().parents[2] / "src" / "fdpkit" / "report" / "report.schema.json"
runner = CliRunner()


@pytest.fixture(scope="module")
def headline():
    """Gomez et al.'s DP-SGD setting (sigma 9.4, q 2^14/50000, 2000 steps)."""
    return fp.privacy_report(fp.dpsgd(9.4, 0.32768, 2000))


def test_fig1c_ordering_for_dpsgd(headline):
    reps = headline.representations()
    gdp, rdp = reps.regret_of("gdp"), reps.regret_of("rdp")
    zcdp, ed = reps.regret_of("zcdp"), reps.regret_of("epsilon_delta")
    assert gdp < rdp < zcdp
    assert rdp < ed
    assert gdp == headline.regret
    assert reps.recommended == "gdp"
    assert "μ-GDP" in reps.advice


def test_representation_curves_are_pessimistic(headline):
    """Each representation's curve lies below the mechanism's certified curve."""
    import numpy as np

    a = np.geomspace(1e-10, 0.5, 200)
    for name, c in headline.representations().curves.items():
        if name != "mechanism":
            assert (c.beta(a) <= headline.curve.beta(a) + 1e-9).all(), name


def test_fallback_advice_when_gdp_fits_badly():
    r = fp.privacy_report(fp.Laplace(scale=1.0))  # mu-GDP regret of Laplace is large
    reps = r.representations()
    assert r.regret >= 0.01
    assert reps.recommended != "gdp"
    assert "privacy profile" in reps.advice
    r = fp.privacy_report(fp.ApproxDP(1.0, 1e-3))  # mu = inf, and eps = inf at delta 1e-5
    reps = r.representations()
    assert math.isinf(reps.regret_of("gdp")) and math.isinf(reps.regret_of("zcdp"))
    assert "μ = ∞" in reps.advice and reps.recommended == "profile"


def test_zcdp_report_and_schema():
    import jsonschema_rs

    r = fp.privacy_report(fp.ZCDP(0.5))
    assert r.method == "RDP" and r.curve.bound == "lower" and r.failure_mode == "graceful"
    assert r.mu >= 1.0  # never more optimistic than the Gaussian that is exactly 0.5-zCDP
    # epsilon at delta: the optimal conversion, and never below the Gaussian's
    assert r.epsilon_for_delta(1e-5) == pytest.approx(fp.epsilon_for_delta_from_rho(0.5, 1e-5), rel=1e-9)
    assert r.epsilon_for_delta(1e-9) >= fp.epsilon_for_delta_from_mu(1.0, 1e-9)
    doc = build_document(r)
    data = json.loads(render_document(doc, "json"))
    jsonschema_rs.validate(json.loads(SCHEMA.read_text()), data)
    rows = {row["key"]: row for row in data["representations"]["rows"]}
    assert rows["zcdp"]["regret"] == pytest.approx(0.0, abs=1e-12)  # rho* = rho: the guarantee itself
    for fmt in ("md", "html", "csv"):
        text = render_document(doc, fmt).decode()
        assert "Regret of each representation" in text and "ρ-zCDP" in text


def test_pdf_has_the_representations_section():
    import io

    import pypdf

    doc = build_document(fp.privacy_report(fp.RDP([2, 4, 8, 16], [0.2, 0.5, 1.2, 3.0])))
    reader = pypdf.PdfReader(io.BytesIO(render_document(doc, "pdf")))
    text = "\n".join(p.extract_text() for p in reader.pages)
    assert "Regret of each representation" in text


def test_cli_report_zcdp_and_rdp():
    r = runner.invoke(app, ["report", "zcdp", "--rho", "0.5", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["mechanism"] == {"kind": "zcdp", "rho": 0.5}
    r = runner.invoke(app, ["report", "rdp", "--order", "2", "--order", "4", "--epsilon", "0.2", "--epsilon", "0.5"])
    assert r.exit_code == 0, r.output
    assert "Regret of each representation" in r.output


@pytest.mark.parametrize("args, word", [
    (["report", "zcdp", "--rho", "-1"], "rho"),
    (["report", "rdp", "--order", "1", "--epsilon", "0.2"], "--order must be > 1"),  # the option as typed
    (["report", "rdp", "--order", "2", "--order", "3", "--epsilon", "0.3", "--epsilon", "0.1"],
     "--epsilon must be non-decreasing"),  # the option as typed (was "epsilons")
    (["report", "rdp", "--order", "2", "--order", "3", "--epsilon", "0.3"], "same length"),
    (["risk", "--zcdp", "-0.5"], "--zcdp must be >= 0"),  # the option as typed (was "rho")
    (["convert", "rho-to-eps", "--rho", "nan"], "rho"),
])
def test_cli_bad_input_exit_2_one_line(args, word):
    r = runner.invoke(app, args)
    assert r.exit_code == 2
    lines = [x for x in r.output.strip().splitlines() if x]
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in r.output


def test_cli_risk_and_convert():
    r = runner.invoke(app, ["risk", "--zcdp", "0.5", "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["failure_mode"] == "graceful"
    r = runner.invoke(app, ["convert", "rho-to-mu", "--rho", "0.5", "--format", "json"])
    data = json.loads(r.stdout)
    assert data["gaussian_mu"] == 1.0 and data["mu_bound"] > 1.0
    r = runner.invoke(app, ["convert", "mu-to-rho", "--mu", "1", "--format", "json"])
    assert json.loads(r.stdout)["rho"] == 0.5
    r = runner.invoke(app, ["convert", "rho-to-eps", "--rho", "0.5", "--delta", "1e-5", "--format", "json"])
    row = json.loads(r.stdout)["epsilon_at_delta"][0]
    assert row["epsilon"] < row["epsilon_classic"]
    r = runner.invoke(app, ["convert", "rdp-to-eps", "--order", "2", "--order", "8", "--epsilon", "0.5",
                            "--epsilon", "2", "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["epsilon_at_delta"][0]["epsilon"] > 0


@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from fdpkit.web.main import create_app

    return TestClient(create_app())


def test_web_risk_and_convert_take_rho(client):
    r = client.post("/api/risk", json={"guarantee": "zcdp", "rho": 0.5})
    assert r.status_code == 200 and r.json()["failure_mode"] == "graceful"
    r = client.post("/api/convert", json={"rho": 0.5, "delta": 1e-5})
    body = r.json()["rho"]
    assert body["gaussian_mu"] == 1.0 and body["epsilon_at_delta"][0]["epsilon"] < body["epsilon_at_delta"][0]["epsilon_classic"]
    page = client.post("/convert", data={"rho": "0.5"})
    assert page.status_code == 200 and "rho-to-eps" in page.text
    page = client.post("/risk", data={"guarantee": "zcdp", "rho": "0.5", "prior": "0.01", "fpr": "0.001"})
    assert page.status_code == 200 and "ρ = 0.5 zCDP" in page.text


@pytest.mark.parametrize("path, body", [
    ("/api/risk", {"guarantee": "zcdp"}),
    ("/api/risk", {"guarantee": "zcdp", "rho": -1}),
    ("/api/convert", {"rho": -0.5}),
    ("/api/report", {"mechanism": {"kind": "rdp", "orders": [2, 3], "epsilons": [0.3, 0.1]}}),
    ("/api/report", {"mechanism": {"kind": "zcdp", "rho": -2}}),
])
def test_web_bad_input_422(client, path, body):
    assert client.post(path, json=body).status_code == 422


def test_web_form_error_names_rho(client):
    page = client.post("/risk", data={"guarantee": "zcdp", "rho": "-2", "prior": "0.01", "fpr": "0.001"})
    assert page.status_code == 422 and "rho must be" in page.text
