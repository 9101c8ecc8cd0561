"""A ledger form with a field given more than once (``comment=a&comment=b``) answers as the
calculator's pages do: 422 with "comment is given twice ('a', 'b'): send it once" beside the
field, the other fields kept, nothing written (it answered the generic "Refused" page). A
password or token given twice is refused without quoting it; a login with a repeated field
is not a try (the per-client login limit is not consumed)."""

import html
import re

import pytest
from fastapi.testclient import TestClient

from fdpkit.ledger import open_ledger
from fdpkit.ledger.users import add_user, users
from fdpkit.web.login_guard import CLIENT_ATTEMPTS
from fdpkit.web.main import create_app

ROLES = ("viewer", "analyst", "approver", "admin")
PASSWORD = "s3cret-Passw0rd!"
TOKEN = "one-time-setup-token-for-tests"
FORM = {"content-type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('twice') / 'ledger.sqlite'}"
    with open_ledger(url) as led:
        led.add_dataset("census", unit="one person", user="admin")
        for role in ROLES:
            add_user(led, role, role=role, password=PASSWORD + role, actor="admin")
        proposed = led.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="proposed", user="analyst").id
        approved = led.propose("census", {"kind": "gaussian", "sigma": 4.0}, title="approved", user="analyst").id
        led.approve(approved, user="approver", report=False)
        lift = led.request_lift("census", metric="epsilon", level="hard", value=20.0, user="admin",
                                reason="renewed").id
        viewer = next(u.id for u in users(led) if u.name == "viewer")
    return url, create_app(ledger_url=url), {"proposed": proposed, "approved": approved, "lift": lift,
                                             "viewer": viewer}


