"""JSON twins and forms of issue 15: the grade object, contradictory fields (422 naming
them), plausibility warnings, percentages, recommended conversions, plans ending in sigma."""

import pytest

#: Names used by checks outside this repository.
GRADE_KEYS = {"level", "label", "definition"}


@pytest.mark.parametrize("eps,level", [(0.1, 0), (2.0, 1), (3.0, 2), (10.0, 3)])
def test_api_risk_grade_object(client, eps, level):
    r = client.post("/api/risk", json={"guarantee": "epsilon", "epsilon": eps})
    assert r.status_code == 200
    g = r.json()["grade"]
    assert GRADE_KEYS <= set(g) and isinstance(g["level"], int) and isinstance(g["label"], str)
    assert g["level"] == level and g["definition"]


def test_api_risk_grade_is_monotone_in_mu(client):
    levels = [client.post("/api/risk", json={"guarantee": "mu", "mu": m}).json()["grade"]["level"]
              for m in (0.1, 0.5, 1.0, 2.0, 3.0, 6.0)]
    assert levels == sorted(levels) and levels[0] == 0 and levels[-1] == 3


@pytest.mark.parametrize("body,names", [
    ({"guarantee": "mu", "mu": 1, "epsilon": 1}, ["epsilon"]),
    ({"guarantee": "mu", "mu": 1, "delta": 1e-5}, ["delta"]),
    ({"guarantee": "mu", "mu": 1, "epsilon": 1, "delta": 1e-5}, ["epsilon", "delta"]),
    ({"guarantee": "epsilon", "epsilon": 1, "mu": 1}, ["mu"]),
    ({"guarantee": "epsilon", "epsilon": 1, "delta": 1e-5}, ["delta"]),
    ({"guarantee": "epsilon_delta", "epsilon": 1, "delta": 1e-5, "mu": 1}, ["mu"]),
])
def test_api_risk_refuses_contradictory_fields(client, body, names):
    r = client.post("/api/risk", json=body)
    assert r.status_code == 422
    detail = r.json()["detail"]
    for n in names:
        assert n in detail
    assert "does not apply" in detail or "do not apply" in detail


def test_api_risk_plausibility_warnings_and_notes(client):
    r = client.post("/api/risk", json={"guarantee": "mu", "mu": 12, "prior": 1}).json()
    assert any("Did you mean 1%" in w for w in r["warnings"]) and any("Did you mean ε" in w for w in r["warnings"])
    r = client.post("/api/risk", json={"guarantee": "epsilon_delta", "epsilon": 8, "delta": 0.01}).json()
    assert any("is large" in w for w in r["warnings"]) and r["grade"]["level"] == 3
    assert r["notes"][0].startswith("This is the worst case")
    r = client.post("/api/risk", json={"guarantee": "epsilon", "epsilon": 25}).json()
    assert any("no protection" in w for w in r["warnings"])



def test_risk_delta_at_least_one_over_n_is_warned(client):
    """delta >= 1/n: the JSON twin and the form take the optional number of people n."""
    r = client.post("/api/risk", json={"guarantee": "epsilon_delta", "epsilon": 1, "delta": 1e-4, "n": 50_000})
    assert r.status_code == 200 and any("1/n" in w for w in r.json()["warnings"])
    r = client.post("/api/risk", json={"guarantee": "epsilon_delta", "epsilon": 1, "delta": 1e-6, "n": 50_000})
    assert r.json()["warnings"] == []
    assert client.post("/api/risk", json={"guarantee": "mu", "mu": 1, "n": 0}).status_code == 422
    page = client.post("/risk", data={"guarantee": "epsilon_delta", "epsilon": "1", "delta": "1e-4", "n": "50000"})
    assert page.status_code == 200 and "1/n" in page.text
    page = client.post("/risk", data={"guarantee": "epsilon_delta", "epsilon": "1", "delta": "1e-4", "n": "-3"})
    assert "n (people in the data) must be a positive count" in page.text


def test_api_percent_string_is_refused_with_the_number_to_send(client):
    r = client.post("/api/risk", json={"guarantee": "mu", "mu": 1, "prior": "5%"})
    assert r.status_code == 422 and "send 0.05 for 5%" in r.json()["detail"]
    page = client.post("/risk", data={"guarantee": "mu", "mu": "1", "prior": "5%"})  # forms take it
    assert 'id="results"' in page.text and "0.05" in page.text

