"""The ledger from Python on both backends: life cycle, tight running totals against closed
forms and the accountant, thresholds and alerts, the hard limit and its override, bad input
(nothing written), migrations."""

import hashlib
import json
import math

import pytest
from sqlalchemy import create_engine, text

import fdpkit as fp
from fdpkit.convert import epsilon_for_delta_from_mu
from fdpkit.ledger import LedgerError, NotFound, open_ledger
from fdpkit.mechanisms import Composed, Gaussian, Laplace, dpsgd

#: exact GDP: mu = sqrt(sum mu_i^2) up to float summation
GDP_RTOL = 1e-12
#: the ledger's PLD runs at a coarser grid than the reference account(); both pessimistic
PLD_ATOL = 2e-2


def _rows(url, table):
    eng = create_engine(url)
    with eng.connect() as c:
        n = c.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar()
    eng.dispose()
    return n


def _snapshot(url):
    return {t: _rows(url, t) for t in ("datasets", "releases", "thresholds", "approvals", "events", "users")}


@pytest.fixture
def census(ledger):
    ledger.add_dataset("census", unit="one person", user="admin")
    return ledger


def test_life_cycle_with_report(census):
    r = census.propose("census", {"kind": "gaussian", "sigma": 2.0}, title="counts", user="ana",
                       purpose="monthly table")
    assert r.state == "proposed" and r.gaussian_mu == 0.5
    a = census.approve(r.id, user="bob", comment="fine")
    assert a.report_pdf.startswith(b"%PDF") and json.loads(a.report_json)["guarantee"]["mu"] == 0.5
    assert a.report_pdf_sha256 == hashlib.sha256(a.report_pdf).hexdigest()
    assert a.report_json_sha256 == hashlib.sha256(a.report_json).hexdigest()
    st = census.status("census")
    assert st.counts["approved"] == 1 and st.released.count == 0 and st.with_approved.mu == 0.5
    census.release(r.id, user="bob")
    st = census.status("census")
    d = st.to_dict()
    assert d["released_count"] == 1 and d["mu"] == 0.5 and d["regret"] == 0.0
    assert d["epsilon"] == pytest.approx(epsilon_for_delta_from_mu(0.5, 1e-5))
    kinds = [e.kind for e in census.history("census")]
    assert kinds == ["dataset.added", "release.proposed", "release.approved", "release.released"]
    assert census.verify().ok


def test_gaussian_total_is_exact_gdp(census):
    sigmas = [1.5, 3.0, 7.0, 2.5]
    for s in sigmas:
        census.record("census", {"kind": "gaussian", "sigma": s}, title=f"s{s}", user="ana", approver="bob", report=False)
    census.record("census", fp.Repeated(Gaussian(10.0), 4), title="rep", user="ana", approver="bob", report=False,
                  override_reason="test")
    mu = math.sqrt(sum(1 / s ** 2 for s in sigmas) + 4 / 100)
    st = census.status("census")
    assert st.released.method == "GDP" and st.released.bound == "exact"
    assert st.released.mu == pytest.approx(mu, rel=GDP_RTOL)
    assert st.released.epsilon == pytest.approx(epsilon_for_delta_from_mu(mu, 1e-5), rel=1e-9)
    # tight composition never exceeds the basic epsilon sum
    assert st.released.epsilon <= st.released.epsilon_sum


def test_mixed_total_is_pessimistic_pld(census):
    mechs = [Gaussian(3.0), Laplace(5.0), dpsgd(3.0, 0.02, 50)]
    for i, m in enumerate(mechs):
        census.record("census", m, title=f"m{i}", user="ana", approver="bob", report=False)
    st = census.status("census")
    assert st.released.method == "PLD" and st.released.bound == "lower"
    ref = fp.account(Composed(tuple(mechs)), discretization=1e-4)
    # the ledger's coarser grid is pessimistic too: never below the finer reference
    assert st.released.epsilon >= ref.epsilon_for_delta(1e-5) - 1e-9
    assert st.released.epsilon <= ref.epsilon_for_delta(1e-5) + PLD_ATOL
    assert st.released.mu >= 1 / 3.0  # at least the Gaussian part
    assert st.released.epsilon < st.released.epsilon_sum
    # what one more release would do == what releasing it does
    chk = census.check("census", Laplace(4.0))
    census.record("census", Laplace(4.0), title="more", user="ana", approver="bob", report=False)
    after = census.status("census").released
    assert chk.after.epsilon == pytest.approx(after.epsilon, rel=1e-9)
    assert chk.after.mu == pytest.approx(after.mu, rel=1e-9)


def test_cache_is_rebuilt_when_it_does_not_match(census, ledger_url):
    for s in (2.0, 3.0):
        census.record("census", {"kind": "laplace", "scale": s}, title=f"l{s}", user="ana", approver="bob", report=False)
    before = census.status("census").released.epsilon
    eng = create_engine(ledger_url)
    with eng.begin() as c:
        c.execute(text("DELETE FROM composed_states"))
    eng.dispose()
    assert census.status("census").released.epsilon == pytest.approx(before, rel=1e-12)


