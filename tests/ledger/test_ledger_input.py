"""Issue 24's library-level input reproducers on SQLite and PostgreSQL: the cost guard of
check / propose / record (``budget=``), proposals that would break the accounting, dataset
names a URL cannot address, NUL and length limits, out-of-range ids, history limits."""

import time

import pytest

from fdpkit.accounting import CostBudget
from fdpkit.ledger import LedgerError, NotFound
from fdpkit.mechanisms import dpsgd

#: a refusal must come before any accounting: well under this many seconds
FAST_S = 2.0
BIG_DPSGD = dpsgd(0.6, 0.05, 543_637).to_dict()


@pytest.fixture
def census(ledger):
    ledger.add_dataset("census", unit="one person", user="admin")
    return ledger


@pytest.mark.parametrize("call", ["check", "propose", "record"])
def test_budget_refuses_before_accounting(census, call):
    kwargs = {"check": {}, "propose": {"title": "t", "user": "ana"},
              "record": {"title": "t", "user": "ana", "approver": "bob", "report": False}}[call]
    t0 = time.perf_counter()
    with pytest.raises(LedgerError, match="work|grid|memory"):
        getattr(census, call)("census", BIG_DPSGD, budget=CostBudget(max_work=1e6), **kwargs)
    assert time.perf_counter() - t0 < FAST_S
    with pytest.raises(LedgerError):
        getattr(census, call)("census", {"kind": "laplace", "scale": 1e-5}, **kwargs)  # default budget
    assert census.status("census").counts == {k: 0 for k in ("proposed", "approved", "released", "rejected",
                                                             "withdrawn")}


@pytest.mark.parametrize("mechanism", [{"kind": "approx_dp", "epsilon": 0, "delta": 1},
                                       {"kind": "uniform-sampling", "mu": 1.7976931348623157e308, "n": 1}])
def test_proposals_that_break_accounting_are_refused(census, mechanism):
    census.record("census", {"kind": "gaussian", "sigma": 2.0}, title="g", user="ana", approver="bob", report=False)
    with pytest.raises(LedgerError, match="cannot be composed"):
        census.propose("census", mechanism, title="jam", user="ana")
    st = census.status("census")
    assert st.counts["proposed"] == 0 and st.with_approved.count == 1


@pytest.mark.parametrize("name", ["a/b", ".", "..", "a b", "%2e", "-x", "x" * 201, "é"])
def test_dataset_names_must_be_url_safe(ledger, name):
    with pytest.raises(LedgerError, match="name"):
        ledger.add_dataset(name, unit="u", user="admin")
    assert ledger.datasets() == []


def test_nul_and_length_limits(census):
    g = {"kind": "gaussian", "sigma": 9.0}
    for kwargs in ({"title": "a\x00"}, {"title": "t" * 301}, {"title": "t", "purpose": "p\x00"},
                   {"title": "t", "purpose": "p" * 5001}, {"title": "t", "user": "u\x00"}):
        with pytest.raises(LedgerError):
            census.propose("census", g, **{"user": "ana", **kwargs})
    with pytest.raises(LedgerError):
        census.add_dataset("ok", unit="u" * 201, user="admin")
    with pytest.raises(LedgerError):
        census.add_dataset("ok", unit="u", user="admin", description="d\x00")
    with pytest.raises(NotFound):
        census.status("a\x00b")
    r = census.propose("census", g, title="t", user="ana")
    with pytest.raises(LedgerError):
        census.reject(r.id, user="bob", comment="c\x00")
    census.approve(r.id, user="bob", report=False)
    with pytest.raises(LedgerError):
        census.release(r.id, user="bob", override_reason="o" * 5001)
    assert census.verify().ok


@pytest.mark.parametrize("title", ["Q3\n  42  census  released", "Q3\r\nx", "a\tb", "Q3\u2028x",
                                   "ok \u202eevil", "bell\x07", "esc\x1b[31mred"])
def test_titles_are_one_line_without_hidden_controls(census, title):
    # a title with a line break read as further rows of `fdpkit ledger history` / status; a
    # right-to-left override (U+202E) shows its text reversed in the CLI, the web and the PDF
    # record; an ANSI escape recolours a terminal
    g = {"kind": "gaussian", "sigma": 9.0}
    head = census.head()
    with pytest.raises(LedgerError, match="^title must"):
        census.propose("census", g, title=title, user="ana")
    with pytest.raises(LedgerError, match="^title must"):
        census.record("census", g, title=title, user="ana", approver="bob", report=False)
    with pytest.raises(LedgerError, match="^unit must"):
        census.add_dataset("other", unit=title, user="admin")
    assert census.head() == head and census.verify().ok  # nothing written


@pytest.mark.parametrize("text", ["ok \u202eevil", "x\u2066y", "bell\x07", "esc\x1b[31mred"])
def test_free_texts_refuse_direction_overrides_and_controls(census, text):
    g = {"kind": "gaussian", "sigma": 9.0}
    with pytest.raises(LedgerError, match="^purpose must not contain control characters or text-direction"):
        census.propose("census", g, title="t", user="ana", purpose=text)
    r = census.propose("census", g, title="t", user="ana", purpose="line one\nline two\ttab\r\n")
    head = census.head()
    with pytest.raises(LedgerError, match="^comment must not contain"):
        census.reject(r.id, user="bob", comment=text)
    census.approve(r.id, user="bob", report=False, comment="fine\nby me")
    with pytest.raises(LedgerError, match="^override_reason must not contain"):
        census.release(r.id, user="bob", override_reason=text)
    assert census.release(r.id, user="bob").state == "released"
    assert census.verify().ok and head != census.head()


@pytest.mark.parametrize("rid", [0, -1, 2**31, 2**63, 10**30, "x", None])
def test_out_of_range_ids(census, rid):
    with pytest.raises(LedgerError):
        census.release_info(rid)


@pytest.mark.parametrize("limit", [0, -1, True, 1.5])
def test_history_limit_is_checked(census, limit):
    with pytest.raises(LedgerError, match="limit"):
        census.history(limit=limit)
    assert len(census.history(limit=1)) == 1
