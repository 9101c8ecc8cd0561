"""In real Chromium at desktop and 375 px: the manager's question answered first, the
inputs in the URL (permalink), reload keeps the answer, links across Risk, Convert and
Calculator, the calculator's tight epsilon and grade, the scheme guide."""

import os
import re
from pathlib import Path

import pytest
from _pages import no_overflow  # noqa: E402

pytestmark = [pytest.mark.browser]  # the shared ``browser`` and ``live_server`` of tests/conftest.py
SHOTS = Path(os.environ.get("FDPKIT_SCREENSHOTS", "/tmp/fdpkit-screenshots")) / "issue25"
WIDTHS = {"desktop": 1200, "phone": 375}




@pytest.mark.parametrize("size", list(WIDTHS))
def test_manager_question_permalink_and_links(browser, live_server, size):
    ctx = browser.new_context(viewport={"width": WIDTHS[size], "height": 900})
    pg = ctx.new_page()
    try:
        pg.goto(f"{live_server}/risk")
        pg.select_option("#guarantee", "epsilon")
        pg.fill("#epsilon", "8")
        pg.click("#submit")
        pg.wait_for_selector("#headline", timeout=90_000)
        assert re.search(r"/risk\?guarantee=epsilon&epsilon=8", pg.url)  # the inputs live in the URL
        head = pg.inner_text("#headline")
        assert head.startswith("ε = 8 alone: no meaningful protection in the worst case; ask for the mechanism")
        assert "'weak'" in head and pg.get_attribute("#grade", "data-level") == "3"
        assert "2981" in pg.inner_text("#plain")
        no_overflow(pg)
        SHOTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(SHOTS / f"risk-eps8-{size}.png"), full_page=True)
        pg.reload()  # reload keeps the answer (rendered on the server)
        pg.wait_for_selector("#headline", timeout=90_000)
        assert pg.inner_text("#headline") == head
        pg.click("#links a[href^='/convert']")  # the same guarantee on Convert: the same verdict
        pg.wait_for_selector("#headline", timeout=90_000)
        assert "no meaningful protection in the worst case" in pg.inner_text("#headline")
        no_overflow(pg)
        pg.screenshot(path=str(SHOTS / f"convert-eps8-{size}.png"), full_page=True)
        pg.click("#risk-link")
        pg.wait_for_selector("#headline", timeout=90_000)
        assert pg.get_attribute("#grade", "data-level") == "3"
    finally:
        ctx.close()


def test_calculator_tight_epsilon_and_grade_in_browser(browser, live_server):
    ctx = browser.new_context(viewport={"width": WIDTHS["phone"], "height": 900})
    pg = ctx.new_page()
    try:
        pg.goto(f"{live_server}/calculator")
        pg.select_option("#mode", "composition")
        pg.fill("#epsilon", "0.2")
        pg.fill("#delta", "0")
        pg.fill("#k", "50")
        pg.click("#submit")
        pg.wait_for_selector("#results", timeout=90_000)
        assert "mode=composition" in pg.url and "k=50" in pg.url
        assert pg.inner_text("td[data-name='tight epsilon']").startswith("6.308")
        assert pg.get_attribute("#grade", "data-level") in ("0", "1", "2", "3")
        assert "use the basic total" not in pg.inner_text("#results")
        no_overflow(pg)
        SHOTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(SHOTS / "calculator-tight-phone.png"), full_page=True)
        pg.goto(f"{live_server}/report")
        pg.click("#scheme-guide summary")
        assert "DataLoader(shuffle=True)" in pg.inner_text("#scheme-guide")
        no_overflow(pg)
        pg.screenshot(path=str(SHOTS / "report-scheme-guide-phone.png"), full_page=True)
    finally:
        ctx.close()
