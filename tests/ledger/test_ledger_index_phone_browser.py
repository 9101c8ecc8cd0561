"""The ledger's index page on a phone (390 px, Chromium under Playwright): with a few datasets
and releases on record it scrolled sideways (its seven-column table wider than the screen).
Also, at 390 and 1280 px, the ledger forms' refusal of a field given twice, beside the field."""

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
SLOW_MS = 120_000
SIZES = {"phone": {"width": 390, "height": 900}, "desktop": {"width": 1280, "height": 900}}


@pytest.fixture(scope="module")
def server(tmp_path_factory, serve_app):
    url = f"sqlite:///{tmp_path_factory.mktemp('index-phone') / 'ledger.sqlite'}"
    with open_ledger(url) as led:
        led.add_dataset("census", unit="one person", user="admin")
        led.add_dataset("hospital-admissions-2024", unit="one patient-year", relation="replace-one", user="admin")
        led.add_dataset("web", unit="one user", user="admin")
        led.add_dataset("nationwide_longitudinal_household_panel_survey_2024_wave12", user="admin",
                        unit="one household (every member at one address)")
        for role in ("admin", "viewer"):
            add_user(led, role, role=role, password=PASSWORD, actor="admin")
        for name, spec in (("census", {"kind": "gaussian", "sigma": 0.9}), ("census", {"kind": "gaussian", "sigma": 2.0}),
                           ("hospital-admissions-2024", {"kind": "laplace", "scale": 1.0})):
            r = led.propose(name, spec, title="weekly counts", user="admin")
            led.approve(r.id, user="approver", report=False)
            led.release(r.id, user="approver")
        # a census budget: the hard limit at δ 1e-6 (the index showed ε at 1e-5 only)
        led.set_threshold("census", metric="epsilon", level="hard", value=8, delta=1e-6, user="admin")
    with serve_app(create_app(ledger_url=url)) as base:
        yield base


def _page(browser, server, size, user):
    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    page.goto(f"{server}/ledger/login")
    page.fill("#username", user)
    page.fill("#password", PASSWORD)
    page.click("#login")
    page.wait_for_selector("#ledger-nav")
    return ctx, page


@pytest.mark.parametrize("user", ["admin", "viewer"])
@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_ledger_index_fits_the_screen(server, browser, size, user):
    ctx, page = _page(browser, server, size, user)
    page.goto(f"{server}/ledger?welcome=1")
    page.wait_for_selector("#datasets")
    full_shot(page, SHOTS, f"ledger-index-{user}-{size}")
    no_overflow(page, f"/ledger as {user} at {SIZES[size]['width']} px")
    # every dataset's figures are on the page, readable (not cut off by the screen's edge)
    text = page.inner_text("#datasets")
    assert "hospital-admissions-2024" in text and "one patient-year" in text
    for cell in page.locator("#datasets td").all():
        box = cell.bounding_box()
        assert box is None or box["x"] + box["width"] <= SIZES[size]["width"] + 1, cell.inner_text()
    ctx.close()


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_ledger_index_shows_epsilon_at_the_hard_limits_delta(server, browser, size):
    # the dataset page reads the released ε at each threshold's δ (a census limit's 1e-06), the index
    # read ε at 1e-05 only: an approver scanning the index saw 5.6 against a limit judged at 1e-06
    ctx, page = _page(browser, server, size, "viewer")
    page.goto(f"{server}/ledger/d/census")
    own = page.locator("tr.eps-at-threshold", has_text="1e-06").locator("td").inner_text()
    page.goto(f"{server}/ledger")
    page.wait_for_selector("#datasets")
    census = page.locator("#datasets tbody tr").filter(has=page.locator('a[href="/ledger/d/census"]'))
    cell = census.locator('td[data-label="ε at δ = 1e-05"]')
    assert cell.locator(".eps-at-hard").inner_text().replace("\xa0", " ") == f"ε = {own} at δ = 1e-06 (hard limit 8)"
    assert page.locator(".eps-at-hard").count() == 1  # the other datasets' hard limits are at 1e-05
    box, edge = cell.locator(".eps-at-hard").bounding_box(), SIZES[size]["width"]
    assert box["x"] + box["width"] <= edge + 1
    # the table does not scroll sideways inside its frame (the alerts column stays in view)
    assert page.evaluate("() => { const t = document.getElementById('datasets'); "
                         "return t.scrollWidth <= t.parentElement.clientWidth + 1; }")
    full_shot(page, SHOTS, f"ledger-index-hard-delta-{size}")
    no_overflow(page, f"/ledger with a hard limit at 1e-06, {edge} px")
    ctx.close()


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_a_field_given_twice_is_shown_beside_it(server, browser, size):
    """The dataset form posted with ``unit`` twice (as a script or a doubled input would):
    the message beside the unit, both values in it, the name kept, 422."""
    ctx, page = _page(browser, server, size, "admin")
    page.goto(f"{server}/ledger")
    page.wait_for_selector("#dataset-form")
    page.evaluate("""() => { const f = document.getElementById('dataset-form');
        const extra = document.createElement('input'); extra.name = 'unit'; extra.type = 'hidden'; extra.value = 'one household';
        f.appendChild(extra); }""")
    page.fill("#ds-name", "survey")
    page.fill("#ds-unit", "one person")
    with page.expect_navigation() as nav:
        page.click("#dataset-submit")
    assert nav.value.status == 422
    assert page.inner_text("#unit-error") == "unit is given twice ('one person', 'one household'): send it once"
    assert page.input_value("#ds-name") == "survey" and page.input_value("#ds-unit") == "one person, one household"
    no_overflow(page, f"the refused dataset form at {SIZES[size]['width']} px")
    full_shot(page, SHOTS, f"ledger-index-twice-{size}")
    ctx.close()


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_menu_names_the_ledger_on_its_pages_and_after_its_forms(server, browser, size):
    """The menu's summary (a phone's closed menu) and its current link name the section on every
    ledger page: after the dataset form's refusal, answered at /ledger/datasets, it read "Menu"
    alone (as on /ledger/d/census and the other pages below /ledger), where /ledger read "Menu: Ledger"."""
    ctx, page = _page(browser, server, size, "admin")

    def says_ledger(where: str) -> None:
        if size == "phone":
            assert page.is_visible("#menu-button"), where
            assert page.inner_text("#menu-button").endswith("Menu: Ledger"), (where, page.inner_text("#menu-button"))
        current = page.locator("nav[aria-label=Main] a[aria-current]")
        assert current.count() == 1 and current.text_content() == "Ledger", where
        assert current.get_attribute("aria-current") == ("page" if where == "/ledger" else "true"), where

    for path in ("/ledger", "/ledger/d/census", "/ledger/propose"):
        page.goto(f"{server}{path}")
        says_ledger(path)
    page.goto(f"{server}/ledger")
    page.fill("#ds-name", "survey")  # no unit: refused beside it, 422, at /ledger/datasets
    with page.expect_navigation() as nav:
        page.click("#dataset-submit")
    assert nav.value.status == 422 and page.url.endswith("/ledger/datasets"), (nav.value.status, page.url)
    says_ledger("/ledger/datasets")
    full_shot(page, SHOTS, f"ledger-datasets-refused-menu-{size}")
    ctx.close()
