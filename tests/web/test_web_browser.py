"""Real browser (Playwright for Python driving Debian's chromium): fill each page's form,
submit, check the numbers shown, download exports, save screenshots. Never runs
`playwright install`: it uses /usr/bin/chromium (the shared ``browser`` fixture, tests/_system.py)."""

import os
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser]
SHOTS = Path(os.environ.get("FDPKIT_SCREENSHOTS", "/tmp/fdpkit-screenshots"))


@pytest.fixture()
def page(browser):
    ctx = browser.new_context(accept_downloads=True, viewport={"width": 1200, "height": 1000})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_calculator_with_exports(page, live_server, tmp_path):
    page.goto(f"{live_server}/calculator")
    page.select_option("#mode", "gaussian")
    page.fill("#epsilon", "1")
    page.fill("#delta", "1e-5")
    page.click("#submit")
    page.wait_for_selector("#results", timeout=90_000)
    text = page.inner_text("#results")
    assert "4.845" in text and "3.731" in text
    assert "only proven for epsilon < 1" in page.inner_text("#warnings")
    # numbers in the figure stay SVG text: an HTML span put there (to keep numbers whole in
    # the page's text) is not drawn, and "δ = 1e-05" lost its number in the legend
    assert page.evaluate("document.querySelectorAll('#main svg').length") >= 1
    assert page.evaluate("document.querySelectorAll('#main svg span').length") == 0
    assert page.evaluate("document.querySelectorAll('#main span.nb').length") >= 1  # still kept whole elsewhere
    shot(page, "calculator")
    with page.expect_download() as dl:
        page.click("#export-csv")
    path = tmp_path / "calc.csv"
    dl.value.save_as(path)
    content = path.read_text()
    assert "classic sigma" in content and "warning" in content
    with page.expect_download() as dl:
        page.click("#export-pdf")
    pdf = tmp_path / "calc.pdf"
    dl.value.save_as(pdf)
    import pypdf

    assert "classic sigma" in "".join(p.extract_text() for p in pypdf.PdfReader(str(pdf)).pages)


def test_calculator_error_next_to_field(page, live_server):
    page.goto(f"{live_server}/calculator")
    page.fill("#sensitivity", "-2")
    page.click("#submit")
    page.wait_for_selector("#sensitivity-error")
    assert "sensitivity must be > 0" in page.inner_text("#sensitivity-error")


def test_calculator_without_javascript(browser, live_server):
    ctx = browser.new_context(java_script_enabled=False)
    pg = ctx.new_page()
    pg.goto(f"{live_server}/calculator")
    pg.select_option("#mode", "laplace")
    pg.fill("#epsilon", "0.5")
    pg.fill("#delta", "")
    pg.click("#submit")
    pg.wait_for_selector("#results", timeout=90_000)
    assert "2" in pg.inner_text("#outputs")
    ctx.close()


def test_report_page_with_downloads(page, live_server, tmp_path):
    page.goto(f"{live_server}/report")
    page.fill("#noise_multiplier", "2")
    page.fill("#sample_rate", "0.05")
    page.fill("#steps", "50")
    page.fill("#discretization", "0.001")
    page.click("#submit")
    page.wait_for_selector("#mu", timeout=60_000)
    mu_text = page.inner_text("#mu")
    import fdpkit as fp

    mu = fp.privacy_report(fp.dpsgd(2.0, 0.05, 50), discretization=1e-3).mu
    assert f"{mu:.4g}" in mu_text
    # the figures and the representations table follow the result (POST /report/extras)
    page.wait_for_selector("#report-extras figure svg", timeout=120_000)
    assert page.locator("#report-extras svg").count() >= 2 and page.locator("#section-representations").count() == 1
    assert page.evaluate("document.activeElement.id") == "results"  # their arrival moved no focus
    shot(page, "report")
    for fmt in ("pdf", "csv", "html"):
        with page.expect_download(timeout=120_000) as dl:
            page.click(f"#download-{fmt}", timeout=120_000)
            if fmt == "pdf":  # rendering takes a second or two: the indicator says so meanwhile
                assert "Preparing PDF" in page.inner_text("#progress") and page.is_disabled("#download-pdf")
        out = tmp_path / f"r.{fmt}"
        dl.value.save_as(out)
        assert out.stat().st_size > 500
        assert dl.value.suggested_filename.endswith(f"-T50.{fmt}")
        # the indicator stops once the file arrived (a plain form post left it counting forever)
        page.wait_for_selector("#progress", state="hidden", timeout=10_000)
        assert page.inner_text(".download-status") == f"Downloaded {dl.value.suggested_filename}."
    assert (tmp_path / "r.pdf").read_bytes().startswith(b"%PDF")
    # a download that fails says why beside the buttons, and stops the indicator
    page.evaluate("document.querySelector('form[data-download=PDF] input[name=noise_multiplier]').value = '-1'")
    page.click("#download-pdf")
    page.wait_for_selector(".download-status[role=alert]", timeout=30_000)
    assert "PDF download failed: Noise multiplier" in page.inner_text(".download-status")
    assert page.locator("#progress").is_hidden() and not page.is_disabled("#download-pdf")


