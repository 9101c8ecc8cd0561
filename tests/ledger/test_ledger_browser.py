"""The ledger in a real browser (Playwright driving Debian's chromium): an analyst logs in
and proposes a release, an approver logs in, approves and releases it from the queue, and
sees the threshold alert and the timeline on the dataset page. Issue 25: the first admin
is created from the browser with the setup token, and a plan becomes a proposal, an
approval with its record (JSON and PDF) and a confirmed release, at desktop and phone
sizes."""

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
    # the dataset page's own form has the /ledger/propose fields: the JSON spec is one choice of four
    assert page.is_visible("#noise_multiplier") and page.is_visible("#examples_per_user")
    page.check("#build-json")
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
    page.click(f"#release-{rid}")  # releasing asks for confirmation first (issue 25)
    page.wait_for_selector("#confirm-form")
    page.click("#confirm-release")
    page.wait_for_selector("#approvals")
    page.goto(f"{server}/ledger/queue")
    page.wait_for_selector("#queue-empty")
    page.goto(f"{server}/ledger/d/census")
    alerts = page.inner_text("#alerts")
    assert "warning threshold exceeded" in alerts and "notice threshold exceeded" in alerts
    assert page.locator("#timeline svg").count() == 1
    assert "1" in page.inner_text("#timeline-table")
    assert "μ = 1.112" in page.inner_text("#total-mu")  # μ 1.1111...: an upper bound, rounded up
    shot(page, "ledger-dataset")
    page.goto(f"{server}/ledger/r/{rid}")
    assert "released" in page.inner_text("#release-state")
    page.wait_for_selector("#report-pdf")  # the approval record's PDF renders after the approval answered
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
    page.check("#build-gaussian")  # the dataset page's fields, on a phone
    page.fill("#noise_scale", "4")
    page.click("#propose-submit")
    page.wait_for_selector("#release-state")
    rid = page.url.rsplit("/", 1)[1]
    for path in ("/ledger", "/ledger/d/census", f"/ledger/r/{rid}", "/ledger/history"):
        page.goto(f"{server}{path}")
        sw, vw = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert sw <= vw, f"{path}: horizontal overflow, scrollWidth {sw} > viewport {vw}"
        shot(page, "ledger-phone" + path.replace("/", "-"))
    ctx.close()


# ------------------------------------------------------------------ issue 25 (problems 6-8)
SETUP_TOKEN = "browser-setup-token-0123456789"
PLAN_QUERY = ("guide=utility_first&effect=0.2&n=100&sd=0.25&alpha=0.01&data_range=1&max_relative_loss=0.01"
              "&prior=0.01&fpr=0.001")
SIZES = {"desktop": {"width": 1200, "height": 1000}, "phone": {"width": 375, "height": 900}}


def _fits(page, what):
    sw, vw = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert sw <= vw, f"{what}: horizontal overflow, scrollWidth {sw} > viewport {vw}"


