"""Separation of duties and accounts (issue 24) on SQLite and PostgreSQL: four-eyes by
default (the proposer neither approves nor overrides), relaxed only by a logged dataset
setting; only the proposer or an approver withdraws; a rejection needs a reason;
thresholds stay ordered; users are deactivated, re-roled and reset as chained events that
verify understands, and their sessions end."""

import json

import pytest

from fdpkit.ledger import LedgerError, NotFound
from fdpkit.ledger.users import (
    activate_user, add_user, authenticate, create_session, deactivate_user, reset_password, session_user,
    set_role,
)

G = {"kind": "gaussian", "sigma": 2.0}


@pytest.fixture
def census(ledger):
    ledger.add_dataset("census", unit="one person", user="admin")
    return ledger


def test_proposer_cannot_approve_own_release(census):
    r = census.propose("census", G, title="t", user="ana")
    with pytest.raises(LedgerError, match="four-eyes"):
        census.approve(r.id, user="ana", report=False)
    census.approve(r.id, user="bob", report=False)
    assert census.release_info(r.id).state == "approved"


def test_record_needs_another_approver(census):
    with pytest.raises(LedgerError, match="four-eyes"):
        census.record("census", G, title="t", user="ana", report=False)
    with pytest.raises(LedgerError, match="four-eyes"):
        census.record("census", G, title="t", user="ana", approver="ana", report=False)
    assert census.status("census").counts["proposed"] == 0  # nothing written
    census.record("census", G, title="t", user="ana", approver="bob", report=False)
    assert census.verify().ok


def test_proposer_cannot_override_hard_limit(census):
    census.record("census", {"kind": "gaussian", "sigma": 0.8}, title="big", user="ana", approver="bob",
                  report=False)
    r = census.propose("census", {"kind": "gaussian", "sigma": 0.6}, title="more", user="carol")
    census.approve(r.id, user="bob", report=False)
    with pytest.raises(LedgerError, match="four-eyes"):
        census.release(r.id, user="carol", override_reason="I say so")
    census.release(r.id, user="bob", override_reason="board decision")
    assert census.release_info(r.id).override_by == "bob"


def test_four_eyes_relaxed_by_a_logged_setting(census):
    assert census.four_eyes("census")
    with pytest.raises(LedgerError, match="reason"):
        census.set_four_eyes("census", False, user="admin")
    census.set_four_eyes("census", False, user="admin", reason="one-person team")
    assert not census.four_eyes("census")
    census.record("census", G, title="t", user="ana", report=False)
    (ev,) = census.history(kind="dataset.setting")
    assert ev.actor == "admin" and '"four_eyes":false' in ev.payload
    census.set_four_eyes("census", True, user="admin")
    assert census.four_eyes("census") and census.verify().ok


def test_withdraw_only_by_proposer_or_approver(census):
    add_user(census, "eve", role="analyst", password="eve-password", actor="admin")
    add_user(census, "boss", role="approver", password="boss-password", actor="admin")
    r = census.propose("census", G, title="t", user="ana")
    with pytest.raises(LedgerError, match="only the proposer"):
        census.withdraw(r.id, user="eve")
    with pytest.raises(LedgerError, match="only the proposer"):
        census.withdraw(r.id, user="eve", role="analyst")
    census.withdraw(r.id, user="boss")  # an approver in the users table
    r2 = census.propose("census", G, title="t2", user="ana")
    census.withdraw(r2.id, user="ana")
    r3 = census.propose("census", G, title="t3", user="ana")
    census.withdraw(r3.id, user="web-approver", role="approver")  # as the web authenticated it
    assert [x.state for x in census.releases("census")] == ["withdrawn"] * 3


def test_reject_needs_a_reason(census):
    r = census.propose("census", G, title="t", user="ana")
    for empty in ("", "   "):
        with pytest.raises(LedgerError, match="comment"):
            census.reject(r.id, user="bob", comment=empty)
    census.reject(r.id, user="bob", comment="duplicate of release 1", pdf=False)
    assert census.release_info(r.id).state == "rejected"


@pytest.mark.parametrize("metric,level,value", [("epsilon", "hard", 3.0), ("epsilon", "notice", 5.0),
                                                ("epsilon", "warning", 9.0)])
def test_thresholds_must_be_ordered(census, metric, level, value):
    with pytest.raises(LedgerError, match="ordered"):
        census.set_threshold("census", metric=metric, level=level, value=value, user="admin")
    census.set_threshold("census", metric="epsilon", level="warning", value=8.0, user="admin")  # equal is fine
    census.set_threshold("census", metric="mu", level="hard", value=2.0, user="admin")
    with pytest.raises(LedgerError, match="ordered"):
        census.set_threshold("census", metric="mu", level="notice", value=2.5, user="admin")


