"""The ledger in a real browser (Playwright driving Debian's chromium): an analyst logs in
and proposes a release, an approver logs in, approves and releases it from the queue, and
sees the threshold alert and the timeline on the dataset page."""

import os
from pathlib import Path

import pytest

from fdpkit.ledger import open_ledger
from fdpkit.ledger.users import add_user
from fdpkit.web.main import create_app

pytestmark = [pytest.mark.browser]
SHOTS = Path(os.environ.get("FDPKIT_SCREENSHOTS", "/tmp/fdpkit-screenshots"))
PASSWORD = "browser-pass-123"
#: approving renders the release's PDF report: allow for a loaded machine
SLOW_MS = 120_000


@pytest.fixture(scope="module")
def server(tmp_path_factory, serve_app):
    url = f"sqlite:///{tmp_path_factory.mktemp('browser') / 'ledger.sqlite'}"
    led = open_ledger(url)
    led.add_dataset("census", unit="one person", user="admin")
    add_user(led, "ana", role="analyst", password=PASSWORD, actor="admin")
    add_user(led, "bob", role="approver", password=PASSWORD, actor="admin")
    led.close()
    with serve_app(create_app(ledger_url=url)) as base:  # the shared live server (tests/conftest.py)
        yield base


def _login(page, base, user):
    page.goto(f"{base}/ledger/d/census")  # redirected to the login form
    page.wait_for_selector("#login-form")
    page.fill("#username", user)
    page.fill("#password", PASSWORD)
    page.click("#login")
    page.wait_for_selector("#ledger-nav")


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_propose_approve_release_alert_timeline(server, browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    _login(page, server, "ana")
    assert "ana (analyst)" in page.inner_text("#whoami")
    assert page.locator("#nav-queue").count() == 0
    page.fill("#title", "Weekly counts")
    page.fill("#mechanism", '{"kind": "gaussian", "sigma": 0.9}')
    page.click("#propose-submit")
    page.wait_for_selector("#release-state")
    assert "proposed" in page.inner_text("#release-state")
    assert "would exceed the warning threshold" in page.inner_text("#check")
    rid = page.url.rsplit("/", 1)[1]
    shot(page, "ledger-proposed")
    page.click("#logout")
    page.wait_for_selector("#login-form")
    ctx.close()

    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    _login(page, server, "bob")
    page.click("#nav-queue")
    page.wait_for_selector(f"#queue-{rid}")
    page.click(f"#approve-{rid}")
    page.wait_for_selector(f"#release-{rid}")
    page.click(f"#release-{rid}")
    page.wait_for_selector("#queue-empty")
    page.goto(f"{server}/ledger/d/census")
    alerts = page.inner_text("#alerts")
    assert "warning threshold exceeded" in alerts and "notice threshold exceeded" in alerts
    assert page.locator("#timeline svg").count() == 1
    assert "1" in page.inner_text("#timeline-table")
    assert "μ = 1.111" in page.inner_text("#total-mu")
    shot(page, "ledger-dataset")
    page.goto(f"{server}/ledger/r/{rid}")
    assert "released" in page.inner_text("#release-state")
    assert page.locator("#report-pdf").count() == 1
    ctx.close()


def test_ledger_pages_fit_a_phone(server, browser):
    """Issue 15: no horizontal overflow at 375 px on the ledger's pages (wide tables scroll
    inside their own box), with a release on record."""
    ctx = browser.new_context(viewport={"width": 375, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    _login(page, server, "ana")
    page.fill("#title", "A release with a rather long title, to see the tables wrap on a phone")
    page.fill("#mechanism", '{"kind": "gaussian", "sigma": 4}')
    page.click("#propose-submit")
    page.wait_for_selector("#release-state")
    rid = page.url.rsplit("/", 1)[1]
    for path in ("/ledger", "/ledger/d/census", f"/ledger/r/{rid}", "/ledger/history"):
        page.goto(f"{server}{path}")
        sw, vw = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert sw <= vw, f"{path}: horizontal overflow, scrollWidth {sw} > viewport {vw}"
        shot(page, "ledger-phone" + path.replace("/", "-"))
    ctx.close()
