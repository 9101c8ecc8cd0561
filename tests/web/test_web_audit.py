"""The audit page and its JSON twins through FastAPI's TestClient (uploads, counts,
simulation, malformed files -> 422, size limit -> 413)."""

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.audit import scores_csv, simulate_attack
from fdpkit.web.routers import audit as audit_router

GAUSS_1 = '{"kind": "gaussian", "sigma": 1.0}'


@pytest.fixture(scope="module")
def scores():
    sim = simulate_attack(fp.Gaussian(0.5), trials=3000, seed=8)
    return sim.member_scores, sim.nonmember_scores


def _files(m, n):
    return {"members": ("m.csv", scores_csv(m).encode(), "text/csv"),
            "nonmembers": ("n.csv", scores_csv(n).encode(), "text/csv")}


def test_page_loads_with_nav(client):
    r = client.get("/audit")
    assert r.status_code == 200 and 'href="/audit"' in r.text and "enctype=\"multipart/form-data\"" in r.text


def test_upload_shows_violation_and_plot(client, scores):
    r = client.post("/audit", data={"mode": "scores", "mechanism": GAUSS_1, "confidence": "0.95", "delta": "1e-5"},
                    files=_files(*scores))
    assert r.status_code == 200, r.text[:500]
    assert "VIOLATION" in r.text and "<svg" in r.text and "Bonferroni" in r.text
    r = client.post("/audit", data={"mode": "scores", "mechanism": '{"kind": "gaussian", "sigma": 0.5}'},
                    files=_files(*scores))
    assert r.status_code == 200 and "No violation" in r.text


def test_counts_and_simulation_on_the_page(client):
    r = client.post("/audit", data={"mode": "counts", "true_positives": "900, 500", "false_positives": "100 10",
                                    "n_members": "1000", "n_nonmembers": "1000", "mechanism": ""})
    assert r.status_code == 200 and 'id="mu-lower"' in r.text
    r = client.post("/audit", data={"mode": "simulate", "ran": '{"kind": "gaussian", "sigma": 0.5}',
                                    "mechanism": GAUSS_1, "trials": "2000", "seed": "1"})
    assert r.status_code == 200 and "VIOLATION" in r.text
    assert 'id="simulation"' in r.text and "Without noise the attack is perfect" in r.text


@pytest.mark.parametrize("members, field, needle", [
    (b"score\n1.0\nabc\n", "members", "not a number"),
    (b"", "members", "no scores"),
    (b"a,b\n1,2\n", "members", "columns"),
    (b"\xff\xfe\x00garbage", "members", "not a text CSV"),
    (b"score\nnan\n", "members", "NaN"),
    (b"inf\n2\n", "members", "not a finite score"),  # as the JSON twin (it was accepted)
    (b"1e999\n2\n", "members", "not a finite score"),
    (b"1;2\n", "members", "is not a number (give one score per line"),  # not just "no scores"
    (b"score\n1_000\n", "members", "bad.csv, line 2"),  # not a plain decimal number: float() read 1000
    (b"0x10\n1\n", "members", "bad.csv, line 1"),  # dropped as a header
    (b"score\n\xd9\xa1\xd9\xa2\n", "members", "is not a plain decimal number"),  # Arabic-Indic 12
])
def test_malformed_upload_is_422_with_a_clear_error(client, scores, members, field, needle):
    files = _files(*scores)
    files["members"] = ("bad.csv", members, "text/csv")
    r = client.post("/audit", data={"mode": "scores"}, files=files)
    assert r.status_code == 422
    assert f'id="{field}-error"' in r.text and needle in r.text
    api = client.post("/api/audit/upload", files=files)
    assert api.status_code == 422 and needle in api.json()["detail"]