@pytest.fixture(scope="module")
def empty_server(tmp_path_factory, serve_app):
    url = f"sqlite:///{tmp_path_factory.mktemp('browser-setup') / 'ledger.sqlite'}"
    with serve_app(create_app(ledger_url=url, setup_token=SETUP_TOKEN)) as base:
        yield base


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_first_admin_from_the_browser(empty_server, browser, size):
    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    page.goto(f"{empty_server}/ledger")
    page.wait_for_selector("#login-form")
    if size == "phone":  # the first run (the desktop run comes second: by then the admin exists)
        assert "no accounts yet" in page.inner_text("#no-accounts")
        assert "--db" in page.inner_text("#no-accounts") and "ledger.sqlite" in page.inner_text("#ledger-db")
        _fits(page, "login without accounts")
        shot(page, f"ledger-setup-login-{size}")
        page.click("#setup-link")
        page.wait_for_selector("#setup-form")
        page.fill("#setup_token", "wrong-token")
        page.fill("#name", "root")
        page.fill("#password", PASSWORD)
        page.fill("#password_repeat", PASSWORD)
        page.click("#setup-submit")
        page.wait_for_selector("#setup-error")
        assert "setup token" in page.inner_text("#setup-error")
        assert page.input_value("#name") == "root"
        page.fill("#setup_token", SETUP_TOKEN)
        page.fill("#password", PASSWORD)
        page.fill("#password_repeat", PASSWORD)
        _fits(page, "setup form")
        shot(page, f"ledger-setup-form-{size}")
        page.click("#setup-submit")
        page.wait_for_selector("#welcome")
        assert "root (admin)" in page.inner_text("#whoami")
        _fits(page, "welcome")
        shot(page, f"ledger-setup-welcome-{size}")
    else:  # accounts exist now: no setup offered, the setup page sends to the login
        assert page.locator("#no-accounts").count() == 0
        page.goto(f"{empty_server}/ledger/setup")
        page.wait_for_selector("#login-form")
        page.click("#role-guide summary")
        assert "analyst" in page.inner_text("#role-guide")
        shot(page, f"ledger-login-{size}")
    ctx.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_plan_propose_approve_record(server, browser, size, tmp_path):
    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    page.goto(f"{server}/plan?{PLAN_QUERY}")
    page.wait_for_selector("#propose-release")
    shot(page, f"plan-propose-{size}")
    page.click("#propose-release")
    page.wait_for_selector("#login-form")  # the proposal needs a login, and comes back prefilled
    page.fill("#username", "ana")
    page.fill("#password", PASSWORD)
    page.click("#login")
    page.wait_for_selector("#propose-form")
    assert "Plan" in page.inner_text("#propose-source")
    words = page.inner_text("#mechanism-words")
    assert "sensitivity" in words and "0.01" in words
    page.fill("#title", f"Planned mean ({size})")
    _fits(page, "proposal form")
    shot(page, f"ledger-propose-{size}")
    page.click("#propose-submit")
    page.wait_for_selector("#release-state")
    assert "proposed" in page.inner_text("#release-state")
    rid = page.url.rsplit("/", 1)[1]
    ctx.close()

    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    _login(page, server, "bob")
    page.goto(f"{server}/ledger/r/{rid}")
    page.fill("form[action$='/approve'] input[name=comment]", "matches the analysis plan")
    page.click("#approve")
    page.wait_for_selector("#report-json")
    page.wait_for_selector("#report-pdf")  # rendered in a worker after the answer; the page polls
    record = page.request.get(f"{server}/ledger/r/{rid}/report.json").json()["approval"]
    assert (record["proposer"], record["approver"], record["comment"]) == ("ana", "bob", "matches the analysis plan")
    assert record["release"]["mechanism"]["sensitivity"] == pytest.approx(0.01)
    pdf = page.request.get(f"{server}/ledger/r/{rid}/report.pdf").body()
    assert pdf.startswith(b"%PDF")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"approval-record-{size}.pdf").write_bytes(pdf)
    _fits(page, "release page")
    shot(page, f"ledger-approved-{size}")
    page.click("#release")
    page.wait_for_selector("#confirm-form")
    assert "Releasing is final" in page.inner_text("#confirm-total")
    assert page.locator("#override_reason").is_visible()
    _fits(page, "release confirmation")
    shot(page, f"ledger-confirm-{size}")
    page.click("#confirm-release")
    page.wait_for_selector("#approvals")
    assert "released" in page.inner_text("#release-state")
    ctx.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_propose_with_fields_then_reject_with_a_record(server, browser, size):
    """The propose form with the report form's fields: errors beside their fields, then a
    DP-SGD run given as batch size + epochs; the approver rejects it and the rejection
    record (JSON and PDF) says what releasing it would have done."""
    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    _login(page, server, "ana")
    page.goto(f"{server}/ledger/propose")
    page.wait_for_selector("#propose-form")
    assert page.is_checked("#build-dpsgd") and page.locator("#noise_multiplier").is_visible()
    assert not page.locator("#mechanism").is_visible()  # the JSON is one choice away
    page.fill("#title", f"Fine-tuning run ({size})")
    page.fill("#sample_rate", "0.01")
    page.fill("#batch_size", "256")
    page.fill("#steps", "100")
    page.fill("#epochs", "1")
    page.click("#propose-submit")
    page.wait_for_selector("#noise_multiplier-error")
    # the exclusive inputs cleared each other as they were typed (the shared form script):
    # batch size replaced the sample rate, epochs replaced the steps
    assert page.input_value("#sample_rate") == "" and page.input_value("#steps") == ""
    for f in ("noise_multiplier", "dataset_size"):  # every error at once, beside its field
        assert page.locator(f"#{f}-error").is_visible(), f
    assert "Dataset size is required with the batch size" in page.inner_text("#dataset_size-error")
    assert "Noise multiplier σ is required" in page.inner_text("#noise_multiplier-error")
    _fits(page, "proposal form with errors")
    shot(page, f"ledger-propose-fields-errors-{size}")
    page.fill("#noise_multiplier", "1.1")
    page.fill("#sample_rate", "")
    page.fill("#dataset_size", "6000")  # 24 steps: the record renders quickly on a loaded machine
    page.fill("#steps", "")
    page.select_option("#sampling", "shuffled")
    page.select_option("#relation", "add-remove")
    page.click("#propose-submit")  # the library refuses add-remove for shuffled batches: said on the relation
    page.wait_for_selector("#relation-error")
    assert "shuffled" in page.inner_text("#relation-error") and page.locator("#noise_multiplier-error").count() == 0
    page.select_option("#relation", "replace-one")  # census declares add-remove: refused by the ledger
    page.click("#propose-submit")
    page.wait_for_selector("#relation-error")  # said beside the relation, in the form's words
    assert "does not fit dataset census, which declares add-remove" in page.inner_text("#relation-error")
    assert page.input_value("#noise_multiplier") == "1.1"  # nothing to type again
    page.select_option("#relation", "zero-out")
    shot(page, f"ledger-propose-fields-{size}")
    page.click("#propose-submit")
    page.wait_for_selector("#release-state")
    assert "proposed" in page.inner_text("#release-state")
    assert "batch_size" in page.inner_text("#spec") and "256" in page.inner_text("#spec")
    rid = page.url.rsplit("/", 1)[1]
    ctx.close()

    ctx = browser.new_context(viewport=SIZES[size])
    page = ctx.new_page()
    page.set_default_timeout(SLOW_MS)
    _login(page, server, "bob")
    page.goto(f"{server}/ledger/r/{rid}")
    page.fill("form[action$='/reject'] input[name=comment]", "shuffled batches: retrain with Poisson sampling")
    page.click("#reject")
    page.wait_for_selector("#report-json")
    # rendered in a worker after the answer while the page polls (or, past the time limit on a
    # loaded machine, rendered when the link is opened)
    page.wait_for_selector("#report-pdf, #pdf-render")
    assert "rejected" in page.inner_text("#release-state") and "rejected" in page.inner_text("#approvals")
    record = page.request.get(f"{server}/ledger/r/{rid}/report.json", timeout=SLOW_MS).json()["approval"]
    assert (record["decision"], record["approver"]) == ("rejected", "bob")
    assert record["totals"]["after"]["count"] == record["totals"]["before"]["count"] + 1
    pdf = page.request.get(f"{server}/ledger/r/{rid}/report.pdf", timeout=SLOW_MS).body()
    assert pdf.startswith(b"%PDF")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"rejection-record-{size}.pdf").write_bytes(pdf)
    _fits(page, "rejected release page")
    shot(page, f"ledger-rejected-{size}")
    ctx.close()