def test_thresholds_alerts_and_hard_limit(census):
    census.set_threshold("census", metric="mu", level="warning", value=0.9, user="admin")
    census.set_threshold("census", metric="tpr", level="notice", value=0.5, fpr=1e-3, user="admin")
    r1 = census.record("census", {"kind": "gaussian", "sigma": 1.0}, title="big", user="ana", approver="bob", report=False)
    alerts = census.history("census", kind="alert")
    msgs = [json.loads(e.payload)["data"]["message"] for e in alerts]
    assert any("warning" in m and "ε" in m for m in msgs) and any("μ" in m for m in msgs)
    assert all(e.release_id == r1.id for e in alerts)
    st = census.status("census")
    assert {c.threshold.level for c in st.exceeded} == {"notice", "warning"}
    # a release beyond the hard limit (eps 8 at 1e-5) is refused, then released with a reason
    r2 = census.propose("census", {"kind": "gaussian", "sigma": 0.5}, title="huge", user="ana")
    chk = census.check_release(r2.id)
    assert chk.blocked and any("hard threshold" in m for m in chk.messages)
    census.approve(r2.id, user="bob", report=False)
    n_events = len(census.history())
    with pytest.raises(LedgerError, match="hard limit"):
        census.release(r2.id, user="bob")
    assert len(census.history()) == n_events
    census.release(r2.id, user="carol", override_reason="board decision 42")
    r2 = census.release_info(r2.id)
    assert r2.state == "released" and r2.override_by == "carol"
    (ov,) = census.history(kind="release.override")
    assert json.loads(ov.payload)["data"]["reason"] == "board decision 42"
    assert census.verify().ok


def test_default_thresholds(census):
    ts = {(t.metric, t.level): (t.value, t.delta) for t in census.thresholds("census")}
    assert ts == {("epsilon", "notice"): (2.0, 1e-5), ("epsilon", "warning"): (4.0, 1e-5),
                  ("epsilon", "hard"): (8.0, 1e-5)}


BAD = [
    ("unknown dataset", lambda L, r: L.propose("nope", {"kind": "gaussian", "sigma": 1}, title="t", user="u"),
     "unknown"),
    ("malformed spec", lambda L, r: L.propose("census", "{not json", title="t", user="u"), "not valid JSON"),
    ("unknown kind", lambda L, r: L.propose("census", {"kind": "magic"}, title="t", user="u"), "kind"),
    ("bad sigma", lambda L, r: L.propose("census", {"kind": "gaussian", "sigma": -1}, title="t", user="u"),
     "sigma"),
    ("threshold delta 1", lambda L, r: L.set_threshold("census", metric="epsilon", level="hard", value=3,
                                                       delta=1.0, user="u"), "delta"),
    ("threshold delta 2", lambda L, r: L.set_threshold("census", metric="epsilon", level="hard", value=3,
                                                       delta=2.0, user="u"), "delta"),
    ("threshold level", lambda L, r: L.set_threshold("census", metric="mu", level="severe", value=3, user="u"),
     "level"),
    # the first step of a budget (a hard limit of 3 under the default warning 4) says what to do
    ("threshold order (hard)", lambda L, r: L.set_threshold("census", metric="epsilon", level="hard", value=3,
                                                            user="u"),
     r"ordered notice <= warning <= hard; lower \(or remove\) the warning threshold to at most 3 first"),
    ("threshold order (notice)", lambda L, r: L.set_threshold("census", metric="epsilon", level="notice",
                                                              value=5, user="u"),
     "choose a value of at most 4, or raise the warning threshold first"),
    ("approved twice", lambda L, r: L.approve(r["approved"], user="u", report=False), "only a proposed"),
    ("rejected released", lambda L, r: L.release(r["rejected"], user="u"), "only an approved"),
    ("proposed released", lambda L, r: L.release(r["proposed"], user="u"), "only an approved"),
    ("unknown release", lambda L, r: L.approve(999, user="u"), "unknown"),
    ("empty title", lambda L, r: L.propose("census", {"kind": "gaussian", "sigma": 1}, title=" ", user="u"),
     "title"),
    ("duplicate dataset", lambda L, r: L.add_dataset("census", unit="x", user="u"), "already exists"),
]


@pytest.mark.parametrize("case", BAD, ids=[b[0] for b in BAD])
def test_bad_input_writes_nothing(census, ledger_url, case):
    _, action, match = case
    ids = {}
    for state in ("proposed", "approved", "rejected"):
        r = census.propose("census", {"kind": "gaussian", "sigma": 5.0}, title=state, user="ana")
        if state == "approved":
            census.approve(r.id, user="bob", report=False)
        if state == "rejected":
            census.reject(r.id, user="bob", comment="no", pdf=False)  # records: test_ledger_record
        ids[state] = r.id
    before = _snapshot(ledger_url)
    with pytest.raises(ValueError, match=match):
        action(census, ids)
    assert _snapshot(ledger_url) == before
    assert census.verify().ok


