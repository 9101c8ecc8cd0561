"""The Sweep page and its JSON twins: small grids, bounds, errors (TestClient); the design table
on a phone (Chromium)."""

import pytest

SMALL = {"noise_multiplier": [2.0], "sample_rate": [0.01, 0.1], "steps": [100], "discretization": 1e-3}


def test_sweep_page_renders(client):
    r = client.get("/sweep")
    assert r.status_code == 200
    assert "Sweep DP-SGD settings" in r.text and 'href="/sweep"' in r.text


def test_sweep_api_rows(client):
    r = client.post("/api/sweep", json=SMALL)
    assert r.status_code == 200, r.text
    rows = r.json()["rows"]
    assert [row["sample_rate"] for row in rows] == [0.01, 0.1]
    for row in rows:
        assert row["mu"] > 0 and 0 <= row["regret"] < 1 and row["epsilon"] > 0


def test_sweep_api_refuses_big_grids_and_bad_values(client):
    big = {"noise_multiplier": [1.0 + i for i in range(10)], "sample_rate": [0.01 * (i + 1) for i in range(10)],
           "steps": [10, 20, 30]}
    r = client.post("/api/sweep", json=big)
    assert r.status_code == 422 and "at most 200" in r.json()["detail"]
    r = client.post("/api/sweep", json={**SMALL, "steps": [100_000]})
    assert r.status_code == 422 and "steps" in r.json()["detail"]
    r = client.post("/api/sweep", json={**SMALL, "sample_rate": [2.0]})
    assert r.status_code == 422 and "sample_rate" in r.json()["detail"]
    r = client.post("/api/sweep", json={**SMALL, "noise_multiplier": []})
    assert r.status_code == 422


def test_sweep_form_shows_plot_and_table(client):
    r = client.post("/sweep", data={"task": "map", "noise_multiplier": "2", "sample_rate": "0.01, 0.1",
                                    "steps": "100", "delta": "1e-5"})
    assert r.status_code == 200
    assert "<svg" in r.text and 'id="sweep-table"' in r.text


def test_sweep_form_error_is_shown(client):
    r = client.post("/sweep", data={"task": "map", "noise_multiplier": "two", "sample_rate": "0.1", "steps": "10"})
    # an invalid form answers 422 with the page (htmx swaps a 422: base.html's htmx-config)
    assert r.status_code == 422 and "comma-separated numbers" in r.text


def test_sweep_form_refuses_an_unknown_task(client):
    # task=bogus was swept as a map (200, a table)
    for send in (lambda d: client.post("/sweep", data=d), lambda d: client.get("/sweep", params=d)):
        r = send({"task": "bogus", "noise_multiplier": "2", "sample_rate": "0.1", "steps": "10"})
        assert r.status_code == 422 and "task must be map or design" in r.text
        assert 'id="sweep-table"' not in r.text


def test_design_api(client):
    r = client.post("/api/sweep/design", json={"mu": 1.0, "batch_size": [256], "epochs": [1, 2],
                                               "dataset_size": 60000})
    assert r.status_code == 200, r.text
    rows = r.json()["rows"]
    assert all(row["mu"] <= 1.0 for row in rows)


def test_design_page_prints_sigma_safe_side_names_its_delta_and_links_each_run(client):
    # the design table printed σ to nearest (less noise than solved where it rounds down: the copied run
    # could exceed the target μ), headed a column "ε at δ" without saying which δ, and left the run to be
    # re-typed into the Report page
    import re
    from html import unescape

    import fdpkit as fp

    page = client.get("/sweep", params={"task": "design", "mu": "1", "batch_size": "50", "epochs": "1, 2",
                                        "dataset_size": "1000", "delta": "1e-6"})
    assert page.status_code == 200, page.text[:300]
    table = unescape(re.search(r'<table id="design-table"[^>]*>.*?</table>', page.text, re.S).group(0))
    assert "<th>ε at δ = 1e-06</th>" in re.sub(r'<span class="num">(.*?)</span>', r"\1", table)
    api = client.post("/api/sweep/design", json={"mu": 1.0, "batch_size": [50], "epochs": [1, 2],
                                                 "dataset_size": 1000, "delta": 1e-6}).json()["rows"]
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<tr><td[^>]*>50</td><td[^>]*>.*?</td><td[^>]*>.*?</td><td[^>]*>(.*?)</td>",
                                                           table)]
    links = re.findall(r'<a href="([^"]*)" class="design-report">', table)
    assert len(cells) == len(links) == len(api) == 2
    for shown, link, row in zip(cells, links, api):
        assert float(shown) >= row["noise_multiplier"] and f"noise_multiplier={shown}&" in link
        report = client.get(link)
        assert report.status_code == 200
        mu = float(re.search(r'id="mu">μ = (?:<span class="num">)?([0-9.]+)', report.text).group(1))
        assert mu <= 1.0  # the run as printed meets the target
        run = fp.dpsgd(float(shown), batch_size=50, dataset_size=1000, epochs=row["epochs"])
        assert fp.privacy_report(run, discretization=1e-3).mu <= 1.0


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_the_design_table_fits_the_screen(browser, live_server, width):
    # on a phone its last columns (ε, the attack's TPR, the run's report link) were cut off at the
    # screen's edge, in a box scrolled sideways: the table stacks there, one card per run
    from _pages import no_overflow

    ctx = browser.new_context(viewport={"width": width, "height": 900})
    pg = ctx.new_page()
    try:
        pg.goto(f"{live_server}/sweep?task=design&mu=1&batch_size=256,1024&epochs=1,5&dataset_size=60000")
        pg.wait_for_selector("#design-table", timeout=90_000)
        no_overflow(pg)
        cells = pg.locator("#design-table td").all()
        assert len(cells) == 4 * 8
        for cell in cells:
            box = cell.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (cell.inner_text(), box)
        if width == 390:  # each figure under its column's name
            label = pg.locator("#design-table td").nth(3).evaluate("e => getComputedStyle(e, '::before').content")
            assert label == '"σ (rounded up): "', label
    finally:
        ctx.close()
