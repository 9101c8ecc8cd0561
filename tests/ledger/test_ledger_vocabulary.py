"""Issue 23: the ledger speaks the vocabulary of fdpkit.vocabulary. "add-or-remove" (its old
spelling) is still accepted on input and read from rows stored before, but what it writes and
shows is "add-remove"."""

import pytest

from fdpkit.ledger import LedgerError
from fdpkit.vocabulary import ADD_REMOVE, LEDGER_RELATIONS, RELATIONS


def test_the_ledger_relations_are_the_library_relations():
    assert set(LEDGER_RELATIONS) <= set(RELATIONS)
    from fdpkit.ledger.rules import RELATIONS as ledger_relations

    assert ledger_relations == LEDGER_RELATIONS


def test_default_and_old_spelling_write_the_canonical_relation(ledger):
    assert ledger.add_dataset("a", unit="one person", user="admin").relation == ADD_REMOVE
    assert ledger.add_dataset("b", unit="one person", user="admin", relation="add-or-remove").relation == ADD_REMOVE
    assert ledger.add_dataset("c", unit="one person", user="admin", relation="replace-one").relation == "replace-one"
    assert [d.relation for d in ledger.datasets()] == [ADD_REMOVE, ADD_REMOVE, "replace-one"]
    assert ledger.verify().ok


def test_unknown_relation_names_the_argument(ledger):
    with pytest.raises(LedgerError, match="relation must be one of add-remove, replace-one"):
        ledger.add_dataset("a", unit="one person", user="admin", relation="zero-out")


def test_rows_stored_with_the_old_spelling_read_as_add_remove(ledger, monkeypatch):
    # a row written before issue 23: stored (and snapshotted in the event chain) as "add-or-remove"
    monkeypatch.setattr("fdpkit.ledger.operations.canonical_relation", lambda value, **kw: value)
    ledger.add_dataset("old", unit="one person", user="admin", relation="add-or-remove")
    monkeypatch.undo()
    row = ledger.dataset("old")
    assert row.relation == "add-or-remove"  # kept as stored: the chain's snapshot says so
    assert row.relation_name == ADD_REMOVE
    assert ledger.status("old").to_dict()["relation"] == ADD_REMOVE
    assert ledger.verify().ok


def test_totals_read_epsilon_for_delta_and_keep_epsilon_at_deprecated(ledger):
    ledger.add_dataset("g", unit="one person", user="admin")
    total = ledger.status("g").released
    eps = total.epsilon_for_delta(1e-5)
    with pytest.warns(DeprecationWarning, match="epsilon_for_delta"):
        assert total.epsilon_at(1e-5) == eps


SHUFFLED = dict(noise_multiplier=1.1, batch_size=256, dataset_size=6000, epochs=1, sampling="shuffled")


def _events(ledger):
    return len(ledger.history())


def test_a_release_under_another_relation_than_its_dataset_is_refused(ledger):
    """A dataset declares what its budget bounds: add-remove (membership) takes add-remove
    and zero-out runs, replace-one takes replace-one runs. Anything else is refused by
    propose, check and record alike, naming the relation, and nothing is written."""
    from fdpkit.ledger.rules import RelationMismatch
    from fdpkit.mechanisms import Composed, dpsgd

    ledger.add_dataset("members", unit="one person", user="admin")
    ledger.add_dataset("contents", unit="one person", user="admin", relation="replace-one")
    ok = {"members": [dpsgd(**SHUFFLED, relation="zero-out"), dpsgd(1.1, 0.01, 10),
                      dpsgd(1.1, 0.01, 10, relation="zero-out"), {"kind": "gaussian", "sigma": 3.0}],
          "contents": [dpsgd(**SHUFFLED, relation="replace-one"), dpsgd(1.1, 0.01, 10, relation="replace-one"),
                       {"kind": "laplace", "scale": 3.0}]}
    bad = {"members": [dpsgd(**SHUFFLED, relation="replace-one"), dpsgd(1.1, 0.01, 10, relation="replace-one"),
                       Composed((dpsgd(1.1, 0.01, 10), dpsgd(2.0, 0.01, 10, relation="replace-one")))],
           "contents": [dpsgd(1.1, 0.01, 10), dpsgd(**SHUFFLED, relation="zero-out")]}
    for name, mechs in ok.items():
        for m in mechs:
            spec = m if isinstance(m, dict) else m.to_dict()
            ledger.check(name, spec)
            assert ledger.propose(name, spec, title="fits", user="ana").state == "proposed"
    before = _events(ledger)
    for name, mechs in bad.items():
        declared = ledger.dataset(name).relation_name
        for m in mechs:
            for call in (lambda: ledger.propose(name, m.to_dict(), title="t", user="ana"),
                         lambda: ledger.check(name, m.to_dict()),
                         lambda: ledger.record(name, m.to_dict(), title="t", user="ana", approver="bob",
                                               report=False)):
                with pytest.raises(RelationMismatch, match=f"^relation .* does not fit dataset {name}, which "
                                                           f"declares {declared}") as exc:
                    call()
                assert exc.value.parameter == "relation" and isinstance(exc.value, LedgerError)
    assert _events(ledger) == before and ledger.verify().ok


def test_a_crossing_message_never_reads_past_its_own_verdict():
    """The current value prints rounded up (an upper bound): when the threshold has more digits
    than that, a total just under it read "1.001 <= 1.00005". It gets the digits it needs, and
    the limit prints as stored."""
    from fdpkit.ledger.totals import Crossing, ThresholdSpec

    t = ThresholdSpec("mu", "hard", 1.00005)
    below, above = Crossing(t, 1.0000412), Crossing(t, 1.0000512)
    assert below.message() == "hard threshold not reached: μ 1.00005 <= 1.00005"
    assert above.message() == "hard threshold exceeded: μ 1.001 > 1.00005"
    tiny = Crossing(ThresholdSpec("epsilon", "notice", 2.0000000001, delta=1e-5), 2.00000000009)
    text = tiny.message()
    assert "<= 2.0000000001 at δ = 1e-05" in text and float(text.split("ε ")[1].split(" <=")[0]) <= 2.0000000001
    assert Crossing(ThresholdSpec("mu", "warning", 1.5), 1.23456).message() == \
        "warning threshold not reached: μ 1.235 <= 1.5"


def test_a_release_proposed_before_the_relation_rule_is_not_released(ledger, monkeypatch):
    """A row proposed under another relation before the rule (simulated by lifting it for the
    proposal) cannot enter the total: approving with a record and releasing both refuse it."""
    from fdpkit.ledger.rules import RelationMismatch
    from fdpkit.mechanisms import dpsgd

    ledger.add_dataset("members", unit="one person", user="admin")
    monkeypatch.setattr("fdpkit.ledger.lifecycle.check_relation", lambda *a: None)
    r = ledger.propose("members", dpsgd(1.1, 0.01, 10, relation="replace-one").to_dict(), title="old", user="ana")
    monkeypatch.undo()
    with pytest.raises(RelationMismatch):
        ledger.approve(r.id, user="bob")
    ledger.approve(r.id, user="bob", report=False)
    with pytest.raises(RelationMismatch):
        ledger.release(r.id, user="bob")
    assert ledger.release_info(r.id).state == "approved" and ledger.status("members").released.count == 0
    assert ledger.verify().ok