def _csrf(text: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', text).group(1)


def _login(app, role: str) -> tuple[TestClient, str]:
    c = TestClient(app, follow_redirects=False)
    r = c.post("/ledger/login", data={"username": role, "password": PASSWORD + role,
                                      "csrf_token": _csrf(c.get("/ledger/login").text)})
    assert r.status_code == 303, r.text
    return c, _csrf(c.get("/ledger").text)


def _errors(text: str) -> dict[str, str]:
    return {k: html.unescape(v) for k, v in re.findall(r'class="error" id="([\w-]+)-error" role="alert">([^<]*)<', text)}


def _value(text: str, name: str, tag: str = "input") -> list[str]:
    return [html.unescape(v) for v in re.findall(rf'<{tag}[^>]*name="{name}"[^>]*value="([^"]*)"', text)]


def _head(url: str) -> str:
    with open_ledger(url) as led:
        return str(led.head())


# (role, path, body with a field twice, the error's id, the message's start, (another field, its value kept))
CASES = [
    ("admin", "/ledger/datasets", "name=survey&unit=u1&unit=u2&relation=add-or-remove",
     "unit", "unit is given twice ('u1', 'u2')", ("name", "survey")),
    ("analyst", "/ledger/d/census/propose", "title=t1&title=t2&purpose=p&build=gaussian&noise_scale=2",
     "title", "title is given twice ('t1', 't2')", ("noise_scale", "2")),
    ("analyst", "/ledger/propose", "dataset=census&title=x&build=gaussian&noise_scale=2&noise_scale=0.01",
     "noise_scale", "noise scale is given twice ('2', '0.01')", ("title", "x")),
    ("analyst", "/ledger/propose", "dataset=census&title=x&build=gaussian&noise_scale=2&from=plan&from=report",
     "propose", "from is given twice", ("noise_scale", "2")),
    ("admin", "/ledger/d/census/thresholds", "metric=epsilon&level=notice&value=3&value=4&delta=1e-5",
     "value", "value is given twice ('3', '4')", ("delta", "1e-5")),
    ("approver", "/ledger/r/{proposed}/approve", "comment=ok&comment=fine",
     "approve-comment", "comment is given twice ('ok', 'fine')", None),
    ("approver", "/ledger/r/{proposed}/reject", "next=/ledger/queue&comment=no&comment=never",
     "queue-{proposed}-reject-comment", "comment is given twice ('no', 'never')", None),
    ("approver", "/ledger/r/{approved}/release", "confirm=yes&override_reason=a&override_reason=b",
     "override_reason", "override reason is given twice ('a', 'b')", None),
    ("approver", "/ledger/lifts/{lift}/approve", "next=/ledger/d/census&comment=x&comment=y",
     "lift-{lift}-approve-comment", "comment is given twice ('x', 'y')", None),
    ("approver", "/ledger/lifts/{lift}/reject", "next=/ledger/queue&comment=x&comment=y",
     "lift-{lift}-reject-comment", "comment is given twice ('x', 'y')", None),
    ("admin", "/ledger/lifts/{lift}/reject", "comment=x&comment=y",  # its requester withdraws: no comment field
     "lift", "comment is given twice ('x', 'y')", None),
    ("analyst", "/ledger/r/{proposed}/withdraw", "x=1&x=2",  # no such field: atop the release's actions
     "action", "x is given twice ('1', '2')", None),
    ("admin", "/ledger/users", "name=newbie&role=analyst&password=first-Secret1&password=second-Secret2",
     "password", "password is given twice: send it once", ("name", "newbie")),
    ("admin", "/ledger/users/{viewer}", "action=deactivate&action=role:admin",
     "user-{viewer}-action", "action is given twice ('deactivate', 'role:admin')", None),
]


@pytest.mark.parametrize("role, path, body, field, message, kept", CASES, ids=[f"{c[1]}:{c[3]}" for c in CASES])
def test_a_ledger_form_refuses_a_field_given_twice_beside_it(site, role, path, body, field, message, kept):
    url, app, ids = site
    c, csrf = _login(app, role)
    path, field = path.format(**ids), field.format(**ids)
    head, people = _head(url), [(u.name, u.role, u.active) for u in users(open_ledger(url))]
    r = c.post(path, content=f"csrf_token={csrf}&{body}", headers=FORM)
    assert r.status_code == 422, (path, r.status_code, r.text[:300])
    errors = _errors(r.text)
    assert errors.get(field, "").startswith(message) and errors[field].endswith("send it once"), errors
    assert "Refused" not in r.text.split("<main", 1)[-1][:400]  # the form's page, not the generic refusal
    assert "Secret" not in r.text  # a password is never quoted back
    if kept:
        assert kept[1] in _value(r.text, kept[0]), (kept, _value(r.text, kept[0]))
    assert _head(url) == head  # nothing written: no event in the chain
    assert [(u.name, u.role, u.active) for u in users(open_ledger(url))] == people


def test_the_refused_comment_shows_what_was_sent(site):
    url, app, ids = site
    c, csrf = _login(app, "approver")
    r = c.post(f"/ledger/r/{ids['proposed']}/approve", content=f"csrf_token={csrf}&comment=ok&comment=fine",
               headers=FORM)
    assert _value(r.text, "comment") == ["ok, fine", ""]  # the approve form's, beside its message; reject's empty


def test_a_repeated_csrf_token_is_refused_before_anything(site):
    url, app, ids = site
    c, csrf = _login(app, "approver")
    head = _head(url)
    r = c.post(f"/ledger/r/{ids['proposed']}/approve", content=f"csrf_token={csrf}&csrf_token={csrf}", headers=FORM)
    assert r.status_code == 422 and "csrf token is given twice: send it once" in html.unescape(r.text)
    assert csrf not in r.text.split('name="csrf_token"')[0]  # not quoted in the message
    assert _head(url) == head


def test_login_with_a_field_twice_is_beside_it_and_not_a_try(site):
    _, app, _ = site
    c = TestClient(app, follow_redirects=False)
    for _ in range(CLIENT_ATTEMPTS + 3):  # more than the per-client limit allows tries
        token = _csrf(c.get("/ledger/login").text)
        r = c.post("/ledger/login", headers=FORM,
                   content=f"csrf_token={token}&username=viewer&password=wrong-One&password=wrong-Two")
        assert r.status_code == 422, r.status_code
    assert _errors(r.text) == {"password": "password is given twice: send it once"}
    assert _value(r.text, "username") == ["viewer"] and "wrong-" not in r.text
    r = c.post("/ledger/login", headers=FORM,
               content=f"csrf_token={_csrf(c.get('/ledger/login').text)}&username=viewer&username=admin&password=x")
    assert r.status_code == 422 and _errors(r.text)["username"].startswith("username is given twice ('viewer', 'admin')")
    assert _value(r.text, "username") == ["viewer, admin"]
    # neither the client's limit nor the account's failures were counted: the right password logs in
    r = c.post("/ledger/login", data={"username": "viewer", "password": PASSWORD + "viewer",
                                      "csrf_token": _csrf(c.get("/ledger/login").text)})
    assert r.status_code == 303, r.text


def test_setup_with_a_field_twice_is_beside_it_and_keeps_the_token(tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    c = TestClient(create_app(ledger_url=url, setup_token=TOKEN), follow_redirects=False)
    token = _csrf(c.get("/ledger/setup").text)
    r = c.post("/ledger/setup", headers=FORM, content=f"csrf_token={token}&setup_token={TOKEN}&setup_token=x"
               f"&name=root&password={PASSWORD}&password_repeat={PASSWORD}")
    assert r.status_code == 422 and _errors(r.text) == {"setup_token": "setup token is given twice: send it once"}
    assert TOKEN not in r.text and _value(r.text, "name") == ["root"]
    with open_ledger(url) as led:
        assert users(led) == []
    r = c.post("/ledger/setup", data={"csrf_token": _csrf(c.get("/ledger/setup").text), "setup_token": TOKEN,
                                      "name": "root", "password": PASSWORD, "password_repeat": PASSWORD})
    assert r.status_code == 303  # the one-time token was not used up


def test_logout_with_a_field_twice_keeps_the_session(site):
    _, app, _ = site
    c, csrf = _login(app, "viewer")
    r = c.post("/ledger/logout", content=f"csrf_token={csrf}&x=1&x=2", headers=FORM)
    assert r.status_code == 422
    assert c.get("/ledger").status_code == 200


def test_a_proposal_link_naming_a_field_twice_fills_in_neither(site):
    # "Propose this release" links carry the mechanism in the query: a field named twice filled
    # in the last value; now it is said beside the field, both values shown
    _, app, _ = site
    c, _ = _login(app, "analyst")
    r = c.get("/ledger/propose?title=a&title=b&build=gaussian&noise_scale=2&from=plan")
    assert r.status_code == 422 and _errors(r.text) == {"title": "title is given twice ('a', 'b'): send it once"}
    assert _value(r.text, "title") == ["a, b"] and _value(r.text, "noise_scale") == ["2"]
    assert c.get("/ledger/propose?title=a&build=gaussian&noise_scale=2&from=plan").status_code == 200


@pytest.mark.parametrize("body, field", [
    ("name=survey&unit=&relation=add-or-remove", "unit"),
    ("name=&unit=one+person&relation=add-or-remove", "name"),
    ("name=survey&unit=one+person&relation=bogus", "relation"),
])
def test_the_dataset_form_says_the_library_refusal_beside_its_field(site, body, field):
    # the library's refusal of a field ("unit must be a non-empty text") was said atop the form,
    # the field neither marked nor pointing to it
    _, app, _ = site
    c, csrf = _login(app, "admin")
    r = c.post("/ledger/datasets", content=f"{body}&csrf_token={csrf}", headers=FORM)
    assert r.status_code == 422
    errors = _errors(r.text)
    assert list(errors) == [field] and errors[field].startswith(field), errors
    assert re.search(rf'<(input|select) id="ds-{field}"[^>]*aria-describedby="{field}-error"', r.text), r.text[:200]