def test_users_deactivate_role_reset_are_chained(ledger):
    add_user(ledger, "root", role="admin", password="root-password", actor="cli")
    u = add_user(ledger, "ana", role="analyst", password="ana-password", actor="root")
    token, _ = create_session(ledger, u)
    assert session_user(ledger, token)[0].name == "ana"
    deactivate_user(ledger, "ana", actor="root", reason="left the team")
    assert session_user(ledger, token) is None  # the session ended
    assert authenticate(ledger, "ana", "ana-password") is None
    activate_user(ledger, "ana", actor="root")
    set_role(ledger, "ana", role="approver", actor="root")
    reset_password(ledger, "ana", password="new-password", actor="root")
    assert authenticate(ledger, "ana", "ana-password") is None
    assert authenticate(ledger, "ana", "new-password").role == "approver"
    kinds = [e.kind for e in ledger.history()]
    assert kinds[-4:] == ["user.deactivated", "user.activated", "user.role", "user.password_reset"]
    assert ledger.verify().ok  # verify understands every change
    with pytest.raises(LedgerError, match="last active admin"):
        deactivate_user(ledger, "root", actor="root")
    with pytest.raises(LedgerError, match="last active admin"):
        set_role(ledger, "root", role="viewer", actor="root")
    with pytest.raises(NotFound):
        deactivate_user(ledger, "nobody", actor="root")
    with pytest.raises(LedgerError, match="role"):
        set_role(ledger, "ana", role="king", actor="root")
    with pytest.raises(LedgerError, match="password"):
        reset_password(ledger, "ana", password="short", actor="root")
    assert ledger.verify().ok


def test_a_password_beyond_the_limit_never_matches(ledger):
    """A login is checked against the whole password: one of the longest allowed length
    followed by anything more is wrong (it was cut to the limit, and matched)."""
    from fdpkit.ledger.users import MAX_PASSWORD

    add_user(ledger, "long", role="viewer", password="P" * MAX_PASSWORD, actor="root")
    assert authenticate(ledger, "long", "P" * MAX_PASSWORD).name == "long"
    assert authenticate(ledger, "long", "P" * MAX_PASSWORD + "WRONG") is None
    assert authenticate(ledger, "long", "P" * (MAX_PASSWORD + 1)) is None


def test_a_lower_limit_at_a_stricter_delta_or_fpr_is_no_lift(census):
    # a statistician setting the census budget ε 1 at δ 1e-6 in place of the default ε 8 at δ 1e-5 (a
    # stricter limit: ε(1e-5) ≤ ε(1e-6) ≤ 1) was told "four-eyes: lifting the hard limit ... or lower it
    # instead": any change of δ counted as a lift, a smaller one too
    census.set_threshold("census", metric="epsilon", level="hard", value=1.0, delta=1e-6, user="admin")
    census.set_threshold("census", metric="tpr", level="hard", value=0.01, fpr=1e-3, user="admin")
    census.set_threshold("census", metric="tpr", level="hard", value=0.01, fpr=1e-2, user="admin")  # larger FPR
    for kw in (dict(metric="epsilon", value=1.0, delta=1e-4), dict(metric="epsilon", value=2.0, delta=1e-7),
               dict(metric="tpr", value=0.01, fpr=1e-3), dict(metric="tpr", value=0.02, fpr=0.1)):
        with pytest.raises(LedgerError, match="four-eyes: lifting the hard limit"):  # looser δ / FPR, or higher
            census.set_threshold("census", level="hard", user="admin", **kw)
    assert census.verify().ok


def test_lifting_the_hard_limit_needs_a_second_person(census):
    # one admin raised a dataset's hard limit (set it higher, or remove it and set it again) with
    # no second person: the limit that blocks releases was a one-person edit
    head = census.head()
    lifts = [dict(value=20.0), dict(value=8.0, delta=1e-3)]  # higher, or at a looser delta
    for kw in lifts:
        with pytest.raises(LedgerError, match="four-eyes: lifting the hard limit of census"):
            census.set_threshold("census", metric="epsilon", level="hard", user="admin", **kw)
    with pytest.raises(LedgerError, match="four-eyes: lifting the hard limit"):
        census.remove_threshold("census", metric="epsilon", level="hard", user="admin")
    with pytest.raises(LedgerError, match="cannot approve their own lifting"):
        census.set_threshold("census", metric="epsilon", level="hard", value=20.0, user="admin", approver="admin")
    assert census.head() == head  # nothing written
    # lowering is free, and a first hard limit on another metric too
    census.set_threshold("census", metric="epsilon", level="hard", value=6.0, user="admin")
    census.set_threshold("census", metric="mu", level="hard", value=2.0, user="admin")
    # with a second person it is done, and the chained event names them
    census.set_threshold("census", metric="epsilon", level="hard", value=9.0, user="admin", approver="bob")
    census.remove_threshold("census", metric="mu", level="hard", user="admin", approver="bob")
    events = [json.loads(e.payload)["data"] for e in census.history("census") if e.kind.startswith("threshold.")]
    assert events[-2]["approver"] == "bob" and events[-1]["approver"] == "bob"
    assert "approver" not in events[-3]  # the first mu limit needed no one
    assert census.verify().ok
    # where the dataset relaxed four-eyes (a logged setting), one person may lift it
    census.set_four_eyes("census", False, user="admin", reason="single custodian")
    census.set_threshold("census", metric="epsilon", level="hard", value=12.0, user="admin")
