"""Compare page and /api/compare (issue 15): several guarantees on one trade-off plot, in real
Chromium at desktop and 375-px widths (no horizontal overflow, screenshots saved as
artifacts, the plot's accessible name and legend), and the JSON twin with 422s naming the field."""

import math
import os
from pathlib import Path

import pytest
from _pages import no_overflow  # noqa: E402
from scipy import stats

SHOTS = Path(os.environ.get("FDPKIT_SCREENSHOTS", "/tmp/fdpkit-screenshots")) / "issue15"
WIDTHS = {"desktop": 1200, "phone": 375}
CLOSED_FORM_RTOL = 1e-9


# ----------------------------------------------------------------------------- API
def test_api_compare_curves_and_summary(client):
    body = {"curves": [{"kind": "mu", "mu": 1}, {"kind": "epsilon_delta", "epsilon": 1, "delta": 1e-5},
                       {"kind": "laplace", "scale": 0.5, "sensitivity": 1}, {"kind": "gaussian", "sigma": 2}],
            "points": 3}
    r = client.post("/api/compare", json=body)
    assert r.status_code == 200, r.text
    d = r.json()
    assert [c["kind"] for c in d["curves"]] == ["mu", "epsilon_delta", "laplace", "gaussian"]
    mu = d["curves"][0]
    assert mu["alpha"] == [0.0, 0.5, 1.0]
    assert mu["beta"][1] == pytest.approx(stats.norm.cdf(stats.norm.isf(0.5) - 1), rel=CLOSED_FORM_RTOL)
    assert d["curves"][2]["parameters"]["epsilon"] == pytest.approx(2.0)
    assert d["curves"][3]["parameters"]["mu"] == pytest.approx(0.5)
    assert d["summary"][1]["tpr_at_fpr"]["0.001"] == pytest.approx(math.e * 1e-3 + 1e-5, rel=1e-9)


@pytest.mark.parametrize("body,field", [
    ({"curves": [{"kind": "mu", "epsilon": 1}]}, "curves[0].epsilon"),
    ({"curves": [{"kind": "gaussian"}]}, "curves[0].sigma"),
    ({"curves": [{"kind": "mu", "mu": 1}] * 9}, "curves"),
    ({"curves": []}, "curves"),
    ({"curves": [{"kind": "mu", "mu": -1}]}, "mu"),
    ({"curves": [{"kind": "nope"}]}, "kind"),
    ({"curves": [{"kind": "mu", "mu": 1}], "points": 10**6}, "points"),
])
def test_api_compare_bad_input_is_422_naming_the_field(client, body, field):
    r = client.post("/api/compare", json=body)
    assert r.status_code == 422 and field in r.text


def test_page_errors_name_the_row(client):
    r = client.post("/compare", data={"kind_1": "mu", "value_1": "1", "kind_2": "epsilon_delta", "value_2": "1",
                                      "delta_2": "2"})
    # in the page's words: "Curve 2" (it read "curves[1].delta", the filled rows counted from 0,
    # an empty row skipped); a value as typed ("2", not "2.0")
    assert 'id="delta_2-error"' in r.text and "Curve 2: delta must be at most 1, got &#39;2&#39;" in r.text
    r = client.post("/compare", data={"kind_2": "mu", "value_2": "1", "kind_3": "mu", "value_3": "-1"})
    assert 'id="value_3-error"' in r.text and "Curve 3: mu must be at least 0" in r.text
    r = client.post("/compare", data={"kind_1": "gaussian", "value_1": "abc"})
    assert 'id="value_1-error"' in r.text
    r = client.post("/compare", data={})
    assert 'id="kind_1-error"' in r.text


# ----------------------------------------------------------------------------- browser
# (the shared ``browser`` fixture of tests/conftest.py: one policy when chromium is missing)




