"""One verdict everywhere on the web: the manager's plain first sentence, permalinks (GET with
query parameters renders the answer), the calculator's tight epsilon and grades."""

import re

import pytest

import fdpkit as fp


def test_risk_permalink_renders_the_answer(client):
    r = client.get("/risk?guarantee=epsilon&epsilon=8")
    assert r.status_code == 200 and 'id="results"' in r.text
    head = re.search(r'id="headline"><strong>(.*?)</strong>', r.text).group(1)
    assert head.startswith("ε = 8 alone: no meaningful protection in the worst case; ask for the mechanism — "
                           "as a Gaussian mechanism it would be &#39;weak&#39;")
    assert 'href="/convert?epsilon=8' in r.text and 'href="/calculator?' in r.text
    assert "2981" in r.text and "fixed factor" not in r.text  # e^8, not "a fixed factor"
    assert 'hx-push-url="true"' in r.text and 'method="get"' in r.text
    blank = client.get("/risk")
    assert 'id="results"' not in blank.text


def test_risk_wording_and_blank_delta(client):
    r = client.post("/api/risk", json={"guarantee": "epsilon_delta", "epsilon": 1}).json()
    assert any("δ was left blank" in w for w in r["warnings"])
    assert "wrongly flag at most" not in r["plain_language"][0]
    assert "0.10% or more" in r["plain_language"][0]
    assert r["headline"] and r["gaussian_grade"]["label"] == "strong"


def test_catastrophic_is_never_better_than_weak_everywhere(client):
    rep = fp.privacy_report(fp.UniformSampling(0.05, 1000))
    assert rep.grade.level == 2 and rep.grade.label == "weak" and "catastrophic" in rep.grade.reason
    assert "Protection: weak" in rep.to_html() and "catastrophic" in rep.to_html()
    # the same guarantee, the same grade on the web report page
    page = client.post("/api/report/uniform-sampling", json={"mu": 0.05, "n": 1000})
    assert page.status_code == 200 and page.json()["grade"]["level"] == 2


def test_convert_permalink_same_grade_as_risk(client):
    r = client.get("/convert?epsilon=8")
    assert r.status_code == 200 and 'id="results"' in r.text
    assert "no meaningful protection in the worst case" in r.text and 'href="/risk?guarantee=epsilon&amp;epsilon=8' in r.text
    risk = client.post("/api/risk", json={"guarantee": "epsilon", "epsilon": 8}).json()
    conv = client.post("/api/convert", json={"epsilon": 8}).json()
    assert conv["verdict"]["grade"]["level"] == risk["grade"]["level"] == 3
    assert conv["verdict"]["gaussian_grade"]["label"] == risk["gaussian_grade"]["label"] == "weak"


def test_calculator_tight_epsilon_and_grade(client):
    r = client.post("/api/calculator", json={"mode": "composition", "epsilon": 0.2, "delta": 0, "k": 50,
                                             "delta_prime": 1e-5}).json()
    ref = fp.privacy_report(fp.Repeated(fp.PureDP(0.2), 50)).epsilon_for_delta(1e-5)
    assert r["outputs"]["tight epsilon"] == pytest.approx(6.3078, abs=1e-4) == ref
    assert r["outputs"]["tight epsilon"] <= r["outputs"]["basic epsilon"]
    assert r["grade"]["label"] == fp.privacy_report(fp.Repeated(fp.PureDP(0.2), 50)).grade.label
    four = client.post("/api/calculator", json={"mode": "composition", "epsilon": 2, "delta": 0, "k": 4}).json()
    assert not any("use the basic total" in w for w in four["warnings"])
    assert any("tight epsilon" in w for w in four["warnings"])
    for body in ({"mode": "laplace", "epsilon": 1}, {"mode": "gaussian", "epsilon": 1, "delta": 1e-5},
                 {"mode": "composition", "releases": [[0.5, 0], [1, 0], [0.25, 0]]}):
        assert client.post("/api/calculator", json=body).json()["grade"]["level"] in (0, 1, 2, 3)


def test_calculator_permalink(client):
    r = client.get("/calculator?mode=composition&epsilon=0.2&delta=0&k=50")
    assert r.status_code == 200 and 'id="results"' in r.text and 'data-name="tight epsilon">6.308' in r.text
    assert 'id="grade"' in r.text