def test_page_errors_are_422(client):
    r = client.post("/audit", data={"mode": "scores"})
    assert r.status_code == 422 and "members is required" in r.text
    r = client.post("/audit", data={"mode": "counts", "true_positives": "11", "false_positives": "1",
                                    "n_members": "10", "n_nonmembers": "10"})
    assert r.status_code == 422 and "true_positives must be &lt;= members" in r.text
    r = client.post("/audit", data={"mode": "counts", "true_positives": "x", "false_positives": "1",
                                    "n_members": "10", "n_nonmembers": "10"})
    assert r.status_code == 422 and 'id="true_positives-error"' in r.text
    r = client.post("/audit", data={"mode": "simulate", "ran": '{"kind": "pure_dp", "epsilon": 1}'})
    assert r.status_code == 422 and "simulated" in r.text
    r = client.post("/audit", data={"mode": "simulate", "ran": "{oops"})
    assert r.status_code == 422 and 'id="ran-error"' in r.text


def test_upload_size_limit(client, monkeypatch, scores):
    monkeypatch.setattr(audit_router, "MAX_UPLOAD_BYTES", 1000)
    r = client.post("/api/audit/upload", files=_files(*scores))
    assert r.status_code == 422 and "larger than" in r.json()["detail"]
    monkeypatch.setattr(audit_router, "MAX_REQUEST_BYTES", 1000)
    r = client.post("/audit", data={"mode": "scores"}, files=_files(*scores))
    assert r.status_code == 413


def test_score_file_limit_counts_scores_not_the_header(client, monkeypatch):
    # a header plus exactly MAX_SCORES (1,000,000) scores was refused ("more than 1,000,000
    # rows": the header counted as a row) while the JSON API took 1,000,000 scores
    monkeypatch.setattr(audit_router, "MAX_SCORES", 3)
    m, n = [1.0, 2.0, 3.0], [0.0, 0.5, 1.0]
    r = client.post("/api/audit/upload", files=_files(m, n))  # "score" header + 3 scores each
    assert r.status_code == 200, r.text[:300]
    assert r.json()["members"] == 3
    files = {"members": ("m.csv", b"1\n2\n3\n", "text/csv"), "nonmembers": ("n.csv", b"0\n0.5\n1\n", "text/csv")}
    assert client.post("/api/audit/upload", files=files).status_code == 200
    r = client.post("/api/audit/upload", files=_files(m + [4.0], n))
    assert r.status_code == 422 and "m.csv has more than 3 scores" in r.json()["detail"]


