"""Journeys across pages (session 9): a number shown on one page is the number the next step
uses, without re-typing and without a second rounding of it."""

import re
from html import unescape
from urllib.parse import parse_qsl

import pytest

CAL_FORM = {"target": "epsilon", "target_value": "2", "delta": "1e-5", "batch_size": "50", "dataset_size": "1000",
            "epochs": "2", "discretization": "1e-2", "sampling": "poisson", "relation": "add-remove",
            "unit": "example"}


def _statement(text: str) -> str:
    return unescape(re.search(r'<p id="statement">(.*?)</p>', text, re.S).group(1))


def test_calibrate_quotes_the_safe_side_and_links_to_the_same_report(client):
    # the solved sigma 1.10143 read 1.101 on the page (to nearest: less noise than solved, the
    # unsafe side) while the CLI printed 1.102; and the page had no way on to the full report
    api = client.post("/api/calibrate/dpsgd", json={"epsilon": 2.0, "delta": 1e-5, "batch_size": 50,
                                                    "dataset_size": 1000, "epochs": 2, "discretization": 1e-2})
    exact = api.json()["exact_value"]
    assert f"{exact:.4g}" == "1.101"
    # the API proposes the page's sigma too (it said 1.10143, the search's value, below the page's)
    assert api.json()["noise_multiplier"] == api.json()["value"] == 1.102
    page = client.get("/calibrate", params=CAL_FORM).text
    assert re.search(r'id="value">(<span class="num">)?1\.102<', page)
    assert re.search(r'id="noise-multiplier">(<span class="num">)?1\.102<', page)
    assert 'id="rounded"' in page and "rounded up (the safe side)" in page
    statement = _statement(page)
    assert "σ = 1.102" in statement
    link = unescape(re.search(r'href="(/report\?[^"]*)" id="full-report"', page).group(1))
    assert "noise_multiplier=1.102" in link and "batch_size=50" in link and "epochs=2" in link
    assert "discretization=0.01" in link and "sample_rate" not in link and "steps" not in link
    report = client.get(link)
    assert report.status_code == 200
    assert _statement(report.text) == statement  # the same run, the same words and numbers
    proposal = re.search(r'name="mechanism" value="([^"]*)"', page).group(1)
    assert '&#34;noise_multiplier&#34;: 1.102' in proposal  # the ledger gets the run the page quotes


def _cell(text: str, id_: str) -> str:
    return re.sub(r"<[^>]+>", "", re.search(rf'id="{id_}">(.*?)</td>', text, re.S).group(1)).strip()


def test_calibrate_table_is_of_the_rounded_run_its_statement_states(client):
    # the achieved table read the exact σ 1.10143 (μ 0.6193, ε 2) under the statement of σ = 1.102
    # (μ 0.6188): two runs on one page
    page = client.get("/calibrate", params=CAL_FORM).text
    statement = _statement(page)
    mu = re.search(r"satisfies μ = ([0-9.]+) Gaussian", statement).group(1)
    eps = re.search(r"\(ε = ([0-9.]+), δ = 1e-05\)-DP", statement).group(1)
    assert _cell(page, "achieved-mu") == mu == "0.6188"
    assert _cell(page, "achieved-epsilon") == eps == "1.998"
    assert "the figures below, the statement, the full report and the proposal are all for 1.102" in unescape(page)


def test_report_query_carries_the_users_inputs():
    from fdpkit.web.forms import report_query

    q = report_query({"kind": "dpsgd", "noise_multiplier": 1.1, "sample_rate": 0.0051127, "steps": 7000,
                      "sampling": "poisson", "relation": "add-remove", "unit": "example"})
    assert q == {"kind": "dpsgd", "noise_multiplier": "1.1", "sample_rate": "0.0051127", "steps": "7000",
                 "sampling": "poisson", "relation": "add-remove", "unit": "example"}
    q = report_query({"kind": "dpsgd", "noise_multiplier": 2.0, "sample_rate": 0.05, "steps": 240, "batch_size": 50,
                      "dataset_size": 1000, "epochs": 12.0, "sampling": "shuffled", "relation": "replace-one",
                      "unit": "example", "drop_last": True}, 1e-3)
    assert q["batch_size"] == "50" and q["epochs"] == "12" and q["drop_last"] == "on"
    assert q["discretization"] == "0.001" and "sample_rate" not in q and "steps" not in q


