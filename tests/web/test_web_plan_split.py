"""Plan page and /api/plan: several tests share the budget; two-sample Laplace power (issue 15)."""

import math

import pytest

CLOSED_FORM_RTOL = 1e-9


def test_api_plan_split_keeps_sigma_and_laplace_scale(client):
    r = client.post("/api/plan", json={"guide": "privacy_first", "effect": 0.1, "n": 200, "sd": 0.25, "groups": 2,
                                       "tests": 4, "max_attack_power": 0.05, "fpr": 0.001})
    assert r.status_code == 200, r.text
    d = r.json()
    gauss, lap = d["options"]
    assert d["sigma"] == pytest.approx((1 / 200) / (gauss["value"] / 2), rel=CLOSED_FORM_RTOL)
    assert d["laplace_scale"] == pytest.approx((1 / 200) / (lap["value"] / 4), rel=CLOSED_FORM_RTOL)
    assert 0 < lap["power"] < 1 and d["budget_split"]["tests"] == 4
    r = client.post("/api/plan", json={"effect": 0.2, "n": 100, "sd": 0.25, "tests": 5, "required_power": 0.9})
    d = r.json()
    assert d["mu_total"] == pytest.approx(math.sqrt(5) * d["mu_min"], rel=CLOSED_FORM_RTOL)
    assert d["sigma"] == pytest.approx(0.01 / d["mu_min"], rel=CLOSED_FORM_RTOL)


def test_api_plan_bad_tests_is_422(client):
    r = client.post("/api/plan", json={"effect": 0.2, "n": 100, "sd": 0.25, "tests": 0, "required_power": 0.9})
    assert r.status_code == 422 and "tests" in r.text


def test_plan_page_shows_the_split(client):
    r = client.post("/plan", data={"guide": "privacy_first", "effect": "0.1", "n": "200", "sd": "0.25",
                                   "groups": "2", "tests": "3", "max_attack_power": "5%", "alpha": "0.05",
                                   "data_range": "1", "prior": "0.01", "fpr": "0.001", "high_confidence_ok": "on"})
    assert r.status_code == 200
    assert 'id="budget-split"' in r.text and "per test" in r.text and 'id="laplace-method"' in r.text
    r = client.post("/plan", data={"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25",
                                   "tests": "0", "required_power": "0.9", "alpha": "0.05"})
    assert "tests" in r.text and 'id="budget-split"' not in r.text


def test_plan_relative_risk_that_cannot_bind_and_refused_attack_power(client):
    body = {"guide": "privacy_first", "effect": 0.1, "n": 1000, "sd": 1, "fpr": 0.1, "max_relative_risk": 50}
    d = client.post("/api/plan", json=body).json()
    assert d["options"][0]["value"] == "inf" and d["options"][0]["relative_risk"] == pytest.approx(10.0)
    r = client.post("/plan", data={**{k: str(v) for k, v in body.items()}, "high_confidence_ok": "on"})
    assert "none needed" in r.text and "does not bind" in r.text and "{&#39;kind&#39;" not in r.text
    r = client.post("/api/plan", json={**body, "max_relative_risk": None, "max_attack_power": 0.05})
    assert r.status_code == 422 and r.json()["parameter"] == "max_attack_power"
    assert r.json()["detail"].startswith("max_attack_power must be above fpr")


PRIVACY_FIRST = {"guide": "privacy_first", "effect": "0.2", "n": "500", "sd": "0.5", "max_relative_risk": "10",
                 "fpr": "0.1"}


def _names(page: str) -> list[str]:
    import re

    body = re.search(r'<table id="options".*?</table>', page, re.S).group(0)
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<tr[^>]*><td[^>]*>(.*?)</td>", body, re.S)]


def test_plan_link_without_the_box_means_the_cli_default(client):
    # a hand-made /plan link without high_confidence_ok meant "off" (Laplace only), while
    # `fdpkit plan` and /api/plan default to on; an unticked box must still say "off"
    default = client.get("/plan", params=PRIVACY_FIRST).text
    assert _names(default) == ["Gaussian (μ-GDP)", "Laplace (recommended)"]
    assert 'id="high_confidence_ok" name="high_confidence_ok" checked' in default
    assert '<input type="hidden" name="high_confidence_ok" value="off">' in default
    off = client.get("/plan", params={**PRIVACY_FIRST, "high_confidence_ok": "off"}).text
    assert _names(off) == ["Laplace"]
    assert 'id="high_confidence_ok" name="high_confidence_ok" >' in off
    ticked = client.get("/plan?" + "&".join(f"{k}={v}" for k, v in PRIVACY_FIRST.items())
                        + "&high_confidence_ok=off&high_confidence_ok=on").text
    assert _names(ticked) == _names(default)
    api = client.post("/api/plan", json={k: float(v) if k != "guide" else v for k, v in PRIVACY_FIRST.items()}).json()
    assert [o["name"] for o in api["options"]] == ["Gaussian (mu-GDP)", "Laplace"]
    bad = client.get("/plan", params={**PRIVACY_FIRST, "high_confidence_ok": "maybe"}).text
    assert 'id="form-error"' in bad and "high_confidence_ok must be on or off" in bad


def test_plan_page_leads_with_the_option_to_follow(client):
    from html import unescape

    page = unescape(client.get("/plan", params=PRIVACY_FIRST).text)
    head = page.index('id="plan-headline"')
    assert head < page.index('id="grade"') < page.index('id="options"')
    assert "Recommended: the Laplace option" in page[head:head + 300]
    assert "no meaningful protection" not in page[page.index('id="grade"'):page.index('id="options"')]