def test_score_files_beyond_the_servers_1_mb_body_limit_are_audited(client):
    # the page promises 16 MiB and 1,000,000 scores per file; the edge's 1 MB body limit
    # answered 413 to any upload over 1 MB (about 60,000 scores), page form included
    rng = np.random.default_rng(4)
    m, n = rng.normal(0.5, 1.0, 120_000), rng.normal(0.0, 1.0, 120_000)
    files = _files(m, n)
    assert sum(len(f[1]) for f in files.values()) > 2_000_000
    r = client.post("/api/audit/upload", files=files)
    assert r.status_code == 200, r.text[:300]
    assert r.json()["members"] == 120_000 and r.json()["mu_lower"] == pytest.approx(fp.run_audit(m, n).mu_lower)
    r = client.post("/audit", data={"mode": "scores"}, files=files)
    assert r.status_code == 200 and "mu" in r.text
    # every other route keeps the 1 MB limit
    r = client.post("/api/sweep", content=b"[" + b"1," * 600_000 + b"1]", headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_json_api_scores_counts_and_simulation(client, scores):
    m, n = scores
    r = client.post("/api/audit", json={"member_scores": m[:500].tolist(), "nonmember_scores": n[:500].tolist(),
                                        "mechanism": {"kind": "gaussian", "sigma": 1.0}})
    assert r.status_code == 200
    data = r.json()
    lib = fp.run_audit(m[:500], n[:500], mechanism=fp.Gaussian(1.0))
    assert data["mu_lower"] == pytest.approx(lib.mu_lower) and data["violation"] == lib.violation
    r = client.post("/api/audit", json={"counts": {"true_positives": [900], "false_positives": [100],
                                                   "members": 1000, "nonmembers": 1000}})
    assert r.status_code == 200 and r.json()["violation"] is None
    r = client.post("/api/audit/simulate", json={"mechanism": {"kind": "laplace", "scale": 1.0}, "trials": 2000})
    assert r.status_code == 200 and r.json()["violation"] is False and r.json()["simulated"]["score"] == "output"


@pytest.mark.parametrize("body, needle", [
    ({"member_scores": [1.0]}, "give member_scores"),
    ({"member_scores": [], "nonmember_scores": [1.0]}, "member_scores"),
    ({"member_scores": [1.0, 1.0], "nonmember_scores": [1.0]}, "constant"),
    ({"counts": {"true_positives": [1, 2], "false_positives": [1], "members": 10, "nonmembers": 10}},
     "false_positives"),
    ({"counts": {"true_positives": [1], "false_positives": [20], "members": 10, "nonmembers": 10}},
     "false_positives must be <= nonmembers"),
    ({"member_scores": [1.0], "nonmember_scores": [0.0], "confidence": 1.0}, "confidence"),
    ({"member_scores": [1.0], "nonmember_scores": [0.0], "mechanism": {"kind": "nope"}}, "kind"),
    ({"member_scores": [1.0], "nonmember_scores": [0.0], "mechanism": {"kind": "gaussian", "sigma": 1e-3}}, "noise"),
])
def test_json_api_bad_input_is_422(client, body, needle):
    r = client.post("/api/audit", json=body)
    assert r.status_code == 422 and needle in r.text


def test_simulation_work_is_bounded(client):
    r = client.post("/api/audit/simulate", json={"mechanism": {"kind": "dpsgd", "noise_multiplier": 1.0,
                                                               "sample_rate": 0.01, "steps": 100000},
                                                 "trials": 200000})
    assert r.status_code == 422 and "trials x releases" in r.json()["detail"]
    assert np.isfinite(client.post("/api/audit/simulate", json={"mechanism": {"kind": "randomized_response",
                                                                             "epsilon": 1}}).json()["mu_lower"])


def test_api_downloads_the_audit_document(client, scores):
    m, n = scores
    body = {"member_scores": m[:300].tolist(), "nonmember_scores": n[:300].tolist()}
    r = client.post("/api/audit?format=md", json=body)
    assert r.status_code == 200 and r.text.startswith("# Audit") and "attachment" in r.headers["content-disposition"]
    r = client.post("/api/audit/upload?format=csv", files=_files(m[:300], n[:300]))
    assert r.status_code == 200 and "μ lower bound" in r.text
    assert client.post("/api/audit?format=xml", json=body).status_code == 422


def test_score_files_get_a_link_by_their_digest(client, scores):
    """Files cannot go in a URL: the result links to the scores' digest, held by the server
    (bounded), says so beside the result, and a link whose scores were dropped asks for the files."""
    import re

    from fdpkit.web.score_store import digest_of

    m, n = scores[0][:400], scores[1][:400]
    r = client.post("/audit", data={"mode": "scores", "mechanism": GAUSS_1}, files=_files(m, n))
    assert r.status_code == 200
    digest = digest_of(np.asarray(m, float), np.asarray(n, float))
    link = re.search(r'data-permalink="([^"]+)"', r.text).group(1).replace("&amp;", "&")
    assert link.startswith(f"/audit?mode=scores&scores={digest}") and "mechanism=" in link
    assert 'id="link-note"' in r.text and "works while this server holds" in r.text
    again = client.get(link)
    assert again.status_code == 200 and re.search(r'id="mu-lower">[^<]+<', again.text)
    assert re.search(r'id="mu-lower">([^<]+)<', again.text).group(1) == re.search(r'id="mu-lower">([^<]+)<',
                                                                                  r.text).group(1)
    # other settings for the held scores: no files chosen, the form carries the digest
    r2 = client.post("/audit", data={"mode": "scores", "scores": digest, "confidence": "0.9"})
    assert r2.status_code == 200 and 'id="mu-lower"' in r2.text and f'value="{digest}"' in r2.text
    gone = client.get("/audit?mode=scores&scores=0123456789abcdef")
    assert gone.status_code == 422 and "no longer held" in gone.text and 'id="members-error"' in gone.text


def test_score_store_is_bounded():
    from fdpkit.web.score_store import ScoreStore

    store = ScoreStore(max_entries=3, max_bytes=10_000)
    keys = [store.put(np.full(100, float(i)), np.zeros(100)) for i in range(5)]  # 1,600 bytes each
    assert len(store) == 3 and store.get(keys[0]) is None and store.get(keys[4]) is not None
    big = store.put(np.zeros(1000), np.zeros(1000))  # 16,000 bytes: over the whole budget, not held
    assert store.get(big) is None and store.nbytes <= 10_000
    store.put(np.zeros(300), np.zeros(300))  # 4,800 bytes: older sets go until it fits
    assert store.nbytes <= 10_000 and len(store) <= 3


def test_audit_downloads_are_named_from_their_inputs(client, scores):
    m, n = scores[0][:300], scores[1][:300]
    counts = {"mode": "counts", "true_positives": "900, 500", "false_positives": "100, 10", "n_members": "1000",
              "n_nonmembers": "1000", "mechanism": GAUSS_1}
    page = client.post("/audit", data=counts).text
    assert 'action="/audit/download?format=pdf"' in page
    r = client.post("/audit/download?format=md", data=counts)
    assert r.status_code == 200 and r.text.startswith("# Audit")
    assert ('filename="fdpkit-audit-counts-thresholds2-members1000-nonmembers1000-vs-gaussian-sigma1.md"'
            in r.headers["content-disposition"])
    r = client.post("/audit", data={"mode": "scores"}, files=_files(m, n))
    digest = r.text.split('name="scores" value="')[1].split('"')[0]
    r = client.post("/audit/download?format=json", data={"mode": "scores", "scores": digest, "confidence": "0.9"})
    assert r.status_code == 200 and r.json()["inputs"] == {"kind": "scores", "members": 300, "nonmembers": 300,
                                                           "digest": f"sha256-{digest}", "confidence": 0.9,
                                                           "delta": 1e-5}
    r = client.post("/audit/download?format=csv", data={"mode": "scores", "scores": digest})
    assert f'filename="fdpkit-audit-scores-members300-nonmembers300-sha256-{digest}.csv"' in \
        r.headers["content-disposition"]
    r = client.post("/api/audit?format=md", json={"member_scores": m.tolist(), "nonmember_scores": n.tolist(),
                                                   "mechanism": {"kind": "gaussian", "sigma": 2.0}})
    assert 'filename="fdpkit-audit-scores-members300-nonmembers300-vs-gaussian-sigma2.md"' in \
        r.headers["content-disposition"]
    r = client.post("/audit/download?format=pdf", data={"mode": "simulate", "ran": '{"kind": "gaussian", "sigma": 2}',
                                                        "trials": "500", "seed": "3"})
    assert r.status_code == 200 and r.content.startswith(b"%PDF")
    assert 'filename="fdpkit-audit-simulate-gaussian-sigma2-trials500-seed3.pdf"' in r.headers["content-disposition"]
    assert client.post("/audit/download?format=xml", data=counts).status_code == 422


@pytest.mark.parametrize("ran, mechanism, field, start", [
    ("{}", "", "ran", "ran: mechanism kind must be one of"),
    ('{"kind": "gaussian", "sigma": 0.01}', "", "ran", "ran: noise (sd or scale per unit of sensitivity) must be"),
    ('{"kind": "dpsgd", "noise_multiplier": 1, "sample_rate": 0.01, "steps": 10000000}', "", "ran",
     "ran: steps must be at most 1,000,000"),
    (GAUSS_1, '{"kind": "gaussian", "sigma": 0.01}', "mechanism", "mechanism: noise"),
])
def test_a_simulation_spec_is_refused_beside_its_own_field(client, ran, mechanism, field, start):
    # the spec of the mechanism that runs was refused beside the certified mechanism ("mechanism
    # kind must be one of ...") or atop the form (a spec beyond the server's limits)
    import html
    import re

    r = client.post("/audit", data={"mode": "simulate", "ran": ran, "mechanism": mechanism})
    assert r.status_code == 422
    errors = {k: html.unescape(v) for k, v in re.findall(r'id="([\w-]+)-error" role="alert">([^<]*)<', r.text)}
    assert list(errors) == [field] and errors[field].startswith(start), errors