PLAN = {"statistic": "mean", "groups": "1", "alternative": "larger", "effect": "0.2", "n": "500",
        "data_range": "1", "fpr": "0.001", "prior": "0.01"}


def _cells(text: str, table: str) -> list[str]:
    body = re.search(rf'<table id="{table}".*?</table>', text, re.S).group(0)
    return [re.sub(r"<[^>]+>", "", unescape(c)).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", body, re.S)]


def test_plan_page_prints_each_noise_scale_as_its_sentence_does(client):
    # privacy first: the sentence said b = 0.0005113 (rounded up: the attack-power limit holds),
    # the options table b = 0.0005112 (to nearest: TPR 0.050012 > 0.05); the mechanism column
    # showed a Python dict ({'kind': 'gaussian', 'sigma': 0.00138372...}) and the TPR column no FPR
    page = client.get("/plan", params={**PLAN, "guide": "privacy_first", "sd": "0.5", "level": "0.05",
                                       "max_attack_power": "0.05", "high_confidence_ok": "on"}).text
    assert "scale b = 0.0005113" in unescape(page)
    cells = _cells(page, "options")
    assert "attack TPR at FPR 0.001" in cells
    assert "Gaussian (μ-GDP) (recommended)" in cells and "Laplace" in cells and not any("{" in c for c in cells)
    assert "b = 0.0005113" in cells and "σ = 0.001384" in cells and "ε = 3.912" in cells
    # utility first: noise is rounded down (the power requirement); the big σ read 0.03808
    # (to nearest) above a sentence saying σ = 0.03807
    page = client.get("/plan", params={**PLAN, "guide": "utility_first", "sd": "0.25", "level": "0.01", "tests": "3",
                                       "max_relative_loss": "0.01"}).text
    assert "sd σ = 0.03807" in unescape(page)
    assert re.search(r'id="sigma">σ = (<span class="num">)?0\.03807<', page)
    assert ["σ per test", "0.03807"] == _cells(page, "budget-split")[-2:]


def test_plan_json_names_each_option(client):
    d = client.post("/api/plan", json={"guide": "privacy_first", "effect": 0.2, "n": 500, "sd": 0.5,
                                       "high_confidence_ok": True, "max_attack_power": 0.05}).json()
    assert [o["name"] for o in d["options"]] == ["Gaussian (mu-GDP)", "Laplace"]
    assert [o["mechanism"]["kind"] for o in d["options"]] == ["gaussian", "laplace"]  # the specs, as before


def test_report_page_and_download_print_the_headline_bounds_rounded_up(client):
    # σ 1.1, batch 256 of 60000, 30 epochs: ε 1.63627 and TPR 0.00372814 at FPR 1e-3 read 1.636
    # and 0.003728 to nearest (below the certified values); every surface prints 1.637 and 0.003729
    query = {"kind": "dpsgd", "noise_multiplier": "1.1", "batch_size": "256", "dataset_size": "60000", "epochs": "30",
             "sampling": "poisson", "relation": "add-remove", "unit": "example"}
    page = client.get("/report", params=query)
    assert page.status_code == 200, page.text[:500]
    text = re.sub(r"<[^>]+>", "", unescape(page.text))
    assert "1.637" in text and "0.003729" in text and "1.636" not in text and "0.003728" not in text
    assert "(ε = 1.637, δ = 1e-05)-DP" in _statement(page.text)
    md = client.post("/report/download?format=md", data=query)
    assert md.status_code == 200 and "attachment" in md.headers["content-disposition"]
    assert "1.637" in md.text and "0.003729" in md.text and "1.636" not in md.text and "0.003728" not in md.text


REPORT_RUN = {"kind": "dpsgd", "noise_multiplier": "1.1", "batch_size": "50", "dataset_size": "1000", "epochs": "2",
              "discretization": "1e-2"}


def test_report_carries_its_safe_side_mu_to_convert_and_risk(client):
    # the report page had no way on to Convert or Risk: μ had to be re-typed (and a reader who
    # copied the printed μ = 0.6187 had copied a value below the certified one)
    from fdpkit._numerics import safe_text

    api = client.post("/api/report/dpsgd", json={"noise_multiplier": 1.1, "batch_size": 50, "dataset_size": 1000,
                                                 "epochs": 2, "discretization": 1e-2}).json()
    mu, eps = api["guarantee"]["mu"], api["epsilon_at_delta"][0]["epsilon"]
    mu_up, eps_up = safe_text(mu, up=True), safe_text(eps, up=True)
    assert float(mu_up) >= mu and float(eps_up) >= eps
    page = client.get("/report", params=REPORT_RUN).text
    convert = unescape(re.search(r'href="(/convert\?[^"]*)" id="convert-link"', page).group(1))
    risk = unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', page).group(1))
    profile = [safe_text(r["epsilon"], up=True) for r in api["epsilon_at_delta"]]
    assert profile[0] == eps_up
    rng = f"&mu_fpr_min=1e-10&mu_tau={safe_text(api['guarantee']['tau'], up=True)}"  # the range of μ
    # then the run's own attack risk, signed (fdpkit.web.run_link; tests/web/test_web_surfaces_agree.py)
    run = rf"&run_mu={re.escape(mu_up)}&run_tpr=[^&]+&run_posterior=[^&]+&run_rr_at=[^&]+&run_rr=[^&]+" \
          rf"&run_advantage=[^&]+&run_disclosure=[^&]+&run_failure=[a-z]+&run_sig=[A-Za-z0-9_-]{{43}}"
    assert re.fullmatch(rf"/convert\?mu={re.escape(mu_up)}&profile_epsilon={re.escape(','.join(profile))}"
                        rf"&profile_delta=1e-05,1e-06,1e-09&profile_sig=[A-Za-z0-9_-]{{43}}{re.escape(rng)}{run}", convert), convert
    assert api["guarantee"]["alpha_min"] == 1e-10
    assert re.fullmatch(rf"/risk\?guarantee=mu&mu={re.escape(mu_up)}{re.escape(rng)}{run}", risk), risk
    assert f"they carry μ\xa0=\xa0{mu_up}, rounded up (the safe side)" in unescape(page)
    # Convert: the ε of μ-GDP alone, with the report's tighter ε beside it (two numbers, explained)
    conv = unescape(client.get(convert).text)
    assert "from μ-GDP alone" in conv
    note = re.sub(r"<[^>]+>", "", re.search(r'id="profile-note">(.*?)</p>', conv, re.S).group(1))
    assert "This is the ε that μ-GDP alone implies" in note and f"the tighter ε = {eps_up} at δ = 1e-05" in note
    shown = float(re.sub(r"<[^>]+>", "", re.search(r'id="recommended-epsilon">ε = (.*?) <', conv).group(1)))
    assert shown > float(eps_up)  # the μ-GDP ε is the looser one
    # Risk: the same μ filled in
    answer = client.get(risk).text
    assert re.search(rf'id="mu" name="mu" type="text" value="{re.escape(mu_up)}"', answer)


HEADLINE_RUN = {"kind": "dpsgd", "noise_multiplier": "9.4", "sample_rate": "0.32768", "steps": "2000"}


def _figure(page: str, name: str) -> float:
    return float(re.sub(r"<[^>]+>", "", re.search(rf'id="{name}">(.*?)</td>', page).group(1)))


def test_report_risk_link_carries_the_range_of_its_mu(client):
    # the report's μ = 1.567 holds for FPR and FNR >= 1e-10 only (overall TPR <= 1 - G_μ(FPR)
    # + 8.16e-07), but its Risk link carried μ alone: read at FPR 1e-12 the page said TPR
    # 2.283e-08 and posterior 0.9957, below the run's certified 8.388e-07 and 0.9999
    from fdpkit._numerics import safe_text

    page = client.get("/report", params=HEADLINE_RUN).text
    risk = unescape(re.search(r'href="(/risk\?[^"]*)" id="risk-link"', page).group(1))
    # the range, then the run's own figures (signed; those are tested in test_web_surfaces_agree.py):
    # here μ read with its range alone
    risk, run = risk.split("&run_mu=")
    assert risk == "/risk?guarantee=mu&mu=1.567&mu_fpr_min=1e-10&mu_tau=8.159e-07" and run.startswith("1.567&")
    assert safe_text(8.158440057443426e-07, up=True) == "8.159e-07"
    low, usual = client.get(risk + "&fpr=1e-12"), client.get("/risk?guarantee=mu&mu=1.567&fpr=1e-12")
    assert low.status_code == usual.status_code == 200
    assert 'id="range-warning"' in low.text and 'id="range-warning"' not in usual.text
    warning = unescape(re.sub(r"<[^>]+>", "", re.search(r'id="range-warning".*?</div>', low.text, re.S).group(0)))
    assert "FPR and FNR ≥ 1e-10" in warning and "1 − G_μ(FPR) + τ" in warning and "τ = 8.159e-07" in warning
    assert _figure(low.text, "attack-power") >= 8.159e-07 > 30 * _figure(usual.text, "attack-power")
    assert _figure(low.text, "posterior") == 0.9999 > _figure(usual.text, "posterior")
    # the form carries the range on (hidden): another FPR read from the page keeps it
    assert '<input type="hidden" name="mu_fpr_min" value="1e-10">' in low.text
    assert '<input type="hidden" name="mu_tau" value="8.159e-07">' in low.text
    # inside the range: μ's TPR and posterior, no warning; the run-wide rows are the run's bound's
    # (session 12: they described μ-GDP alone, "graceful", beside a certificate that allows τ at FPR 0)
    inside, plain = client.get(risk + "&fpr=1e-3").text, client.get("/risk?guarantee=mu&mu=1.567&fpr=1e-3").text
    assert 'id="range-warning"' not in inside
    assert _figure(inside, "attack-power") == _figure(plain, "attack-power") and \
        _figure(inside, "posterior") == _figure(plain, "posterior")
    assert "blatant disclosure not ruled out (probability ≤ τ = 8.159e-07): catastrophic by the bound; μ-GDP alone: graceful" in unescape(
        re.sub(r"<[^>]+>", "", re.search(r'id="failure-mode">(.*?)</td>', inside).group(1)))
    # the JSON API takes the same optional fields
    api = client.post("/api/risk", json={"guarantee": "mu", "mu": 1.567, "fpr": 1e-12, "mu_fpr_min": 1e-10,
                                         "mu_tau": 8.159e-07}).json()
    assert api["range"]["outside"] and api["attack_power"] >= 8.159e-07 and api["warnings"][0] == api["range"]["note"]


@pytest.mark.parametrize("bad", [{"mu_tau": "-1e-6"}, {"mu_tau": "x"}, {"mu_fpr_min": "0.5"}, {"mu_fpr_min": "0"},
                                 {"mu_fpr_min": "nan"}, {"mu_tau": ""}])
def test_risk_refuses_a_bad_carried_range(client, bad):
    query = {"guarantee": "mu", "mu": "1.567", "fpr": "1e-12", "mu_fpr_min": "1e-10", "mu_tau": "8.159e-07", **bad}
    r = client.get("/risk", params=query)
    assert r.status_code == 422 and 'id="results"' not in r.text
    assert "range of the report's μ is not valid" in unescape(r.text) and 'type="hidden"' not in r.text
    body = {k: v for k, v in query.items() if v != ""}
    assert client.post("/api/risk", json=body).status_code == 422
    # a guarantee other than μ reads without the range on the page (a reader switched it)
    other = client.get("/risk", params={"guarantee": "epsilon", "epsilon": "1", "mu_fpr_min": "1e-10", "mu_tau": "1e-6"})
    assert other.status_code == 200 and 'id="range-warning"' not in other.text


def test_convert_page_says_its_epsilon_is_mu_gdp_alone(client):
    page = unescape(client.get("/convert", params={"mu": "0.4292"}).text)
    assert "at δ = 1e-05, from μ-GDP alone" in page and "GDP alone implies (ε, δ)-DP" in page
    assert 'id="profile-note"' not in page  # no report behind a typed μ
    # a carried pair that the page cannot place (another δ, or not a number) is not quoted
    for bad in ({"profile_epsilon": "1.6", "profile_delta": "1e-7"}, {"profile_epsilon": "x", "profile_delta": "1e-5"}):
        assert 'id="profile-note"' not in client.get("/convert", params={"mu": "0.4292", **bad}).text


def test_report_links_for_finite_mu_only():
    from fdpkit.web.routers.report import next_links

    assert next_links({"guarantee": {"mu": "inf"}, "epsilon_at_delta": []}) is None
    links = next_links({"guarantee": {"mu": 0.5}, "epsilon_at_delta": [{"delta": 1e-5, "epsilon": "inf"}]})
    assert links["convert"] == "/convert?mu=0.5" and links["risk"] == "/risk?guarantee=mu&mu=0.5"
    # no key, no carried epsilon (Convert would not quote an unsigned one)
    unsigned = next_links({"guarantee": {"mu": 0.5}, "epsilon_at_delta": [{"delta": 1e-5, "epsilon": 1.9}]})
    assert unsigned["convert"] == "/convert?mu=0.5"


def _note(text: str) -> str | None:
    found = re.search(r'id="profile-note">(.*?)</p>', unescape(text), re.S)
    return re.sub(r"<[^>]+>", "", found.group(1)) if found else None


def test_convert_quotes_only_the_figures_the_report_signed(client):
    # the Convert page quoted any profile_epsilon a link carried as "the accountant's privacy
    # profile of the run": /convert?mu=0.6206&profile_epsilon=0.001&profile_delta=1e-05 showed
    # "the tighter ε = 0.001 ... quote that one for the run", a figure no report ever made
    from urllib.parse import parse_qsl, urlencode

    page = client.get("/report", params=REPORT_RUN).text
    href = unescape(re.search(r'href="(/convert\?[^"]*)" id="convert-link"', page).group(1))
    carried = dict(parse_qsl(href.split("?", 1)[1]))
    from fdpkit.web.run_link import RUN, RUN_SIG

    assert set(carried) == {"mu", "profile_epsilon", "profile_delta", "profile_sig", "mu_fpr_min", "mu_tau", *RUN,
                            RUN_SIG}
    good = _note(client.get(href).text)
    assert good and f"the tighter ε = {carried['profile_epsilon'].split(',')[0]} at δ = 1e-05" in good
    mu_eps = re.search(r'id="recommended-epsilon">ε = (.*?) <', client.get(href).text).group(1)

    def shown(**change):
        query = {**carried, **change}
        text = client.get("/convert?" + urlencode({k: v for k, v in query.items() if v is not None})).text
        return text, _note(text), 'id="profile-unverified"' in text

    hand_made = {"mu": carried["mu"], "profile_epsilon": "0.001", "profile_delta": "1e-05"}
    text = client.get("/convert", params=hand_made).text  # the old hand-made link: no signature
    assert _note(text) is None and "0.001" not in re.sub(r"<[^>]+>", "", unescape(text).split("Seed tables")[0])
    assert 'id="profile-unverified"' not in text  # no signature: simply no note, as any typed μ
    assert re.search(r'id="recommended-epsilon">ε = (.*?) <', text).group(1) == mu_eps  # μ still converts
    sig = carried["profile_sig"]
    flipped = sig[:-1] + ("A" if sig[-1] != "A" else "B")
    for change in ({"profile_epsilon": "0.001"}, {"profile_epsilon": carried["profile_epsilon"] + "0"},
                   {"profile_delta": "1e-5"}, {"mu": "0.4"}, {"profile_sig": flipped}, {"profile_sig": "x"},
                   {"profile_sig": "é"}):
        text, note, unverified = shown(**change)
        assert note is None and unverified, change
        assert "0.001" not in re.sub(r"<[^>]+>", "", unescape(text).split("Seed tables")[0])
        assert 'id="recommended-epsilon">' in text, change  # μ still converts
    text, note, unverified = shown(profile_sig=None)  # signature dropped: no note, no complaint
    assert note is None and not unverified and 'id="recommended-epsilon">' in text


def test_link_key_is_per_server_unless_the_ledger_key_is_set(monkeypatch):
    from fdpkit.ledger.chain import KEY_ENV
    from fdpkit.web.main import create_app
    from fdpkit.web.signed_links import LEDGER_KEY_ENV, check, sign

    assert LEDGER_KEY_ENV == KEY_ENV
    monkeypatch.delenv(KEY_ENV, raising=False)
    a, b = create_app().state.link_key, create_app().state.link_key
    assert len(a) == 32 and a != b  # a fresh key per server start
    monkeypatch.setenv(KEY_ENV, "chain-secret")
    c, d = create_app().state.link_key, create_app().state.link_key
    assert c == d and c != b"chain-secret"  # derived from the ledger's key, never the key itself
    values = {"mu": "0.5", "profile_epsilon": "1.9", "profile_delta": "1e-05"}
    names = tuple(values)
    values["profile_sig"] = sign(c, values, names)
    assert check(d, values, names) is True and check(a, values, names) is False
    assert check(c, {**values, "profile_epsilon": "0.1"}, names) is False
    assert check(c, {k: v for k, v in values.items() if k != "profile_sig"}, names) is None


def test_convert_lists_each_delta_once(client):
    # the "At other δ" table listed ε at δ = 1e-06 and 1e-09 twice (its rows and the alternatives)
    for params, n in (({"mu": "0.4292"}, 3), ({"mu": "0.4292", "delta": "1e-7"}, 4)):
        body = re.search(r'<table id="mu-to-eps">(.*?)</table>', client.get("/convert", params=params).text, re.S).group(1)
        heads = [re.sub(r"<[^>]+>", "", unescape(h)).strip() for h in re.findall(r"<th>(.*?)</th>", body)]
        deltas = [h.split("=")[-1].strip() for h in heads]
        assert len(deltas) == len(set(deltas)) == n, heads


def test_convert_quotes_the_runs_epsilon_at_every_delta_where_mu_alone_is_lower(client):
    # the report's link carried its ε at 1e-5 only, and Convert listed ε from μ-GDP alone at the
    # other δ under "μ-GDP ... so the ε it implies is larger": for the headline run (σ 9.4,
    # q 0.32768, 2000 steps) μ = 1.567 alone gives ε(1e-9) = 10.22, below the run's certified
    # 10.2245 (report: 10.23): μ holds on FPR, FNR >= 1e-10 only, τ = 8.2e-07 beyond it
    from fdpkit.web.routers.report import next_links

    data = {"guarantee": {"mu": 1.5669487330002814},
            "epsilon_at_delta": [{"delta": 1e-5, "epsilon": 7.424384959598824},
                                 {"delta": 1e-6, "epsilon": 8.21576066089897},
                                 {"delta": 1e-9, "epsilon": 10.224467993775615}]}
    from fdpkit.web.routers.convert import CARRIED
    from fdpkit.web.signed_links import app_key, sign

    key = app_key(client.app)
    link = next_links(data, key)["convert"]
    assert re.fullmatch(r"/convert\?mu=1\.567&profile_epsilon=7\.425,8\.216,10\.23&profile_delta=1e-05,1e-06,1e-09"
                        r"&profile_sig=[A-Za-z0-9_-]{43}", link), link  # no alpha_min/tau in data: no range
    page = unescape(client.get(link).text)
    note = re.sub(r"<[^>]+>", "", re.search(r'id="profile-note">(.*?)</p>', page, re.S).group(1))
    assert "the tighter ε = 7.425 at δ = 1e-05" in note
    assert "Not at every δ: at δ = 1e-09 μ-GDP alone gives less than the run's own ε" in note
    table = re.search(r'<details id="eps-details" open>.*?<table id="mu-to-eps">(.*?)</table>', page, re.S).group(1)
    rows = [re.sub(r"<[^>]+>", "", r).strip() for r in re.findall(r"<tr>(.*?)</tr>", table, re.S)]
    assert rows[1:] == ["δ = 1e-05ε = 7.431ε = 7.425", "δ = 1e-06ε = 8.219ε = 8.216",
                        "δ = 1e-09ε = 10.22ε = 10.23 (μ alone gives less: quote this one)"]
    # a single carried pair still reads (older links), and mismatched lists are not quoted
    def signed(values: dict) -> dict:
        return {**values, "profile_sig": sign(key, values, CARRIED)}

    one = unescape(client.get("/convert", params=signed({"mu": "1.567", "profile_epsilon": "7.425",
                                                         "profile_delta": "1e-05"})).text)
    assert 'id="profile-note"' in one and 'id="profile-below"' not in one
    bad = client.get("/convert", params=signed({"mu": "1.567", "profile_epsilon": "7.425,8.216",
                                                "profile_delta": "1e-05"})).text
    assert 'id="profile-note"' not in bad


PLAN_FORM = {"effect": "0.1", "n": "60", "sd": "0.25", "level": "0.05", "data_range": "1", "tests": "1",
             "prior": "0.01", "fpr": "0.001"}


def _legends(page: str) -> list[str]:
    """The plots' texts (the inline SVGs keep their text as <text> elements)."""
    return [unescape(t).strip() for t in re.findall(r"<text[^>]*>([^<]*)", page)]


def test_plan_plots_draw_the_planned_release_as_the_page_prints_it(client):
    # session 13: the utility-first plots drew mu_min to nearest ("Gaussian, μ = 1.1414") while
    # the page says μ = 1.142; the privacy-first plots drew only mu = 0.1, 0.5, 1 and never the
    # recommended option (Gaussian μ = 0.7639 or Laplace ε = 2.303), the one the user must judge
    util = client.get("/plan", params={**PLAN_FORM, "guide": "utility_first", "max_relative_loss": "0.05"}).text
    assert "μ = 1.142 Gaussian DP per release" in unescape(util)
    legends = _legends(util)
    assert "Gaussian, μ = 1.142 (planned)" in legends and "μ = 1.142 (planned)" in legends
    assert "planned μ = 1.142" in legends and not any("1.1414" in t for t in legends)
    priv = client.get("/plan", params={**PLAN_FORM, "guide": "privacy_first", "high_confidence_ok": "on",
                                       "max_attack_power": "0.01"}).text
    text = unescape(priv)
    assert "μ = 0.7639" in text and "ε = 2.303" in text
    legends = _legends(priv)
    assert "Gaussian, μ = 0.7639 (planned)" in legends and "Laplace, ε = 2.303 (planned)" in legends
    assert "μ = 0.7639 (planned)" in legends  # the ROC too
    # bounded confidence: the Laplace option alone, and no "planned μ" mark on the μ axis
    lap = client.get("/plan", params={**PLAN_FORM, "guide": "privacy_first", "high_confidence_ok": "off",
                                      "max_attack_power": "0.01"}).text
    legends = _legends(lap)
    assert legends.count("Laplace, ε = 2.303 (planned)") == 2 and not any("planned μ" in t for t in legends)


def test_privacy_first_plan_states_the_mu_or_epsilon_its_printed_noise_has(client):
    # session 13: the plan printed "Laplace: b = 0.007239 (ε = 2.302)", the limit ln 10 rounded
    # down, while that noise is ε = 2.30234 and the ledger, given the plan's own spec, records
    # "ε 2.303" for it; the Gaussian option likewise (σ 0.02182 is μ 0.76383, printed 0.7638)
    import fdpkit as fp
    from fdpkit._numerics import safe_g

    spec = fp.ZTestSpec(effect=0.1, n=60, sd=0.25, alpha=0.05)
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=0.01,
                            analysis=spec)
    for option, mech in zip(plan.options, plan.mechanisms()):
        r = fp.privacy_report(fp.mechanism_from_dict(mech))
        accounted = r.mu if option.parameter == "mu" else r.epsilon_for_delta(1e-5)
        assert option.value_text() == safe_g(accounted, up=True)  # what the report and the ledger print
    assert [o.value_text() for o in plan.options] == ["0.7639", "2.303"]
    page = unescape(client.get("/plan", params={**PLAN_FORM, "guide": "privacy_first", "high_confidence_ok": "on",
                                                "max_attack_power": "0.01"}).text)
    assert "μ = 0.7639" in page and "ε = 2.303" in page
    assert "0.7638" not in page and "2.302" not in page


