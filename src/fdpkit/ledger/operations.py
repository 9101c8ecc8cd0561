"""The ledger's operations: datasets, thresholds, releases through their states, approvals
with their reports, running totals and what a proposed release would do to them.

Every write is one transaction that locks the chain head, checks its preconditions, writes
its rows and appends one event per change (``fdpkit.ledger.chain``): a failed check raises
:class:`LedgerError` (a ``ValueError``) and writes nothing. Expensive work (privacy
reports, compositions of a new mechanism) is done before the transaction where possible.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterator

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from fdpkit.accounting import Composition, CostBudget
from fdpkit.ledger import db
from fdpkit.ledger.chain import Anchor, VerifyResult, append, ledger_key, now, verify
from fdpkit.ledger.models import Approval, ChainHead, ComposedState, Dataset, Event, Release, Threshold, User
from fdpkit.ledger.prepared import (  # noqa: F401 - parse_mechanism, Prepared are public here
    DEFAULT_BUDGET, Prepared, parse_mechanism, prepare, state_digest,
)
from fdpkit.ledger.record import approval_record, render_approval, render_record, render_record_pdf
from fdpkit.guarantee import privacy_report
from fdpkit.report import build_document
from fdpkit.ledger.rules import (  # noqa: F401 - the errors and limits are public here
    DATASET_NAME, MAX_ID, MAX_NAME, MAX_TEXT, MAX_TITLE, RELATIONS, SETTING_EVENT, LedgerError, NotFound,
    _check_order, _text,
)
from fdpkit.ledger.totals import (
    DEFAULT_THRESHOLDS, DELTA_REF, ThresholdSpec, Total, add_rows, check_threshold, crossings,
    newly_exceeded, read_total,
)
from fdpkit.ledger.views import Check, Status, event_dict, release_dict  # noqa: F401 - public here
from fdpkit.vocabulary import ADD_REMOVE, canonical_relation


def _spec_of(t: Threshold) -> ThresholdSpec:
    return ThresholdSpec(t.metric, t.level, t.value, t.delta, t.fpr)


@dataclass
class Head:
    """The chain head as seen inside one write transaction (and the chain key, if any)."""

    seq: int
    hash: str
    key: bytes | None = None


class Ledger:
    """A privacy-budget ledger at a SQLAlchemy URL (see :func:`fdpkit.ledger.open_ledger`)."""

    def __init__(self, url: str | None = None, *, upgrade: bool = True, key: str | bytes | None = None) -> None:
        self.url = db.resolve_url(url)
        #: HMAC key of a keyed chain (``key`` or ``FDPKIT_LEDGER_KEY``), else None
        self.key = ledger_key(key)
        self.engine = db.make_engine(self.url)
        self._sessions = db.session_factory(self.engine)
        self._totals: dict[tuple, Total] = {}
        if upgrade:
            self.init()
        elif db.current_revision(self.engine) is None:
            raise LedgerError("the ledger is not initialised: run `fdpkit ledger init`")

    def init(self) -> str:
        """Create or upgrade the schema (Alembic migrations); returns the revision."""
        return db.upgrade(self.engine)

    def close(self) -> None:
        """Release the database connections (also on leaving a ``with`` block)."""
        self.engine.dispose()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only session (context manager) on the ledger's database."""
        with self._sessions() as s:
            yield s

    def _write(self, fn):
        """Run ``fn(session, head)`` in one write transaction holding the chain-head lock;
        the head row is written once, at the end."""
        def run(s: Session):
            row = db.lock_head(s)
            head = Head(row.seq, row.hash, self.key)
            result = fn(s, head)
            row.seq, row.hash = head.seq, head.hash
            return result
        return db.run_write(self.engine, run)

    # ------------------------------------------------------------------ lookups
    @staticmethod
    def _dataset(s: Session, name: str) -> Dataset:
        if not isinstance(name, str) or "\x00" in name or len(name) > MAX_NAME:
            raise NotFound(f"dataset {str(name)[:MAX_NAME]!r} is unknown")
        d = s.execute(select(Dataset).where(Dataset.name == name)).scalar_one_or_none()
        if d is None:
            raise NotFound(f"dataset {name!r} is unknown (add it with `fdpkit ledger dataset add`)")
        return d

    @staticmethod
    def _release(s: Session, release_id: Any) -> Release:
        try:
            rid = int(release_id)
        except (TypeError, ValueError, OverflowError):
            raise LedgerError(f"release id must be a whole number, got {release_id!r}") from None
        if not 1 <= rid <= MAX_ID:  # no row has it (and the database's integers stop at 2**63 - 1)
            raise NotFound(f"release {rid} is unknown")
        r = s.get(Release, rid)
        if r is None:
            raise NotFound(f"release {rid} is unknown")
        return r

    def dataset(self, name: str) -> Dataset:
        """The dataset called ``name`` (NotFound if none)."""
        with self.read() as s:
            return self._dataset(s, name)

    def datasets(self) -> list[Dataset]:
        """Every dataset, by name."""
        with self.read() as s:
            return list(s.execute(select(Dataset).order_by(Dataset.name)).scalars())

    def release_info(self, release_id: Any) -> Release:
        """The release with id ``release_id`` (NotFound if none)."""
        with self.read() as s:
            return self._release(s, release_id)

    def releases(self, dataset: str | None = None, state: str | None = None) -> list[Release]:
        """Releases by id, optionally of one ``dataset`` and in one ``state``."""
        with self.read() as s:
            q = select(Release).order_by(Release.id)
            if dataset is not None:
                q = q.where(Release.dataset_id == self._dataset(s, dataset).id)
            if state is not None:
                q = q.where(Release.state == state)
            return list(s.execute(q).scalars())

    def thresholds(self, dataset: str) -> list[Threshold]:
        """The thresholds of ``dataset``."""
        with self.read() as s:
            d = self._dataset(s, dataset)
            return list(s.execute(select(Threshold).where(Threshold.dataset_id == d.id)
                                  .order_by(Threshold.metric, Threshold.level)).scalars())

    def approvals(self, release_id: Any) -> list[Approval]:
        """The approvals and rejections of a release, oldest first."""
        with self.read() as s:
            r = self._release(s, release_id)
            return list(s.execute(select(Approval).where(Approval.release_id == r.id)
                                  .order_by(Approval.id)).scalars())

    def history(self, dataset: str | None = None, release_id: Any = None, limit: int | None = None,
                kind: str | None = None) -> list[Event]:
        """Events, oldest first (the last ``limit`` when given)."""
        with self.read() as s:
            q = select(Event).order_by(Event.seq.desc())
            if dataset is not None:
                q = q.where(Event.dataset_id == self._dataset(s, dataset).id)
            if release_id is not None:
                q = q.where(Event.release_id == self._release(s, release_id).id)
            if kind is not None:
                q = q.where(Event.kind == kind)
            if limit is not None:
                if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                    raise LedgerError(f"limit must be a whole number >= 1, got {limit!r}")
                q = q.limit(limit)
            return list(reversed(s.execute(q).scalars().all()))

    def verify(self, anchor: Any = None) -> VerifyResult:
        """Check the event chain and every row against it, and the released totals
        re-derived from the chained releases (see :mod:`fdpkit.ledger.chain`). ``anchor``
        (an earlier :meth:`head`, or its ``"SEQ:HASH"`` text) must still be in the chain:
        a chain cut before it or rewritten up to it fails. Keyed with :attr:`key`."""
        if anchor is not None:
            try:
                anchor = Anchor.parse(anchor)
            except ValueError as exc:
                raise LedgerError(str(exc)) from None
        with self.read() as s:
            return verify(s, anchor, self.key)

    def head(self) -> Anchor:
        """The chain head (``.seq``, ``.hash``; ``str()`` gives ``"SEQ:HASH"``): keep it
        outside the database and pass it to :meth:`verify` as ``anchor`` later."""
        with self.read() as s:
            h = s.get(ChainHead, 1)
            return Anchor(0, "0" * 64) if h is None else Anchor(h.seq, h.hash)

    # ------------------------------------------------------------------ governance
    @staticmethod
    def _four_eyes_in(s: Session, dataset_id: int) -> bool:
        payload = s.execute(select(Event.payload).where(Event.dataset_id == dataset_id, Event.kind == SETTING_EVENT)
                            .order_by(Event.seq.desc()).limit(1)).scalar_one_or_none()
        if payload is None:
            return True
        return bool(json.loads(payload).get("data", {}).get("four_eyes", True))

    def four_eyes(self, dataset: str) -> bool:
        """Whether ``dataset`` keeps four-eyes (the default): the proposer of a release can
        neither approve it nor override a hard limit for it."""
        with self.read() as s:
            return self._four_eyes_in(s, self._dataset(s, dataset).id)

    def set_four_eyes(self, dataset: str, enabled: bool, *, user: str, reason: str = "") -> None:
        """Keep or relax four-eyes for ``dataset``; relaxing needs a ``reason``. Logged as a
        chained ``dataset.setting`` event (the newest one holds)."""
        user = _text("user", user)
        reason = _text("reason", reason, required=not enabled, limit=MAX_TEXT)
        if not isinstance(enabled, bool):
            raise LedgerError(f"enabled must be True or False, got {enabled!r}")

        def fn(s: Session, head):
            d = self._dataset(s, dataset)
            append(s, head, kind=SETTING_EVENT, actor=user, dataset_id=d.id,
                   data={"four_eyes": enabled, "reason": reason})
        self._write(fn)

    @staticmethod
    def _is_approver(s: Session, user: str) -> bool:
        u = s.execute(select(User).where(User.name == user)).scalar_one_or_none()
        return u is not None and u.active and u.role in ("approver", "admin")

    # ------------------------------------------------------------------ datasets, thresholds
    def add_dataset(self, name: str, *, unit: str, user: str, relation: str = ADD_REMOVE,
                    description: str = "") -> Dataset:
        """Register a dataset with its privacy unit and the default thresholds
        (epsilon 2 / 4 / 8 at delta 1e-5: notice / warning / hard). ``relation`` is
        "add-remove" or "replace-one" (the old spelling "add-or-remove" is accepted and
        stored as "add-remove")."""
        name, unit, user = _text("name", name), _text("unit", unit), _text("user", user)
        description = _text("description", description, required=False, limit=MAX_TEXT)
        if not DATASET_NAME.fullmatch(name):
            raise LedgerError(f"name must be letters, digits, '.', '_' or '-' starting with a letter or digit "
                              f"(what a URL addresses as one path segment), got {name!r}")
        try:
            relation = canonical_relation(relation, allowed=RELATIONS)
        except ValueError as exc:
            raise LedgerError(str(exc)) from None

        def fn(s: Session, head):
            if s.execute(select(Dataset.id).where(Dataset.name == name)).first():
                raise LedgerError(f"dataset {name!r} already exists")
            d = Dataset(name=name, unit=unit, relation=relation, description=description or "",
                        created_at=now())
            s.add(d)
            s.flush()
            ts = [Threshold(dataset_id=d.id, metric="epsilon", level=lv, value=v, delta=DELTA_REF)
                  for lv, v in DEFAULT_THRESHOLDS]
            s.add_all(ts)
            append(s, head, kind="dataset.added", actor=user, rows=[d, *ts], dataset_id=d.id)
            return d
        return self._write(fn)

    def set_threshold(self, dataset: str, *, metric: str, level: str, value: Any, user: str,
                      delta: Any = None, fpr: Any = None) -> Threshold:
        """Set (create or replace) the ``level`` threshold of ``metric`` for ``dataset``."""
        spec = check_threshold(metric, level, value, delta, fpr)
        user = _text("user", user)

        def fn(s: Session, head):
            d = self._dataset(s, dataset)
            t = s.execute(select(Threshold).where(Threshold.dataset_id == d.id, Threshold.metric == metric,
                                                  Threshold.level == level)).scalar_one_or_none()
            others = s.execute(select(Threshold).where(Threshold.dataset_id == d.id, Threshold.metric == metric,
                                                       Threshold.level != level)).scalars()
            _check_order(spec, [_spec_of(o) for o in others])
            if t is None:
                t = Threshold(dataset_id=d.id, metric=metric, level=level, value=0.0)
                s.add(t)
            t.value, t.delta, t.fpr = spec.value, spec.delta, spec.fpr
            append(s, head, kind="threshold.set", actor=user, rows=[t], dataset_id=d.id,
                   data={"threshold": spec.describe()})
            return t
        return self._write(fn)

    def remove_threshold(self, dataset: str, *, metric: str, level: str, user: str) -> None:
        """Remove ``dataset``'s threshold on ``metric`` at ``level`` (logged as an event by ``user``)."""
        user = _text("user", user)

        def fn(s: Session, head):
            d = self._dataset(s, dataset)
            t = s.execute(select(Threshold).where(Threshold.dataset_id == d.id, Threshold.metric == metric,
                                                  Threshold.level == level)).scalar_one_or_none()
            if t is None:
                raise NotFound(f"dataset {dataset!r} has no {level} threshold on {metric}")
            tid = t.id
            s.delete(t)
            append(s, head, kind="threshold.removed", actor=user, deleted=[("thresholds", tid)],
                   dataset_id=d.id, data={"metric": metric, "level": level})
        self._write(fn)

    # ------------------------------------------------------------------ release life cycle
    def _propose_in(self, s: Session, head, dataset: str, p: Prepared, title: str, user: str,
                    purpose: str) -> Release:
        d = self._dataset(s, dataset)
        r = Release(dataset_id=d.id, title=title, purpose=purpose, spec=p.spec, analyst=user,
                    state="proposed", created_at=now(), gaussian_mu=p.gaussian_mu, epsilon_ref=p.epsilon_ref)
        s.add(r)
        s.flush()
        append(s, head, kind="release.proposed", actor=user, rows=[r], dataset_id=d.id, release_id=r.id,
               data={"title": title, "mechanism": p.mechanism.describe()})
        return r

    def propose(self, dataset: str, mechanism: Any, *, title: str, user: str, purpose: str = "",
                budget: CostBudget | None = DEFAULT_BUDGET) -> Release:
        """Record a proposed release (state ``proposed``), accounted first (within
        ``budget``; None: no limit) so that nothing that breaks a total is queued."""
        title, user = _text("title", title, limit=MAX_TITLE), _text("user", user)
        purpose = _text("purpose", purpose, required=False, limit=MAX_TEXT)
        p = prepare(mechanism, budget)
        return self._write(lambda s, head: self._propose_in(s, head, dataset, p, title, user, purpose or ""))

    def _approve_in(self, s: Session, head, r: Release, user: str, comment: str,
                    reports: tuple[bytes, bytes | None] | None, at=None, released_ids=None) -> Approval:
        if r.state != "proposed":
            raise LedgerError(f"release {r.id} is {r.state}: only a proposed release can be approved")
        if user == r.analyst and self._four_eyes_in(s, r.dataset_id):
            raise LedgerError(f"four-eyes: {user} proposed release {r.id} and cannot approve it; another "
                              "approver must")
        if released_ids is not None and self._released_ids(s, r.dataset_id) != released_ids:
            raise LedgerError(f"the released total of the dataset changed while the approval record of release "
                              f"{r.id} was prepared (another release was released): approve it again")
        js, pdf = reports if reports is not None else (None, None)
        a = Approval(release_id=r.id, approver=user, decision="approved", comment=comment or "",
                     created_at=at or now(), report_json=js, report_pdf=pdf,
                     report_json_sha256=None if js is None else hashlib.sha256(js).hexdigest(),
                     report_pdf_sha256=None if pdf is None else hashlib.sha256(pdf).hexdigest())
        s.add(a)
        r.state, r.approved_at = "approved", a.created_at
        append(s, head, kind="release.approved", actor=user, rows=[r, a], dataset_id=r.dataset_id,
               release_id=r.id, data={"report_pdf_sha256": a.report_pdf_sha256,
                                      "report_json_sha256": a.report_json_sha256})
        return a

    def approve(self, release_id: Any, *, user: str, comment: str = "", report: bool = True,
                pdf: bool = True) -> Approval:
        """Approve a proposed release, storing its approval record (:mod:`fdpkit.ledger.record`)
        as JSON and PDF bytes with their SHA-256; ``pdf=False``: JSON only, fast
        (:meth:`render_approval_pdf` adds the PDF later); ``report=False``: none (imports, tests)."""
        user = _text("user", user)
        comment = _text("comment", comment, required=False, limit=MAX_TEXT)
        r0 = self.release_info(release_id)
        if r0.state != "proposed":
            raise LedgerError(f"release {r0.id} is {r0.state}: only a proposed release can be approved")
        at, ids, reports = now(), None, None
        if report:
            with self.read() as s:
                d = s.get(Dataset, r0.dataset_id)
                four = self._four_eyes_in(s, d.id)
            if four and user == r0.analyst:  # refused below too (with the reason): do not render for nothing
                return self._write(lambda s, head: self._approve_in(s, head, self._release(s, r0.id), user, "", None))
            chk, ids = self._check(d.name, r0.spec, None)
            rec = approval_record(dataset=d, release=r0, approver=user, decision="approved", comment=comment or "",
                                  at=at, check=chk, four_eyes=four, released_ids=ids)
            reports = render_record(parse_mechanism(r0.spec), rec, pdf=pdf)
        return self._write(lambda s, head: self._approve_in(s, head, self._release(s, r0.id), user,
                                                            comment, reports, at, ids))

    def render_approval_pdf(self, release_id: Any) -> Approval:
        """Render and store the PDF of an approval record stored without one (``pdf=False``),
        from the stored JSON: one chained ``approval.pdf`` event (an approval with one: unchanged)."""
        r = self.release_info(release_id)
        a = next((a for a in reversed(self.approvals(r.id)) if a.decision == "approved"), None)
        if a is None or a.report_json is None:
            raise NotFound(f"release {r.id} has no stored approval record")
        if a.report_pdf is not None:
            return a
        pdf = render_record_pdf(parse_mechanism(r.spec), a.report_json)

        def fn(s: Session, head):
            row = s.get(Approval, a.id)
            if row.report_pdf is None:
                row.report_pdf, row.report_pdf_sha256 = pdf, hashlib.sha256(pdf).hexdigest()
                append(s, head, kind="approval.pdf", actor=row.approver, rows=[row], dataset_id=r.dataset_id,
                       release_id=r.id, data={"report_pdf_sha256": row.report_pdf_sha256})
            return row
        return self._write(fn)

    def _close(self, release_id: Any, user: str, comment: str, new_state: str, allowed: tuple[str, ...],
               role: str | None = None):
        user = _text("user", user)
        comment = _text("comment", comment, required=new_state == "rejected", limit=MAX_TEXT)

        def fn(s: Session, head):
            r = self._release(s, release_id)
            if r.state not in allowed:
                raise LedgerError(f"release {r.id} is {r.state}: only a {' or '.join(allowed)} release "
                                  f"can be {new_state}")
            if new_state == "withdrawn" and user != r.analyst and not (
                    role in ("approver", "admin") if role is not None else self._is_approver(s, user)):
                raise LedgerError(f"only the proposer ({r.analyst}) or an approver may withdraw release {r.id}")
            r.state, r.closed_at = new_state, now()
            rows: list[Any] = [r]
            if new_state == "rejected":
                a = Approval(release_id=r.id, approver=user, decision="rejected", comment=comment or "",
                             created_at=r.closed_at)
                s.add(a)
                rows.append(a)
            append(s, head, kind=f"release.{new_state}", actor=user, rows=rows, dataset_id=r.dataset_id,
                   release_id=r.id, data={"comment": comment or ""})
            return r
        return self._write(fn)

    def reject(self, release_id: Any, *, user: str, comment: str = "") -> Release:
        """Reject a proposed release; ``comment`` (the reason) is required."""
        return self._close(release_id, user, comment, "rejected", ("proposed",))

    def withdraw(self, release_id: Any, *, user: str, comment: str = "", role: str | None = None) -> Release:
        """Withdraw a proposed or approved release: only its proposer or an approver may
        (``role`` as the caller authenticated it, e.g. the web; else the ledger's users
        table says whether ``user`` is an active approver)."""
        return self._close(release_id, user, comment, "withdrawn", ("proposed", "approved"), role)

    def _release_in(self, s: Session, head, r: Release, user: str, override_reason: str | None,
                    prepared: Prepared | None = None) -> Release:
        if r.state != "approved":
            raise LedgerError(f"release {r.id} is {r.state}: only an approved release can be released")
        override_reason = _text("override_reason", override_reason, required=False, limit=MAX_TEXT) or None
        state, ids, eps_sum = self._released_state(s, r.dataset_id)
        before = read_total(state, eps_sum)
        after_state = prepared.after(state) if prepared is not None else add_rows(state, [r])
        after = read_total(after_state, eps_sum + r.epsilon_ref)
        specs = [_spec_of(t) for t in s.execute(select(Threshold).where(Threshold.dataset_id == r.dataset_id)).scalars()]
        hard = [c for c in crossings(after, specs) if c.exceeded and c.threshold.level == "hard"]
        if hard and not (override_reason and override_reason.strip()):
            raise LedgerError(f"release {r.id} would exceed the hard limit ({hard[0].message().split(': ', 1)[1]}); "
                              "an approver must override it with a reason")
        if hard and user == r.analyst and self._four_eyes_in(s, r.dataset_id):
            raise LedgerError(f"four-eyes: {user} proposed release {r.id} and cannot override the hard limit "
                              "for it; another approver must")
        r.state, r.released_at = "released", now()
        new_ids, new_sum = sorted([*ids, r.id]), eps_sum + r.epsilon_ref
        state_bytes = after_state.to_bytes()
        if hard:
            r.override_reason, r.override_by = override_reason.strip(), user
            append(s, head, kind="release.override", actor=user, dataset_id=r.dataset_id, release_id=r.id,
                   data={"reason": r.override_reason, "exceeded": [c.message() for c in hard]})
        append(s, head, kind="release.released", actor=user, rows=[r], dataset_id=r.dataset_id, release_id=r.id,
               data={"total": {"mu": after.mu, "epsilon": after.epsilon, "delta": DELTA_REF,
                               "epsilon_sum": after.epsilon_sum, "count": after.count},
                     "composed_sha256": state_digest(new_ids, new_sum, state_bytes)})
        for c in newly_exceeded(before, after, specs):
            append(s, head, kind="alert", actor=user, dataset_id=r.dataset_id, release_id=r.id,
                   data={"level": c.threshold.level, "metric": c.threshold.metric, "message": c.message(),
                         **c.to_dict()})
        self._save_state(s, r.dataset_id, state_bytes, new_ids, new_sum)
        return r

    def release(self, release_id: Any, *, user: str, override_reason: str | None = None) -> Release:
        """Release an approved release. If the new total would exceed a hard limit the release
        is refused unless ``override_reason`` is given (logged as an override event) by
        someone other than the proposer (four-eyes). The total is re-derived from the
        chained release rows unless the cached composition matches the digest in the chain."""
        user = _text("user", user)
        return self._write(lambda s, head: self._release_in(s, head, self._release(s, release_id), user,
                                                            override_reason))

    def record(self, dataset: str, mechanism: Any, *, title: str, user: str, approver: str | None = None,
               purpose: str = "", report: bool = True, override_reason: str | None = None,
               budget: CostBudget | None = DEFAULT_BUDGET) -> Release:
        """Propose (as ``user``), approve (as ``approver``, with its report) and release in
        ONE transaction: the whole release or nothing (imports of past releases, scripted
        pipelines). Under four-eyes (the default) ``approver`` must be someone else."""
        title, user = _text("title", title, limit=MAX_TITLE), _text("user", user)
        purpose = _text("purpose", purpose, required=False, limit=MAX_TEXT)
        if approver is None:
            approver = user  # refused below under four-eyes, with the reason
        approver = _text("approver", approver)
        p = prepare(mechanism, budget)
        pre = (build_document(privacy_report(p.mechanism)), *self._check(dataset, p.mechanism, None)) if report else None

        def fn(s: Session, head):  # noqa: D401
            r = self._propose_in(s, head, dataset, p, title, user, purpose or "")
            reports, at = None, now()
            if pre is not None:  # the record names the release's id: rendered here
                reports = render_approval(approval_record(
                    dataset=s.get(Dataset, r.dataset_id), release=r, approver=approver, decision="approved",
                    comment="", at=at, check=pre[1], four_eyes=self._four_eyes_in(s, r.dataset_id),
                    released_ids=pre[2]), pre[0])
            self._approve_in(s, head, r, approver, "", reports, at, None if pre is None else pre[2])
            return self._release_in(s, head, r, approver, override_reason, p)
        return self._write(fn)

    # ------------------------------------------------------------------ totals
    def _released_state(self, s: Session, dataset_id: int) -> tuple[Composition, list[int], float]:
        """The composition of the dataset's released releases, from the chained release rows.
        The cached state is used only when it composes exactly the released releases and
        matches the digest that the newest ``release.released`` event put in the chain (an
        edited cache is ignored, never trusted)."""
        current = sorted(s.execute(select(Release.id).where(Release.dataset_id == dataset_id,
                                                            Release.state == "released")).scalars())
        if not current:
            return Composition.empty(), [], 0.0
        cache = s.get(ComposedState, dataset_id)
        if cache is not None:
            try:
                cached_ids = sorted(int(i) for i in json.loads(cache.release_ids))
            except (ValueError, TypeError):
                cached_ids = None
            if cached_ids == current and self._chained_digest(s, dataset_id) == state_digest(
                    cached_ids, cache.epsilon_sum, cache.state):
                try:
                    return Composition.from_bytes(cache.state), cached_ids, float(cache.epsilon_sum)
                except ValueError:
                    pass
        cols = select(Release.id, Release.gaussian_mu, Release.spec, Release.epsilon_ref).where(
            Release.dataset_id == dataset_id, Release.state == "released").order_by(Release.id)
        rows = list(s.execute(cols))
        state = add_rows(Composition.empty(), rows)
        return state, [r.id for r in rows], float(sum(r.epsilon_ref for r in rows))

    @staticmethod
    def _chained_digest(s: Session, dataset_id: int) -> str | None:
        payload = s.execute(select(Event.payload).where(Event.dataset_id == dataset_id,
                                                        Event.kind == "release.released")
                            .order_by(Event.seq.desc()).limit(1)).scalar_one_or_none()
        try:
            return None if payload is None else json.loads(payload).get("data", {}).get("composed_sha256")
        except (ValueError, AttributeError):
            return None

    @staticmethod
    def _save_state(s: Session, dataset_id: int, state: bytes, ids: list[int], eps_sum: float) -> None:
        cache = s.get(ComposedState, dataset_id)
        if cache is None:
            cache = ComposedState(dataset_id=dataset_id)
            s.add(cache)
        cache.release_ids, cache.epsilon_sum, cache.state = json.dumps(ids), eps_sum, state

    def _refresh_cache(self, dataset_id: int, state: Composition, ids: list[int], eps_sum: float) -> None:
        data = state.to_bytes()
        try:
            db.run_write(self.engine, lambda s: self._save_state(s, dataset_id, data, ids, eps_sum))
        except Exception:  # noqa: BLE001 - the cache is an optimisation; never fail a read on it
            pass

    def status(self, dataset: str) -> Status:
        """Running totals of ``dataset`` (tight composition), thresholds, alerts."""
        with self.read() as s:
            d = self._dataset(s, dataset)
            state, ids, eps_sum = self._released_state(s, d.id)
            cache = s.get(ComposedState, d.id)
            stale = cache is None or json.loads(cache.release_ids) != ids
            approved = list(s.execute(select(Release).where(Release.dataset_id == d.id,
                                                            Release.state == "approved")).scalars())
            counts = dict(s.execute(select(Release.state, func.count()).where(Release.dataset_id == d.id)
                                    .group_by(Release.state)).all())
            specs = [_spec_of(t) for t in s.execute(select(Threshold).where(Threshold.dataset_id == d.id)).scalars()]
            alerts = list(s.execute(select(Event).where(Event.dataset_id == d.id, Event.kind == "alert")
                                    .order_by(Event.seq)).scalars())
        if stale and ids:
            self._refresh_cache(d.id, state, ids, eps_sum)
        deltas = [t.delta for t in specs if t.delta is not None]
        released = self._total(d.id, state, ids, eps_sum, deltas)
        with_approved = (read_total(add_rows(state, approved), eps_sum + sum(a.epsilon_ref for a in approved),
                                    deltas) if approved else released)
        counts = {k: int(counts.get(k, 0)) for k in ("proposed", "approved", "released", "rejected", "withdrawn")}
        return Status(d, counts, released, with_approved, crossings(released, specs), alerts)

    def _total(self, dataset_id: int, state: Composition, ids: list[int], eps_sum: float,
               deltas: list[float]) -> Total:
        """The released total, kept in memory per set of releases: its readings (mu fit,
        epsilons) are computed once per change of the ledger, not once per request."""
        key = (dataset_id, tuple(ids), eps_sum)
        total = self._totals.get(key)
        if total is None:
            total = read_total(state, eps_sum)
            if len(self._totals) >= 16:
                try:
                    self._totals.pop(next(iter(self._totals)))
                except (KeyError, StopIteration, RuntimeError):  # another thread got there first
                    pass
            self._totals[key] = total
        for dl in deltas:
            total.epsilon_for_delta(dl)
        return total

    def check(self, dataset: str, mechanism: Any, *, budget: CostBudget | None = DEFAULT_BUDGET) -> Check:
        """What releasing ``mechanism`` would do to ``dataset``'s released total (about one
        composition when the cached total matches the chain; the total is re-derived from
        the chained release rows otherwise). ``budget`` bounds the mechanism's accounting
        (None: no limit)."""
        return self._check(dataset, mechanism, budget)[0]

    def _check(self, dataset: str, mechanism: Any, budget: CostBudget | None) -> tuple[Check, list[int]]:
        """:meth:`check` and the ids of the released releases it read."""
        p = prepare(mechanism, budget)
        with self.read() as s:
            d = self._dataset(s, dataset)
            state, ids, eps_sum = self._released_state(s, d.id)
            specs = [_spec_of(t) for t in s.execute(select(Threshold).where(Threshold.dataset_id == d.id)).scalars()]
        deltas = [t.delta for t in specs if t.delta is not None]
        before = self._total(d.id, state, ids, eps_sum, deltas)
        after = read_total(p.after(state), eps_sum + p.epsilon_ref, deltas)
        return Check(before, after, crossings(after, specs), newly_exceeded(before, after, specs)), ids

    @staticmethod
    def _released_ids(s: Session, dataset_id: int) -> list[int]:
        return sorted(s.execute(select(Release.id).where(Release.dataset_id == dataset_id,
                                                         Release.state == "released")).scalars())

    def check_release(self, release_id: Any) -> Check:
        """What releasing ``release_id`` would do: the totals before and after, thresholds newly crossed, and whether a hard one blocks it."""
        r = self.release_info(release_id)
        with self.read() as s:
            name = s.get(Dataset, r.dataset_id).name
        return self.check(name, r.spec)
