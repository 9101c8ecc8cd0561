"""Lifting a hard limit with a second person in a real browser (Playwright driving Debian's
chromium), at 1280 and 390 px: an admin's one-person lift is refused with the way forward,
the same change with a reason becomes a pending request that waits on the dataset page,
and an approver approves it from the approval queue; the limit changes only then."""

import os
from pathlib import Path

import pytest
from _pages import full_shot, no_overflow

from fdpkit.ledger import open_ledger
from fdpkit.ledger.users import add_user
from fdpkit.web.main import create_app

pytestmark = [pytest.mark.browser]
SHOTS = Path(os.environ.get("FDPKIT_SCREENSHOTS", "/tmp/fdpkit-screenshots"))
PASSWORD = "browser-pass-123"
SIZES = {"desktop": {"width": 1280, "height": 1000}, "phone": {"width": 390, "height": 900}}
SLOW_MS = 60_000


@pytest.fixture(scope="module")
def server(tmp_path_factory, serve_app):
    url = f"sqlite:///{tmp_path_factory.mktemp('browser-lifts') / 'ledger.sqlite'}"
    led = open_ledger(url)
    for size in SIZES:
        led.add_dataset(f"census-{size}", unit="one person", user="ada")
    add_user(led, "ada", role="admin", password=PASSWORD, actor="setup")
    add_user(led, "bob", role="approver", password=PASSWORD, actor="setup")
    led.close()
    with serve_app(create_app(ledger_url=url)) as base:  # the shared live server (tests/conftest.py)
        yield base


def _login(page, base, user, name):
    page.goto(f"{base}/ledger/d/{name}")  # redirected to the login form
    page.wait_for_selector("#login-form")
    page.fill("#username", user)
    page.fill("#password", PASSWORD)
    page.click("#login")
    page.wait_for_selector("#ledger-nav")


def _hard(page):
    rows = page.locator("#thresholds tbody tr").all_inner_texts()
    return [r for r in rows if r.startswith("hard")]


@pytest.mark.parametrize("size", list(SIZES))
def test_request_and_approve_a_lift(server, browser, size):
    name = f"census-{size}"
    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    _login(page, server, "ada", name)
    page.select_option("#level", "hard")
    page.fill("#value", "12")
    page.click("#threshold-submit")
    page.wait_for_selector("#threshold-error")
    assert "needs a second person" in page.inner_text("#threshold-error")
    assert page.input_value("#value") == "12" and page.input_value("#level") == "hard"  # nothing to type again
    page.fill("#threshold-reason", "the yearly budget was renewed by the board")
    page.click("#threshold-submit")
    page.wait_for_selector(".lift")
    card = page.locator(".lift").first
    assert "ε 8 at δ = 1e-05 (hard) → ε 12 at δ = 1e-05 (hard)" in card.inner_text()
    assert "cannot approve your own request" in card.inner_text()
    assert any("ε 8 " in r for r in _hard(page))  # the limit is unchanged
    no_overflow(page, "dataset page with a pending lift")
    full_shot(page, SHOTS, f"ledger-lift-requested-{size}")
    page.click("#logout")
    page.wait_for_selector("#login-form")
    ctx.close()

    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    _login(page, server, "bob", name)
    page.click("#nav-queue")
    card = page.locator(".lift", has_text=name)
    card.wait_for()
    assert "the yearly budget was renewed" in card.inner_text()
    no_overflow(page, "approval queue with a lift request")
    full_shot(page, SHOTS, f"ledger-lift-queue-{size}")
    card.locator("input[name=comment]").first.fill("agreed with the DPO")
    card.locator("button[id^=approve-lift-]").click()
    page.wait_for_url("**/ledger/queue#lifts")
    assert page.locator(".lift", has_text=name).count() == 0
    page.goto(f"{server}/ledger/d/{name}")
    assert any("ε 12 " in r for r in _hard(page))  # applied by the second person
    assert page.locator(".lift").count() == 0
    page.goto(f"{server}/ledger/history")
    assert "threshold.set" in page.inner_text("main")
    assert "requested by ada" in page.inner_text("main") and "approved by bob" in page.inner_text("main")
    full_shot(page, SHOTS, f"ledger-lift-history-{size}")
    ctx.close()
