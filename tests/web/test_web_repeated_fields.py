"""A form field given more than once (``sigma=1&sigma=0.01``) is refused, never read as its last
value (Starlette's ``form.get`` answers the last: the calculator answered for sigma 0.01),
as the JSON bodies refuse a key named twice: on the calculator's pages beside the field with
the other fields kept (422), on every other form route before any work or write (422)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from fdpkit.web.repeated_fields import repeated

FORM = {"content-type": "application/x-www-form-urlencoded", "accept": "text/html"}


def _errors(html: str) -> dict[str, str]:
    return {k: unescape(v) for k, v in re.findall(r'class="error" id="([\w-]+)-error" role="alert">([^<]*)<', html)}


# (page, a valid form's body, the field given twice, a second value that would be answered)
PAGES = [
    ("/calculator", "mode=gaussian&sensitivity=1&delta=1e-5&sigma=1", "sigma", "0.01"),
    ("/report", "kind=dpsgd&noise_multiplier=1&sample_rate=0.01&steps=100", "noise_multiplier", "0.5"),
    ("/calibrate", "target=epsilon&target_value=3&delta=1e-5&sample_rate=0.01&steps=100", "delta", "1e-3"),
    ("/convert", "mu=1&delta=1e-5", "mu", "3"),
    ("/compare", "kind_1=mu&value_1=1&kind_2=mu&value_2=2", "value_1", "3"),
    ("/risk", "mu=1&prior=0.01", "mu", "3"),
    ("/plan", "guide=utility_first&effect=0.2&n=100&sd=0.25&level=0.01&max_relative_loss=0.01", "n", "5"),
    ("/sweep", "task=map&noise_multiplier=1,2&sample_rate=0.01&steps=100&delta=1e-5", "delta", "1e-3"),
    ("/audit", "mode=counts&true_positives=50&false_positives=1&n_members=100&n_nonmembers=100", "confidence", "0.5"),
]


@pytest.mark.parametrize("path, body, field, other", PAGES, ids=[p[0] for p in PAGES])
def test_a_page_refuses_a_field_given_twice_beside_it_keeping_the_other_fields(client, path, body, field, other):
    first = dict(pair.split("=") for pair in body.split("&")).get(field, "0.95")
    sent = f"{body}&{field}={first}&{field}={other}" if f"{field}=" not in body else f"{body}&{field}={other}"
    r = client.post(path, content=sent, headers=FORM)
    assert r.status_code == 422, (path, r.status_code)
    errors = _errors(r.text)
    assert errors.get(field, "").startswith(f"{field.replace('_', ' ')} is given twice"), errors
    assert f"'{first}', '{other}'" in errors[field] and len(errors) == 1, errors
    kept = next(k for k in dict(p.split("=") for p in body.split("&"))
                if k not in (field, "mode", "kind", "kind_1", "kind_2", "task", "guide", "target"))
    assert re.search(rf'name="{kept}"[^>]*value="|value="[^"]*"[^>]*name="{kept}"', r.text), kept
    # the refused field shows what was sent, both values (it showed the last alone, 'other': an input
    # that looked accepted, hiding why it was refused)
    shown = re.findall(rf'<input[^>]*name="{field}"[^>]*value="([^"]*)"', r.text)
    assert shown == [f"{first}, {other}"], shown
    # the same form with the field once is answered (the refusal is the repetition's, not the form's)
    assert client.post(path, content=body, headers=FORM).status_code == 200, path


def test_a_permalink_with_a_field_twice_is_refused_too(client):
    r = client.get("/convert?mu=1&mu=3&delta=1e-5", headers={"accept": "text/html"})
    assert r.status_code == 422 and _errors(r.text)["mu"].startswith("mu is given twice"), r.text[:300]
    assert re.findall(r'<input[^>]*name="mu"[^>]*value="([^"]*)"', r.text) == ["1, 3"]  # not "3"
    assert client.get("/convert?mu=1&delta=1e-5").status_code == 200


@pytest.mark.parametrize("path, query, field", [
    ("/calculator", "mode=laplace&mode=composition&sensitivity=1&scale=1", "mode"),
    ("/risk", "guarantee=epsilon&guarantee=mu&epsilon=1&delta=1e-5&prior=0.01", "guarantee"),
    ("/plan", "guide=privacy_first&guide=utility_first&effect=0.2&n=100&sd=0.25&level=0.01", "guide"),
])
def test_a_select_given_twice_shows_the_first_value_sent(client, path, query, field):
    # the select showed the last value; with every value shown ("laplace, composition") no option
    # matched and the browser showed the list's first (Gaussian), with its fields
    r = client.get(f"{path}?{query}", headers={"accept": "text/html"})
    assert r.status_code == 422 and f"{field} is given twice" in unescape(r.text)
    select = re.search(rf'<select[^>]*name="{field}"[^>]*>(.*?)</select>', r.text, re.S).group(1)
    first = query.split("&")[0].split("=")[1]
    assert re.findall(r'<option value="([^"]+)"\s*selected', select) == [first], select


@pytest.mark.parametrize("body", [
    "task=map&task=design&noise_multiplier=1,2&sample_rate=0.01&steps=100&delta=1e-5",
    "task=design&task=map&mu=1&batch_size=256&epochs=1&dataset_size=60000",
    "task=map&task=x&noise_multiplier=1,2&sample_rate=0.01&steps=100&delta=1e-5",
])
def test_the_sweep_task_given_twice_reads_the_first_form(client, body):
    # the last task was read: the map form was refused with the design form's four "required"
    # errors (and the design form with the map's), an unknown last task with "task must be ..."
    r = client.post("/sweep", content=body, headers=FORM)
    assert r.status_code == 422
    first, second = (v for k, v in (p.split("=") for p in body.split("&")) if k == "task")
    assert _errors(r.text) == {"form": f"task is given twice ('{first}', '{second}'): send it once"}, _errors(r.text)


@pytest.mark.parametrize("body, first", [
    ("kind=dpsgd&kind=mechanism&noise_multiplier=1&sample_rate=0.01&steps=100", "dpsgd"),
    ("kind=mechanism&kind=dpsgd&mechanism=%7B%22kind%22%3A%22gaussian%22%2C%22sigma%22%3A1%7D", "mechanism"),
])
def test_the_report_kind_given_twice_reads_the_first_and_is_refused_beside_the_radios(client, body, first):
    # the last kind was read: "mechanism is required" for a DP-SGD form (and the DP-SGD fields'
    # "required" errors for a spec), the refusal itself atop the form
    r = client.post("/report", content=body, headers=FORM)
    assert r.status_code == 422
    errors = _errors(r.text)
    assert list(errors) == ["kind"] and errors["kind"].startswith("kind is given twice"), errors
    assert re.findall(r'name="kind" value="([\w-]+)"[^>]*checked', r.text) == [first]
    radios = re.findall(r'<input[^>]*name="kind"[^>]*>', r.text)
    assert len(radios) == 4 and all('aria-describedby="kind-error"' in x for x in radios), radios


#: the audit's counts, which the counts mode reads and the other modes leave alone
COUNTS = "true_positives=50&false_positives=1&n_members=100&n_nonmembers=100"


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("first, second", [("counts", "simulate"), ("simulate", "counts"), ("scores", "counts")])
def test_the_audit_mode_given_twice_checks_the_first_radio_and_is_refused_beside_it(client, method, first, second):
    # the form read the last mode: on POST no radio was checked ("counts, simulate" is no radio's
    # value) and the errors were the last mode's ("ran is required" for counts, simulate); a
    # permalink ending in mode=scores showed the empty form, 200, without a word
    query = f"mode={first}&mode={second}&{COUNTS}"
    r = (client.get(f"/audit?{query}", headers={"accept": "text/html"}) if method == "GET"
         else client.post("/audit", content=query, headers=FORM))
    assert r.status_code == 422, r.status_code
    assert re.findall(r'name="mode" value="(\w+)"[^>]*checked', r.text) == [first]
    errors = _errors(r.text)
    assert errors["mode"] == f"mode is given twice ('{first}', '{second}'): send it once", errors
    assert "form" not in errors and (first == "simulate") == ("ran" in errors), errors
    radios = re.findall(r'<input[^>]*name="mode"[^>]*>', r.text)
    assert len(radios) == 3 and all('aria-describedby="mode-error"' in x for x in radios), radios


@pytest.mark.parametrize("body, field", [
    ("guide=privacy_first&guide=utility_first&effect=0.2&n=100&sd=0.25&level=0.01&max_relative_loss=0.01", "guide"),
    ("guide=utility_first&effect=0.2&n=100&sd=0.25&level=0.01&max_relative_loss=0.01"
     "&blatant_disclosure_ok=on&blatant_disclosure_ok=on", "blatant_disclosure_ok"),
])
def test_a_refusal_without_a_place_beside_its_field_is_said_atop_the_form(client, body, field):
    # the plan page has no error place beside its guide or its tick boxes: the 422 said nothing
    r = client.post("/plan", content=body, headers=FORM)
    assert r.status_code == 422
    assert _errors(r.text).get("form", "").startswith(f"{field.replace('_', ' ')} is given twice"), _errors(r.text)


@pytest.mark.parametrize("path, body", [
    ("/plan", "guide=privacy_first&guide=utility_first&effect=0.2&n=100&sd=0.25&level=0.01&max_relative_loss=0.01"),
    ("/sweep", "task=map&task=x&noise_multiplier=1,2&sample_rate=0.01&steps=100&delta=1e-5"),
    ("/convert", "mu=1&mu=3&delta=1e-5"),
])
def test_a_refused_form_renders_its_page_once(client, monkeypatch, path, body):
    # a refusal with no place beside its field rendered the page, read its text, then rendered it
    # again with the refusal atop the form (two renders per 422; now the slot atop is filled in)
    from fdpkit.web import common

    rendered: list[str] = []
    render = common.templates.TemplateResponse

    def counted(*args, **kwargs):
        rendered.append(args[1])
        return render(*args, **kwargs)

    monkeypatch.setattr(common.templates, "TemplateResponse", counted)
    r = client.post(path, content=body, headers=FORM)
    assert r.status_code == 422 and "is given twice" in unescape(r.text)
    assert len(rendered) == 1, rendered


def test_the_hidden_off_before_a_ticked_box_is_not_a_repetition(client):
    body = ("guide=privacy_first&effect=0.2&n=100&sd=0.25&level=0.01&max_relative_risk=2"
            "&high_confidence_ok=off&high_confidence_ok=on")
    assert client.post("/plan", content=body, headers=FORM).status_code == 200
    assert repeated([("x", "off"), ("x", "on")]) == {} and repeated([("x", "on"), ("x", "off")])


def test_other_form_routes_refuse_before_any_work(client):
    # a download: 422 naming the field (was: the CSV of sigma 0.01)
    r = client.post("/calculator/export?format=csv", content="mode=gaussian&sensitivity=1&delta=1e-5&sigma=1&sigma=0.01",
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 422 and r.json()["parameter"] == "sigma", r.text
    # the ledger's login (its attempt not counted: refused as the form is read)
    r = client.post("/ledger/login", content="username=a&username=b&password=x&csrf_token=t", headers=FORM)
    assert r.status_code == 422 and "username is given twice" in unescape(r.text)
    # the multipart API (FastAPI's own Form() reading: was 200 at the last delta, not 400)
    files = {"members": ("m.csv", b"0.9\n0.8\n0.7\n"), "nonmembers": ("n.csv", b"0.1\n0.2\n0.3\n")}
    r = client.post("/api/audit/upload", files=files, data={"delta": ["1e-5", "0.5"]})
    assert r.status_code == 422 and r.json()["parameter"] == "delta", r.text


def test_a_repeated_query_field_the_page_does_not_read_is_left_alone(client):
    assert client.get("/calculator?utm=a&utm=b").status_code == 200


def test_a_typed_value_is_never_taken_for_the_slot_atop_the_form(client, monkeypatch):
    # the slot page() fills in after its one render is random per process: a value a user types
    # and the page echoes ("mu is given twice ('...', '3')") is shown as typed, never replaced
    from fdpkit.web import common

    assert common._FORM_SLOT.startswith("fdpkit-form-error-slot-") and len(common._FORM_SLOT) > 30
    typed = "fdpkit-form-error-slot-pending"  # the slot's spelling before it was random
    r = client.post("/convert", content=f"mu={typed}&mu=3&delta=1e-5", headers=FORM)
    assert r.status_code == 422 and typed in _errors(r.text).get("mu", ""), _errors(r.text)
    monkeypatch.setattr(common, "_FORM_SLOT", typed)  # as it was: the echoed value was replaced
    r = client.post("/convert", content=f"mu={typed}&mu=3&delta=1e-5", headers=FORM)
    assert typed not in _errors(r.text).get("mu", "")
