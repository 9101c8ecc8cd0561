"""Lifting a hard limit in two steps on SQLite and PostgreSQL: one person requests the lift
(a pending request in the chain; the limits unchanged), another approves it (the threshold
changes, both names in the chained event) or rejects it; the requester never approves
their own request; a request whose threshold changed meanwhile never applies its stale
values; every refusal writes nothing; the chain verifies throughout; the migration adds
the table on an existing 0001 ledger."""

import json

import pytest
from sqlalchemy import create_engine, inspect, text

from fdpkit.ledger import LedgerError, NeedsSecondPerson, NotFound, lift_dict, open_ledger


@pytest.fixture
def census(ledger):
    ledger.add_dataset("census", unit="one person", user="admin")
    return ledger


def _hard(led, metric="epsilon"):
    return [(t.value, t.delta, t.fpr) for t in led.thresholds("census") if t.level == "hard" and t.metric == metric]


def _data(led):
    return [(e.kind, e.actor, json.loads(e.payload)["data"]) for e in led.history("census")]


def test_request_then_approve_by_another_person(census):
    # a web-only deployment could not lift a hard limit at all (the one-person form answered 422):
    # now one person requests it and a second approves it
    with pytest.raises(NeedsSecondPerson):
        census.set_threshold("census", metric="epsilon", level="hard", value=20.0, user="admin")
    r = census.request_lift("census", metric="epsilon", level="hard", value=20.0, user="admin",
                            reason="the yearly budget was renewed")
    assert r.state == "pending" and (r.basis_value, r.value) == (8.0, 20.0)
    assert _hard(census) == [(8.0, 1e-5, None)]  # a request changes nothing in the limits
    assert [x.id for x in census.lift_requests("census")] == [r.id]
    kind, actor, data = _data(census)[-1]
    assert kind == "threshold.lift_requested" and actor == "admin" and data["change"].startswith("ε 20")
    head = census.head()
    with pytest.raises(LedgerError, match="four-eyes: admin requested lift"):
        census.approve_lift(r.id, user="admin")
    assert census.head() == head and census.lift_info(r.id).state == "pending"  # nothing written
    done = census.approve_lift(r.id, user="bob", comment="checked with the DPO")
    assert (done.state, done.decided_by) == ("approved", "bob")
    assert _hard(census) == [(20.0, 1e-5, None)]
    kind, actor, data = _data(census)[-1]
    assert kind == "threshold.set" and actor == "bob"
    assert (data["approver"], data["requested_by"], data["lift_request"]) == ("bob", "admin", r.id)
    assert census.lift_requests("census") == [] and census.verify().ok
    with pytest.raises(LedgerError, match="is approved: only a pending request"):
        census.approve_lift(r.id, user="carol")


def test_remove_request_and_reject(census):
    r = census.request_lift("census", metric="epsilon", level="hard", remove=True, user="admin", reason="r")
    assert lift_dict(r)["change"] == "remove"
    head = census.head()
    with pytest.raises(LedgerError, match="comment must be"):  # a rejection needs its reason
        census.reject_lift(r.id, user="bob")
    assert census.head() == head
    out = census.reject_lift(r.id, user="bob", comment="no")
    assert out.state == "rejected" and _hard(census) == [(8.0, 1e-5, None)]
    r2 = census.request_lift("census", metric="epsilon", level="hard", remove=True, user="admin", reason="r")
    assert census.reject_lift(r2.id, user="admin").state == "withdrawn"  # its requester withdraws it
    r3 = census.request_lift("census", metric="epsilon", level="hard", remove=True, user="admin", reason="r")
    census.approve_lift(r3.id, user="bob")
    assert _hard(census) == []
    kind, actor, data = _data(census)[-1]
    assert kind == "threshold.removed" and data["requested_by"] == "admin" and data["approver"] == "bob"
    assert census.verify().ok


def test_a_stale_request_never_applies_old_values(census):
    r = census.request_lift("census", metric="epsilon", level="hard", value=9.0, user="admin", reason="r")
    # meanwhile the hard limit is lowered (free): the request's basis is gone, so it is superseded in
    # the same chained event, and approving it refuses and writes nothing
    census.set_threshold("census", metric="epsilon", level="hard", value=6.0, user="carol")
    assert census.lift_info(r.id).state == "superseded"
    rows = json.loads(census.history("census")[-1].payload)["rows"]
    assert {x["table"] for x in rows} == {"thresholds", "lift_requests"}
    head = census.head()
    with pytest.raises(LedgerError, match="superseded: only a pending"):
        census.approve_lift(r.id, user="bob")
    assert census.head() == head and _hard(census) == [(6.0, 1e-5, None)]
    # an unchanged basis (set to the same value) keeps the request pending
    r2 = census.request_lift("census", metric="epsilon", level="hard", value=9.0, user="admin", reason="r")
    census.set_threshold("census", metric="epsilon", level="hard", value=6.0, user="carol")
    assert census.lift_info(r2.id).state == "pending"
    census.approve_lift(r2.id, user="bob")
    assert _hard(census) == [(9.0, 1e-5, None)] and census.verify().ok


