"""The audit page in a real browser (Debian's chromium via Playwright): upload two CSV
files, read the verdict, see the plot; a malformed file shows its error next to the field."""

import os
from pathlib import Path

import pytest

import fdpkit as fp
from fdpkit.audit import scores_csv, simulate_attack

pytestmark = [pytest.mark.browser]
SHOTS = Path(os.environ.get("FDPKIT_SCREENSHOTS", "/tmp/fdpkit-screenshots"))


@pytest.fixture(scope="module")
def page(browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000}, accept_downloads=True)
    yield ctx.new_page()
    ctx.close()


def test_audit_upload_in_the_browser(page, live_server, tmp_path):
    sim = simulate_attack(fp.Gaussian(0.5), trials=2000, seed=3)
    (tmp_path / "m.csv").write_text(scores_csv(sim.member_scores))
    (tmp_path / "n.csv").write_text(scores_csv(sim.nonmember_scores))
    (tmp_path / "bad.csv").write_text("score\n1.0\nnot-a-score\n")
    page.goto(f"{live_server}/audit")
    page.check("#mode-scores")
    page.set_input_files("#members", str(tmp_path / "m.csv"))
    page.set_input_files("#nonmembers", str(tmp_path / "n.csv"))
    page.fill("#mechanism", '{"kind": "gaussian", "sigma": 1.0}')
    page.click("#submit")
    page.wait_for_selector("#results")
    assert "Violation" in page.inner_text("#verdict-head")
    assert "VIOLATION" in page.inner_text("#verdict")
    assert page.locator("#audit-plot svg").count() == 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "audit.png"), full_page=True)
    # files cannot go in a URL: the result links to the scores' digest, held by the server, and says so
    assert "mode=scores&scores=" in page.url and "works while this server holds" in page.inner_text("#link-note")
    mu = page.inner_text("#mu-lower")
    page.reload()
    page.wait_for_selector("#results")
    assert page.inner_text("#mu-lower") == mu
    with page.expect_download() as dl:
        page.click("#download-pdf")
    assert dl.value.suggested_filename.startswith("fdpkit-audit-scores-members2000-nonmembers2000-sha256-")
    assert dl.value.suggested_filename.endswith("-vs-gaussian-sigma1.pdf")
    page.set_viewport_size({"width": 375, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=str(SHOTS / "audit-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1200, "height": 1000})
    page.set_input_files("#members", str(tmp_path / "bad.csv"))
    page.set_input_files("#nonmembers", str(tmp_path / "n.csv"))
    page.click("#submit")
    page.wait_for_selector("#members-error")
    assert "line 3" in page.inner_text("#members-error")
