"""De Fondeville's uniform random sampling (Example 3) in the web report and API (issue 11)."""

MU, N = 1.0, 5


def test_web_api_and_page(client):
    r = client.post("/api/report/uniform-sampling", json={"mu": MU, "n": N})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["mechanism"]["kind"] == "uniform-sampling"
    assert any("Example 3" in w for w in data["warnings"])
    assert client.post("/api/report/uniform-sampling", json={"mu": 0, "n": N}).status_code == 422
    assert client.post("/api/report/uniform-sampling", json={"mu": 1, "n": 0}).status_code == 422
    generic = client.post("/api/report", json={"mechanism": {"kind": "uniform-sampling", "mu": MU, "n": N}})
    assert generic.status_code == 200 and generic.json()["failure_mode"] == "catastrophic"
    page = client.post("/report", data={"kind": "uniform-sampling", "sampling_mu": "1", "sampling_n": "5",
                                        "discretization": "1e-4"})
    assert page.status_code == 200 and "catastrophic" in page.text and "Example 3" in page.text
    bad = client.post("/report", data={"kind": "uniform-sampling", "sampling_mu": "1", "sampling_n": "0",
                                       "discretization": "1e-4"})
    assert 'id="sampling_n-error"' in bad.text
    bad = client.post("/report", data={"kind": "uniform-sampling", "sampling_mu": "-1", "sampling_n": "3",
                                       "discretization": "1e-4"})
    assert 'id="sampling_mu-error"' in bad.text


def test_page_says_why_epsilon_is_zero_beside_catastrophic(client):
    # ε = 0 at δ = 1e-05 beside "catastrophic": the page now says that δ covers the disclosures
    from html import unescape

    page = unescape(client.get("/report", params={"kind": "uniform-sampling", "sampling_mu": "1",
                                                  "sampling_n": "1000000"}).text)
    assert "0 (outright disclosures fall in δ)" in page
    assert "(ε, δ)-DP lets δ cover rare outputs" in page and "catastrophic" in page
    assert 'id="next-links"' not in page  # no finite μ to carry to Convert or Risk