@pytest.mark.parametrize("path", ["/report", "/calibrate", "/sweep"])
def test_scheme_guide_on_dpsgd_pages(client, path):
    t = client.get(path).text
    assert 'id="scheme-guide"' in t and "Which scheme was my run?" in t
    assert "make_private" in t and "DataLoader(shuffle=True)" in t and "jax_privacy" in t
    assert "retrain with Poisson sampling" in t and "replace-one" in t and "zero-out" in t


def test_plans_are_graded(client):
    u = client.post("/api/plan", json={"guide": "utility_first", "effect": 0.2, "n": 100, "sd": 0.25, "alpha": 0.01,
                                       "max_relative_loss": 0.01}).json()
    assert u["grade"]["level"] == fp.grade(fp.GaussianCurve(u["mu_total"])).level
    p = client.post("/api/plan", json={"guide": "privacy_first", "effect": 0.2, "n": 100, "sd": 0.25,
                                       "max_attack_power": 0.05, "statistic": "count"}).json()
    assert p["grade"]["label"] and all("grade" in o and o["grade"]["level"] in (0, 1, 2, 3) for o in p["options"])
    page = client.post("/plan", data={"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25",
                                      "alpha": "0.01", "max_relative_loss": "0.01"})
    assert page.status_code == 200 and 'id="grade"' in page.text


@pytest.mark.parametrize("url,marker", [
    ("/plan?guide=utility_first&effect=0.2&n=100&sd=0.25&alpha=0.01&max_relative_loss=0.01", 'id="mu-min"'),
    ("/report?kind=dpsgd&noise_multiplier=2&sample_rate=0.05&steps=20&discretization=0.001", 'id="grade"'),
    ("/calibrate?target=mu&target_value=1&sample_rate=0.01&steps=100&discretization=0.001", 'id="grade"'),
])
def test_permalinks_render_the_answer(client, url, marker):
    r = client.get(url)
    assert r.status_code == 200 and marker in r.text and 'hx-push-url="true"' in r.text


def test_web_report_drop_last(client):
    body = {"noise_multiplier": 1.1, "batch_size": 256, "dataset_size": 60000, "epochs": 60,
            "sampling": "shuffled", "relation": "replace-one"}
    a = client.post("/api/report/dpsgd", json=body).json()
    b = client.post("/api/report/dpsgd", json={**body, "drop_last": True}).json()
    assert a["mechanism"]["steps"] == 14100 and b["mechanism"]["steps"] == 14040
    assert "sample rate" not in a["paper_statement"]
    page = client.post("/report", data={"kind": "dpsgd", **{k: str(v) for k, v in body.items()}, "drop_last": "on"})
    assert page.status_code == 200 and "14,040 steps" in page.text


@pytest.mark.parametrize("url", ["/risk?guarantee=mu&mu=1", "/convert?epsilon=1&delta=1e-5"])
def test_infinite_values_are_shown_as_the_symbol(client, url):
    """Infinite readings (the relative risk of a mu-GDP guarantee; mu of any (epsilon,
    delta)-DP mechanism) read as ∞ on the page, not as the JSON answers' string "inf"."""
    r = client.get(url)
    assert r.status_code == 200 and 'id="results"' in r.text
    cells = re.findall(r"<td[^>]*>(.*?)</td>", r.text)  # cells with an id (the Risk page names its rows)
    assert any("∞" in c for c in cells)
    assert not any(re.search(r"\binf\b", c) for c in cells)


def test_risk_people_must_be_a_whole_count(client):
    r = client.post("/api/risk", json={"guarantee": "epsilon_delta", "epsilon": 1, "delta": 0.01, "n": 0.5})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][-1] == "n"
    ok = client.post("/api/risk", json={"guarantee": "epsilon_delta", "epsilon": 1, "delta": 0.01, "n": 1000})
    assert ok.status_code == 200 and any("1/n" in w for w in ok.json()["warnings"])
    page = client.get("/risk?guarantee=epsilon_delta&epsilon=1&delta=0.01&n=0.5")
    assert 'id="n-error"' in page.text and "positive count" in page.text