def test_utility_first_split_states_the_total_its_noise_has(client):
    # session 13: with 3 tests the plan said "together they are √3 × μ = 2.714 Gaussian DP; the
    # risk readings are for that total" (√3·μ_min) while the readings, and the report of the
    # plan's own mechanism, are at the printed noise's 2.7157; `fdpkit plan` printed "μ of all
    # tests (risk read here) 2.714" and the page's split "2.714 → 1.567" beside "μ = 1.568"
    import fdpkit as fp
    from typer.testing import CliRunner

    from fdpkit._numerics import safe_g
    from fdpkit.cli import app

    spec = fp.ZTestSpec(effect=0.1, n=60, sd=0.25, alpha=0.05, tests=3)
    plan = fp.utility_first(analysis=spec, max_relative_loss=0.05)
    total = safe_g(fp.privacy_report(fp.mechanism_from_dict(plan.mechanism)).mu, up=True)
    assert total == "2.716"
    d = plan.to_dict()
    assert f"√3 × μ = {total} Gaussian DP" in d["noise"][1]
    out = CliRunner().invoke(app, ["plan", "utility-first", "--effect", "0.1", "--n", "60", "--sd", "0.25",
                                   "--max-relative-loss", "0.05", "--tests", "3"]).output
    assert re.search(rf"risk read here\)\s*│ {total} ", out) and "2.714" not in out
    page = unescape(client.get("/plan", params={**PLAN_FORM, "tests": "3", "guide": "utility_first",
                                                "max_relative_loss": "0.05"}).text)
    split = re.search(r'id="budget-split".*?</table>', page, re.S).group(0)
    assert f"{total} → 1.568" in split and "2.714" not in page