def test_not_found_is_a_value_error(census):
    with pytest.raises(NotFound):
        census.status("nope")
    assert issubclass(NotFound, ValueError)


def test_migrations_match_models(ledger_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from fdpkit.ledger import db
    from fdpkit.ledger.models import SCHEMA_REVISION, Base

    assert db.head_revision() == SCHEMA_REVISION
    led = open_ledger(ledger_url)
    assert led.init() == SCHEMA_REVISION  # idempotent
    with led.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    led.close()
    assert diffs == []


def test_uninitialised_ledger_is_refused(tmp_path):
    with pytest.raises(LedgerError, match="not initialised"):
        open_ledger(str(tmp_path / "new.sqlite"), upgrade=False)


def test_composition_state_round_trip():
    from fdpkit.accounting import Composition

    s = Composition.empty().add([Gaussian(2.0), Laplace(3.0), dpsgd(2.0, 0.05, 20)])
    t = Composition.from_bytes(s.to_bytes())
    assert t.count == 3 and t.gaussian_mu_sq == s.gaussian_mu_sq
    for d in (1e-3, 1e-5, 1e-8):
        assert t.epsilon_for_delta(d) == s.epsilon_for_delta(d)
    with pytest.raises(ValueError, match="data"):
        Composition.from_bytes(b"garbage")


def test_default_url_uses_env_and_data_dir(monkeypatch, tmp_path):
    from fdpkit.ledger import resolve_url

    monkeypatch.setenv("FDPKIT_LEDGER", str(tmp_path / "x.sqlite"))
    assert resolve_url() == f"sqlite:///{tmp_path / 'x.sqlite'}"
    monkeypatch.delenv("FDPKIT_LEDGER")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert resolve_url() == f"sqlite:///{tmp_path / 'data' / 'fdpkit' / 'ledger.sqlite'}"
    assert resolve_url("postgresql+psycopg://u@/db?host=/tmp") == "postgresql+psycopg://u@/db?host=/tmp"


def test_ledger_pdf_footer_names_the_document(tmp_path):
    """Issue 15: the ledger PDF's footer says what it is (not "privacy report")."""
    import io

    from pypdf import PdfReader

    from fdpkit.ledger.timeline import ledger_document
    from fdpkit.report import render_document

    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    led.add_dataset("census", unit="one person", user="admin")
    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(render_document(
        ledger_document(led, "census"), "pdf"))).pages)
    led.close()
    assert "fdpkit privacy-budget ledger report, page 1" in text and "privacy report," not in text


def test_ledger_report_warnings_name_every_threshold_exceeded_now(tmp_path):
    """The exported report's Warnings agree with its thresholds table (and with `status` and the
    web page): a threshold lowered below a total already released is listed, not "No threshold
    crossed." beside "exceeded: yes"."""
    from fdpkit.ledger.timeline import ledger_document
    from fdpkit.report import render_document

    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    led.add_dataset("census", unit="one person", user="admin")
    led.record("census", {"kind": "gaussian", "sigma": 5.0}, title="counts", user="ana", approver="bob",
               report=False)  # ε 0.7256: no alert when released
    led.set_threshold("census", metric="epsilon", level="notice", value=0.5, user="admin")
    md = render_document(ledger_document(led, "census"), "md")
    md = md.decode() if isinstance(md, bytes) else md
    led.close()
    warnings = md.split("## Warnings", 1)[1].split("##", 1)[0]
    assert "No threshold crossed" not in warnings
    assert "notice threshold exceeded: ε 0.7256 > 0.5 at δ = 1e-05" in warnings


def test_basic_composition_delta_is_n_times_1e5_not_float_noise(tmp_path):
    """Three releases of δ = 1e-5 claim δ = 3e-05 (status, web page, ledger report), not
    3.001e-05 (3 * 1e-5 = 3.0000000000000004e-05, rounded up for print)."""
    from fdpkit.ledger.timeline import basic_composition_claim, ledger_document
    from fdpkit.report import render_document

    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    led.add_dataset("census", unit="one person", user="admin")
    for i in range(3):
        led.record("census", {"kind": "gaussian", "sigma": 20.0}, title=f"r{i}", user="ana", approver="bob",
                   report=False)
    assert led.status("census").released.delta_sum == 3e-05
    md = render_document(ledger_document(led, "census"), "md")
    md = md.decode() if isinstance(md, bytes) else md
    led.close()
    assert "would claim" in md and "at δ = 3e-05." in md and "3.001e-05" not in md
    assert basic_composition_claim([])[1] == 0.0