def test_convert_risk_plan_pages(page, live_server):
    page.goto(f"{live_server}/convert")
    page.fill("#epsilon", "1")
    page.fill("#delta", "")
    page.fill("#mu", "1")
    page.click("#submit")
    page.wait_for_selector("#recommended-mu", timeout=90_000)
    # 1.23204 and 4.37718: upper bounds, printed rounded up
    assert "1.233" in page.inner_text("#recommended-mu") and "4.378" in page.inner_text("#recommended-epsilon")
    shot(page, "convert")
    page.goto(f"{live_server}/risk")
    page.fill("#mu", "1")
    page.fill("#prior", "0.01")
    page.fill("#fpr", "0.001")
    page.click("#submit")
    page.wait_for_selector("#posterior", timeout=90_000)
    assert page.inner_text("#posterior").startswith("0.156")
    assert "graceful" in page.inner_text("#failure-mode")
    shot(page, "risk")
    page.goto(f"{live_server}/plan")
    assert page.input_value("#max_relative_loss") == "" and page.input_value("#effect") == ""  # no live example
    page.click("#load-example")  # de Fondeville's example: level 0.01, max relative power loss 0.01
    assert page.input_value("#level") == "0.01" and page.input_value("#max_relative_loss") == "0.01"
    page.fill("#required_power", "0.8")  # the other criterion: typing it clears the example's
    assert page.input_value("#max_relative_loss") == ""
    page.fill("#required_power", "")
    page.click("#load-example")
    page.click("#submit")
    page.wait_for_selector("#mu-min", timeout=90_000)
    assert "0.286" in page.inner_text("#mu-min")
    shot(page, "plan")


def test_api_docs_render_offline(page, live_server):
    page.goto(f"{live_server}/docs")
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    assert "/api/report" in page.inner_text(".swagger-ui")


def test_calibrate_page_and_copy_statement(page, live_server):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{live_server}/calibrate")
    page.select_option("#target", "epsilon")
    page.fill("#target_value", "3")
    page.fill("#delta", "1e-5")
    page.fill("#batch_size", "50")
    page.fill("#dataset_size", "1000")
    page.fill("#epochs", "2")
    page.select_option("#sampling", "fixed-size")
    page.select_option("#relation", "replace-one")
    page.fill("#discretization", "0.01")
    page.click("#submit")
    page.wait_for_selector("#value", timeout=60_000)
    import fdpkit as fp

    r = fp.calibrate_dpsgd(epsilon=3, delta=1e-5, batch_size=50, dataset_size=1000, epochs=2, sampling="fixed-size",
                           relation="replace-one", discretization=1e-2)
    assert page.inner_text("#value") == f"{r.rounded_value():.4g}"  # rounded up: the safe side, as the CLI
    assert float(page.inner_text("#achieved-epsilon")) <= 3.0
    statement = page.inner_text("#statement")
    assert "fixed-size batch of 50" in statement and "replace-one" in statement
    page.click("#copy-statement")
    page.wait_for_selector("#copy-statement[data-copied]")  # a selector: no eval under the CSP
    if page.get_attribute("#copy-statement", "data-copied") == "yes":
        assert page.evaluate("navigator.clipboard.readText()") == statement
    shot(page, "calibrate")
    page.click("#full-report")  # on to the Report page with the run filled in: the same statement
    page.wait_for_selector("#statement", timeout=60_000)
    assert "/report?" in page.url and page.input_value("#noise_multiplier") == f"{r.rounded_value():.4g}"
    assert page.inner_text("#statement") == statement
