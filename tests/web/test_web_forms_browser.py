"""Issue 25 problem 1 in a real browser: the report form starts empty (placeholders show an
example), "Load example" fills it and the report comes back; typing a batch size clears the
sample rate and typing epochs clears the steps instead of three refusals in a row; every
error at once beside its field."""

import pytest

import fdpkit as fp

pytestmark = [pytest.mark.browser]


@pytest.fixture()
def page(browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def test_load_example_then_typing_clears_the_exclusive_inputs(page, live_server):
    page.goto(f"{live_server}/report")
    assert page.input_value("#noise_multiplier") == "" and page.input_value("#sample_rate") == ""
    assert page.get_attribute("#noise_multiplier", "placeholder") == "e.g. 9.4"
    page.click("#load-example")
    assert page.input_value("#noise_multiplier") == "9.4" and page.input_value("#steps") == "2000"
    # the ML engineer's run: batch size and epochs typed over the example, no refusal
    page.fill("#noise_multiplier", "2")
    page.type("#batch_size", "50")
    assert page.input_value("#sample_rate") == ""
    page.fill("#dataset_size", "1000")
    page.type("#epochs", "1")
    assert page.input_value("#steps") == ""
    page.fill("#discretization", "0.001")
    page.click("#submit")
    page.wait_for_selector("#mu", timeout=90_000)
    mu = fp.privacy_report(fp.dpsgd(2.0, batch_size=50, dataset_size=1000, epochs=1), discretization=1e-3).mu
    assert f"{mu:.4g}" in page.inner_text("#mu")


def test_all_errors_at_once_beside_their_fields(page, live_server):
    page.goto(f"{live_server}/report")
    page.fill("#sample_rate", "2")
    page.fill("#max_batch_size", "x")
    page.click("#submit")
    page.wait_for_selector("#sample_rate-error", timeout=60_000)
    for name in ("noise_multiplier", "sample_rate", "steps", "max_batch_size"):
        assert page.is_visible(f"#{name}-error"), name
    assert "Sample rate q" in page.inner_text("#sample_rate-error")
    assert "sample_rate" not in page.inner_text("#main form")