@pytest.mark.browser
@pytest.mark.parametrize("size", list(WIDTHS))
def test_compare_page_plots_several_curves(browser, live_server, size):
    ctx = browser.new_context(viewport={"width": WIDTHS[size], "height": 900})
    pg = ctx.new_page()
    try:
        pg.goto(f"{live_server}/compare")
        no_overflow(pg)
        # on a phone the links sit in the closed menu, whose summary names the current page
        assert pg.locator("nav a[aria-current=page]").text_content() == "Compare curves"
        assert pg.inner_text("#menu-button" if size == "phone" else "nav a[aria-current=page]").endswith(
            "Compare curves")
        # a fifth curve from "More curves": pure epsilon
        pg.click("#more-curves summary")
        pg.select_option("#kind_5", "epsilon")
        pg.fill("#value_5", "0.5")
        # and a mechanism's own curve, accounted in a worker process
        pg.click("#mechanism-curve summary")
        pg.fill("#mechanism", '{"kind": "repeated", "inner": {"kind": "laplace", "scale": 2}, "times": 3}')
        pg.click("#submit")
        pg.wait_for_selector("#results", timeout=60_000)
        from playwright.sync_api import expect
        expect(pg.locator("#live")).not_to_have_text("", timeout=30_000)  # no eval under the CSP
        assert pg.evaluate("document.activeElement.id") == "results"
        assert pg.inner_text("#live").startswith("Result: 6 trade-off curves")
        svg = pg.locator("#compare-figure svg")
        name = svg.get_attribute("aria-label")
        assert svg.get_attribute("role") == "img" and name.startswith("Trade-off curves: μ = 1 GDP")
        assert "(ε, δ) = (1, 1e-05)" in name and "pure ε = 0.5" in name
        assert pg.locator("#compare-figure svg > title").first.text_content() == name
        assert pg.locator("#compare-table tbody tr").count() == 6
        assert "lower" in pg.inner_text("#compare-table")
        no_overflow(pg)
        # every figure on the screen: on a phone the table stacks, one card per curve (its last
        # column was cut off at the screen's edge, in a box scrolled sideways)
        for cell in pg.locator("#compare-table td").all():
            box = cell.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTHS[size], (cell.inner_text(), box)
        SHOTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(SHOTS / f"compare-{size}.png"), full_page=True)
    finally:
        ctx.close()


# ----------------------------------------------------------------------------- mechanism specs
def test_api_compare_mechanism_is_accounted_as_a_lower_bound(client):
    body = {"curves": [{"kind": "mechanism", "spec": {"kind": "repeated", "inner": {"kind": "laplace", "scale": 2},
                                                      "times": 3}},
                       {"kind": "epsilon", "epsilon": 1.5}], "points": 51, "discretization": 1e-3}
    r = client.post("/api/compare", json=body)
    assert r.status_code == 200, r.text
    mech, worst = r.json()["curves"]
    assert mech["kind"] == "mechanism" and mech["bound"] == "lower"
    # 3 Laplace releases at epsilon 1/2 are 1.5-DP: their (lower-bound) curve lies above f_{1.5,0}
    assert all(m >= w - 1e-9 for m, w in zip(mech["beta"], worst["beta"]))


@pytest.mark.parametrize("spec,field", [({"kind": "laplace"}, "curves[0].spec"),
                                        ({"kind": "gaussian", "sigma": 0.01}, "noise"),
                                        ({"kind": "repeated", "inner": {"kind": "gaussian", "sigma": 1},
                                          "times": 10**7}, "steps")])
def test_api_compare_mechanism_limits_are_422(client, spec, field):
    r = client.post("/api/compare", json={"curves": [{"kind": "mechanism", "spec": spec}]})
    assert r.status_code == 422 and field in r.text


def test_page_mechanism_curve_and_errors(client):
    r = client.post("/compare", data={"kind_1": "mu", "value_1": "1",
                                      "mechanism": '{"kind": "laplace", "scale": 1}', "discretization": "0.001"})
    assert r.status_code == 200 and 'id="results"' in r.text and "Laplace(scale=1.0" in r.text
    r = client.post("/compare", data={"kind_1": "mu", "value_1": "1", "mechanism": "{not json"})
    assert 'id="mechanism-error"' in r.text
