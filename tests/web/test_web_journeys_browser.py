"""Journeys in real Chromium at desktop and phone widths (session 10): from a report on to
Convert and Risk by its links, with the safe-side μ and the report's own ε carried (no
re-typing, no unexplained second ε), and the Plan page's yes/no box kept as answered (a link
without it means the CLI's default; unticked means no). Screenshots under
$FDPKIT_SCREENSHOTS/journeys."""

import os
import re
from pathlib import Path

import pytest
from _pages import no_overflow, open_page, shot  # noqa: E402

pytestmark = [pytest.mark.browser]  # the shared ``browser`` and ``live_server`` of tests/conftest.py
SHOTS = Path(os.environ.get("FDPKIT_SCREENSHOTS", "/tmp/fdpkit-screenshots")) / "journeys"
WIDTHS = {"desktop": 1280, "phone": 390}


@pytest.fixture(params=list(WIDTHS))
def pg(request, browser):
    ctx, page = open_page(browser, request.param, WIDTHS[request.param])
    yield page
    ctx.close()


def _shot(pg, name):
    shot(pg, SHOTS, name)




def test_report_to_convert_and_risk_by_its_links(pg, live_server):
    pg.goto(f"{live_server}/report")
    for name, value in (("noise_multiplier", "1.1"), ("batch_size", "50"), ("dataset_size", "1000"),
                        ("epochs", "2"), ("discretization", "1e-2")):
        pg.fill(f"#{name}", value)
    pg.click("#submit")
    pg.wait_for_selector("#next-links", timeout=90_000)
    shown_mu = float(pg.inner_text("#mu").split("=")[1])
    carried = float(re.search(r"μ\s*=\s*([0-9.]+), rounded up", pg.inner_text("#next-links")).group(1))
    assert carried >= shown_mu and f"{carried:.4g}" == f"{carried}"  # 4 digits, never below the report's μ
    report_eps = float(pg.inner_text("#headline tr:nth-child(2) td"))
    no_overflow(pg)
    _shot(pg, "report")
    pg.click("#convert-link")
    pg.wait_for_selector("#profile-note", timeout=30_000)
    assert f"mu={carried}" in pg.url and pg.input_value("#mu") == str(carried)
    assert "profile_sig=" in pg.url  # the report signs the figures it carries; Convert checks them
    assert "from μ-GDP alone" in pg.inner_text("#recommended-epsilon")
    note = pg.inner_text("#profile-note")
    quoted = float(re.search(r"the tighter ε = ([0-9.]+) at δ = 1e-05", note).group(1))
    assert report_eps <= quoted <= report_eps + 1e-3  # the report's ε, rounded up
    no_overflow(pg)
    _shot(pg, "convert-from-report")
    pg.goto(re.sub(r"profile_epsilon=[^&]*", "profile_epsilon=0.001", pg.url))  # a changed link
    pg.wait_for_selector("#profile-unverified", timeout=30_000)
    assert pg.locator("#profile-note").count() == 0 and "from μ-GDP alone" in pg.inner_text("#recommended-epsilon")
    pg.go_back()
    pg.go_back()
    pg.wait_for_selector("#risk-link", timeout=90_000)
    pg.click("#risk-link")
    pg.wait_for_selector("#results", timeout=30_000)
    assert pg.input_value("#mu") == str(carried) and f"μ = {carried}" in pg.inner_text("#headline")
    _shot(pg, "risk-from-report")
    # the link carries μ's range (FPR and FNR >= 1e-10, τ beyond), kept by the form: read at FPR
    # 1e-12 the page gave μ-GDP's TPR, below what the report certifies for the run there
    assert "mu_fpr_min=1e-10" in pg.url and "mu_tau=" in pg.url
    pg.fill("#fpr", "1e-12")
    pg.click("#submit")
    pg.wait_for_selector("#range-warning", timeout=30_000)
    assert "mu_fpr_min=1e-10" in pg.url and "fpr=1e-12" in pg.url
    assert "1 − G_μ(FPR) + τ" in pg.inner_text("#range-warning")
    no_overflow(pg)
    _shot(pg, "risk-outside-range")
    pg.fill("#fpr", "0.001")
    pg.click("#submit")
    pg.wait_for_url(re.compile(r".*fpr=0\.001.*"), timeout=30_000)
    pg.wait_for_selector("#results", timeout=30_000)
    assert pg.locator("#range-warning").count() == 0


def test_plan_box_default_and_unticked(pg, live_server):
    base = f"{live_server}/plan?guide=privacy_first&effect=0.2&n=500&sd=0.5&max_relative_risk=10&fpr=0.1"
    pg.goto(base)  # a hand-made link without the box: the CLI's default (acceptable)
    pg.wait_for_selector("#plan-headline")
    assert pg.is_checked("#high_confidence_ok") and pg.locator("#options tbody tr").count() == 2
    assert pg.inner_text("#plan-headline").startswith("Recommended: the Laplace option")
    no_overflow(pg)
    _shot(pg, "plan-default")
    pg.uncheck("#high_confidence_ok")
    pg.click("#submit")
    pg.wait_for_url(lambda u: "high_confidence_ok=off" in u and "high_confidence_ok=on" not in u, timeout=30_000)
    pg.wait_for_selector("#plan-headline")
    assert not pg.is_checked("#high_confidence_ok") and pg.locator("#options tbody tr").count() == 1
    pg.reload()  # the permalink keeps the answer
    pg.wait_for_selector("#plan-headline")
    assert not pg.is_checked("#high_confidence_ok") and pg.locator("#options tbody tr").count() == 1
    pg.check("#high_confidence_ok")
    pg.click("#submit")
    pg.wait_for_url(lambda u: "high_confidence_ok=on" in u, timeout=30_000)
    pg.wait_for_selector("#plan-headline")
    assert pg.is_checked("#high_confidence_ok") and pg.locator("#options tbody tr").count() == 2