def test_api_plan_sigma_and_laplace_scale(client):
    r = client.post("/api/plan", json={"effect": 0.2, "n": 100, "sd": 0.25, "alpha": 0.01,
                                       "max_relative_loss": 0.01}).json()
    assert r["sigma"] == pytest.approx(0.01 / r["mu_min"], rel=1e-9)
    r = client.post("/api/plan", json={"guide": "privacy_first", "effect": 0.2, "n": 100, "sd": 0.25,
                                       "max_attack_power": 0.05, "statistic": "count"}).json()
    assert r["sigma"] == pytest.approx(1.0 / r["options"][0]["value"], rel=1e-9)
    assert r["laplace_scale"] == pytest.approx(1.0 / r["options"][1]["value"], rel=1e-9)
    r = client.post("/api/plan", json={"effect": 0.1, "n": 400, "sd": 0.5, "statistic": "proportion",
                                       "groups": 2, "alternative": "two-sided", "tests": 4,
                                       "required_power": 0.8}).json()
    assert r["analysis"]["level_per_test"] == pytest.approx(0.0125) and "sigma" in r


def test_api_convert_recommendation_and_heading(client):
    r = client.post("/api/convert", json={"epsilon": 1.0, "delta": 1e-5}).json()
    assert r["recommended_mu"]["question"] == "μ for (ε = 1, δ = 1e-05)"
    assert r["recommended_mu"]["value"] == pytest.approx(0.2681, abs=1e-4)
    r = client.post("/api/convert", json={"epsilon": 1.0}).json()
    assert r["recommended_mu"]["value"] == pytest.approx(1.232035385344901, rel=1e-9)
    assert len(r["recommended_mu"]["alternatives"]) == 8


def test_api_calculator_releases(client):
    r = client.post("/api/calculator", json={"mode": "composition", "releases": [[0.5, 0], [1.0, 0], [0.25, 0]]})
    assert r.status_code == 200 and r.json()["outputs"]["basic epsilon"] == pytest.approx(1.75)
    r = client.post("/api/calculator", json={"mode": "gaussian", "epsilon": 1, "delta": 0.5}).json()
    assert any("is large" in w for w in r["warnings"])


def test_forms_accept_percentages_and_refuse_with_hint(client):
    r = client.post("/risk", data={"guarantee": "mu", "mu": "1", "prior": "1%", "fpr": "0.1%"})
    assert r.status_code == 200 and 'id="grade"' in r.text and 'posterior">0.156' in r.text
    r = client.post("/risk", data={"guarantee": "mu", "mu": "1", "prior": "one", "fpr": "0.001"})
    assert "prior must be a number such as 0.05 (or 5%)" in r.text
    r = client.post("/risk", data={"guarantee": "mu", "mu": "1", "epsilon": "1"})
    assert "epsilon does not apply" in r.text
    r = client.post("/plan", data={"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25",
                                   "alpha": "1%", "max_relative_loss": "1%"})
    assert 'id="sigma"' in r.text and "σ =" in r.text


def test_pages_have_landmarks_and_live_region(client):
    for path in ("/calculator", "/report", "/convert", "/risk", "/plan"):
        html = client.get(path).text
        assert '<nav aria-label="Main">' in html and 'aria-live="polite"' in html and 'id="progress"' in html
        assert '/static/app.js' in html


#: The seed papers' figures (issue 15, item 5) on the pages: (page, form, a phrase of the plot's caption).
PAGE_FIGURES = [
    ("convert", {"epsilon": "1", "delta": ""}, "μ against pure ε under each semantics"),
    ("risk", {"guarantee": "mu", "mu": "1"}, "precision against recall"),
    ("risk", {"guarantee": "mu", "mu": "1"}, "Posterior after a positive attack against the attack's FPR"),
    ("plan", {"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25", "alpha": "0.01",
              "max_relative_loss": "0.01"}, "Power against the true shift of the mean"),
    ("plan", {"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25", "alpha": "0.01",
              "max_relative_loss": "0.01"}, "ROC of the planned test under DP noise"),
    ("calculator", {"mode": "gaussian", "sensitivity": "1", "epsilon": "1", "delta": "1e-5"},
     "ε against the noise scale"),
    ("report", {"kind": "mechanism", "mechanism": '{"kind": "gaussian", "sigma": 2}', "discretization": "0.01"},
     "on a log FPR axis"),
]


@pytest.mark.parametrize("page,form,caption", PAGE_FIGURES)
def test_each_new_figure_is_on_its_page(client, page, form, caption):
    r = client.post(f"/{page}", data=form)
    assert r.status_code == 200 and 'id="results"' in r.text
    text = r.text.replace("&#39;", "'")  # captions are HTML-escaped
    assert caption in text, caption
    assert "<svg" in text and 'role="img"' in text