def test_stale_basis_is_refused_even_if_still_pending(census, ledger_url):
    # a row changed outside the ledger's methods: approval compares the basis itself
    r = census.request_lift("census", metric="epsilon", level="hard", value=9.0, user="admin", reason="r")
    eng = create_engine(ledger_url)
    with eng.begin() as c:
        c.execute(text("UPDATE lift_requests SET basis_value = 7.0 WHERE id = :i"), {"i": r.id})
    eng.dispose()
    head = census.head()
    with pytest.raises(LedgerError, match="is stale"):
        census.approve_lift(r.id, user="bob")
    assert census.head() == head and _hard(census) == [(8.0, 1e-5, None)]
    assert not census.verify().ok  # and the edited row is caught


@pytest.mark.parametrize("kw, match", [
    (dict(value=5.0), "lifts no hard limit"),  # lowering: set it directly
    (dict(value=5.0, level="warning"), "lifts no hard limit"),
    (dict(value=1.0), "notice threshold .* above the hard"),  # order notice <= warning <= hard
    (dict(value=-1.0), "value must be a positive"),
    (dict(value=20.0, reason=" "), "reason must be a non-empty text"),
    (dict(value=20.0, remove=True), "not both"),
    (dict(remove=True, metric="mu"), "has no hard threshold on mu"),
])
def test_bad_requests_write_nothing(census, kw, match):
    args = {"metric": "epsilon", "level": "hard", "user": "admin", "reason": "r", **kw}
    head = census.head()
    with pytest.raises((LedgerError, ValueError), match=match):
        census.request_lift("census", **args)
    assert census.head() == head and census.lift_requests(state=None) == []


def test_no_request_where_four_eyes_is_relaxed_and_unknown_ids(census):
    census.set_four_eyes("census", False, user="admin", reason="single custodian")
    with pytest.raises(LedgerError, match="four-eyes relaxed"):
        census.request_lift("census", metric="epsilon", level="hard", value=20.0, user="admin", reason="r")
    for bad in (99, 2**40, "x"):
        with pytest.raises((NotFound, LedgerError)):
            census.approve_lift(bad, user="bob")


def test_approval_rechecks_the_order_of_thresholds(census):
    r = census.request_lift("census", metric="epsilon", level="hard", value=8.0, delta=1e-3, user="admin",
                            reason="looser delta")
    # meanwhile nothing changed on the hard threshold, but the order still holds: applied
    census.approve_lift(r.id, user="bob")
    assert _hard(census) == [(8.0, 1e-3, None)] and census.verify().ok


def test_migration_adds_the_table_to_a_0001_ledger(ledger_url):
    from alembic import command

    from fdpkit.ledger import db

    eng = create_engine(ledger_url)
    with eng.begin() as conn:
        command.upgrade(db._alembic_config(conn), "0001")
    eng.dispose()
    assert "lift_requests" not in inspect(create_engine(ledger_url)).get_table_names()
    led = open_ledger(ledger_url)  # upgrades to the head
    assert db.current_revision(led.engine) == "0002"
    assert "lift_requests" in inspect(led.engine).get_table_names()
    led.close()
    led = open_ledger(ledger_url)  # and leaves it there
    led.add_dataset("census", unit="one person", user="admin")
    r = led.request_lift("census", metric="epsilon", level="hard", value=9.0, user="admin", reason="r")
    led.approve_lift(r.id, user="bob")
    assert led.verify().ok
    led.close()
    eng = create_engine(ledger_url)
    with eng.begin() as conn:  # and the downgrade drops it again
        command.downgrade(db._alembic_config(conn), "0001")
    assert "lift_requests" not in inspect(eng).get_table_names()
    eng.dispose()


@pytest.mark.parametrize("name", ["a\nb", "bo\rb", "bo\u200bb", "ad\u2028min", "\tbob\x07"])
def test_people_are_named_on_one_printable_line(census, name):
    # an approver "a\nb" was accepted: the chain and the CLI's tables then showed two lines, and a
    # zero-width space made a second "bob" beside the four-eyes check
    head = census.head()
    with pytest.raises(LedgerError, match="approver must be one line of printable characters"):
        census.set_threshold("census", metric="epsilon", level="hard", value=20.0, user="admin", approver=name)
    with pytest.raises(LedgerError, match="user must be one line"):
        census.request_lift("census", metric="epsilon", level="hard", value=20.0, user=name, reason="r")
    r = census.request_lift("census", metric="epsilon", level="hard", value=20.0, user="admin", reason="r")
    head = census.head()
    with pytest.raises(LedgerError, match="user must be one line"):
        census.approve_lift(r.id, user=name)
    assert census.head() == head and census.verify().ok  # nothing written
    assert census.approve_lift(r.id, user="bob").state == "approved"