def test_calibrate_carries_its_delta_to_its_statement_and_report(client):
    # calibrated to ε ≤ 2 at δ = 2e-5: the page's table read ε at δ = 2e-05, but its statement for
    # the paper and the linked report led with ε at δ = 1e-05 (a larger ε the user never asked about)
    form = {**CAL_FORM, "delta": "2e-5", "dataset_size": "100000"}
    page = client.get("/calibrate", params=form).text
    eps = re.sub(r"<[^>]+>", "", re.search(r'id="achieved-epsilon">(.*?)</td>', page).group(1))
    statement = _statement(page)
    assert f"(ε = {eps}, δ = 2e-05)-DP" in statement
    link = unescape(re.search(r'href="(/report\?[^"]*)" id="full-report"', page).group(1))
    assert "delta=2e-05" in link
    report = client.get(link)
    assert report.status_code == 200
    head = re.search(r"<th>ε at δ = 2e-05</th><td>(.*?)</td>", unescape(report.text)).group(1)
    assert re.sub(r"<[^>]+>", "", head) == eps
    assert f"ε = {eps} at δ = 2e-05;" in unescape(re.sub(r"<[^>]+>", "", report.text))
    assert _statement(report.text) == statement  # the same run, the same words and numbers
    # the downloads carry it (hidden fields), the other δ follow
    values = dict(parse_qsl(link.split("?", 1)[1]))
    js = client.post("/report/download?format=json", data=values).json()
    assert [r["delta"] for r in js["epsilon_at_delta"]] == [2e-5, 1e-5, 1e-6, 1e-9]
    # the default δ adds nothing to the link; a bad δ is said beside its field (422), the rest kept
    plain = client.get("/calibrate", params=CAL_FORM).text
    assert "delta=" not in unescape(re.search(r'href="(/report\?[^"]*)" id="full-report"', plain).group(1))
    bad = client.get("/report", params={**values, "delta": "2"})
    assert bad.status_code == 422 and 'id="delta-error"' in bad.text
    assert "must be between 0 and 1" in bad.text and f'value="{values["noise_multiplier"]}"' in bad.text


def test_calibrated_mu_says_the_fpr_range_it_holds_on(client):
    # the Calibrate page and `fdpkit calibrate` printed the run's μ bare, where the report beside it
    # says "μ holds for attacks with FPR and FNR ≥ 1e-10" (a numeric curve's fit); exact runs hold everywhere
    from typer.testing import CliRunner

    from fdpkit.cli import app

    page = client.get("/calibrate", params=CAL_FORM).text
    assert re.search(r'id="achieved-mu-range">for FPR and FNR ≥ (<span class="num">)?1e-10', page)
    out = CliRunner().invoke(app, ["calibrate", "dpsgd", "--epsilon", "2", "--delta", "1e-5", "--batch-size", "50",
                                   "--dataset-size", "1000", "--epochs", "2", "--discretization", "1e-2"]).output
    assert "achieved mu (FPR and FNR ≥ 1e-10) │" in out
    shuffled = {**CAL_FORM, "target": "mu", "target_value": "1", "sampling": "shuffled", "relation": "replace-one"}
    assert 'id="achieved-mu-range">over all FPR<' in client.get("/calibrate", params=shuffled).text


def test_report_page_says_the_risk_in_plain_words_above_the_placement(client):
    # the page's result card had the grade band and the placement among published runs, but not the
    # run's own risk in words (the report documents now lead with it)
    page = client.get("/report", params=REPORT_RUN).text
    words = unescape(re.sub(r"<[^>]+>", "", re.search(r'<p id="plain-words">(.*?)</p>', page, re.S).group(1)))
    assert words.startswith("In plain words: an attack that wrongly accuses 0.10% of the people")
    placement = unescape(re.sub(r"<[^>]+>", "", re.search(r'<p id="placement">(.*?)</p>', page, re.S).group(1)))
    assert placement.startswith("μ = ") and "published" not in words
