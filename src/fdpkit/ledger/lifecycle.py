"""The release life cycle of the ledger: propose, approve (with the approval record),
reject (with a rejection record), withdraw, release, and :meth:`record` (all three in one
transaction). A mixin of :class:`fdpkit.ledger.operations.Ledger`, which supplies the
sessions, the lookups and the governance checks; every write is one chained transaction.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from fdpkit.accounting import CostBudget
from fdpkit.guarantee import privacy_report
from fdpkit.ledger.budget import BudgetReads, spec_of
from fdpkit.ledger.chain import append, now
from fdpkit.ledger.models import Approval, Dataset, Release, Threshold
from fdpkit.ledger.prepared import DEFAULT_BUDGET, Prepared, parse_mechanism, prepare, state_digest
from fdpkit.ledger.record import approval_record, render_approval, render_record, render_record_pdf
from fdpkit.ledger.rules import MAX_TEXT, MAX_TITLE, LedgerError, NotFound, _line, _person, _text, check_relation
from fdpkit.ledger.totals import DELTA_REF, add_rows, crossings, newly_exceeded, parts_of, read_total
from fdpkit.report import build_document


class ReleaseLifecycle(BudgetReads):
    """Releases through their states (mixed into :class:`~fdpkit.ledger.operations.Ledger`)."""

    def _propose_in(self, s: Session, head, dataset: str, p: Prepared, title: str, user: str,
                    purpose: str) -> Release:
        d = self._dataset(s, dataset)
        check_relation(d.name, d.relation_name, p.mechanism)
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
        title, user = _line("title", title, limit=MAX_TITLE), _person("user", user)
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
        user = _person("user", user)
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
        """Render and store the PDF of an approval (or rejection) record stored without one
        (``pdf=False``), from the stored JSON: one chained ``approval.pdf`` event (a record
        with one: unchanged)."""
        r = self.release_info(release_id)
        a = next((a for a in reversed(self.approvals(r.id)) if a.report_json is not None), None)
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
               role: str | None = None, reports: tuple[bytes, bytes | None] | None = None, at=None):
        user = _person("user", user)
        comment = _text("comment", comment, required=new_state == "rejected", limit=MAX_TEXT)

        def fn(s: Session, head):
            r = self._release(s, release_id)
            if r.state not in allowed:
                raise LedgerError(f"release {r.id} is {r.state}: only a {' or '.join(allowed)} release "
                                  f"can be {new_state}")
            if new_state == "withdrawn" and user != r.analyst and not (
                    role in ("approver", "admin") if role is not None else self._is_approver(s, user)):
                raise LedgerError(f"only the proposer ({r.analyst}) or an approver may withdraw release {r.id}")
            r.state, r.closed_at = new_state, at or now()
            rows: list[Any] = [r]
            data: dict[str, Any] = {"comment": comment or ""}
            if new_state == "rejected":
                js, pdf = reports if reports is not None else (None, None)
                a = Approval(release_id=r.id, approver=user, decision="rejected", comment=comment or "",
                             created_at=r.closed_at, report_json=js, report_pdf=pdf,
                             report_json_sha256=None if js is None else hashlib.sha256(js).hexdigest(),
                             report_pdf_sha256=None if pdf is None else hashlib.sha256(pdf).hexdigest())
                s.add(a)
                rows.append(a)
                if js is not None:
                    data.update(report_json_sha256=a.report_json_sha256, report_pdf_sha256=a.report_pdf_sha256)
            append(s, head, kind=f"release.{new_state}", actor=user, rows=rows, dataset_id=r.dataset_id,
                   release_id=r.id, data=data)
            return r
        return self._write(fn)

    def reject(self, release_id: Any, *, user: str, comment: str = "", report: bool = True,
               pdf: bool = True) -> Release:
        """Reject a proposed release; ``comment`` (the reason) is required. Stores a rejection
        record like an approval's (:mod:`fdpkit.ledger.record`, decision ``"rejected"``: the
        totals and thresholds as releasing it would have made them) as JSON and PDF with
        their SHA-256; ``pdf=False``: JSON only (:meth:`render_approval_pdf` adds the PDF
        later); ``report=False``: no record (imports, tests)."""
        user = _person("user", user)
        comment = _text("comment", comment, required=True, limit=MAX_TEXT)
        at, reports = now(), None
        if report:
            r0 = self.release_info(release_id)
            if r0.state != "proposed":
                raise LedgerError(f"release {r0.id} is {r0.state}: only a proposed release can be rejected")
            with self.read() as s:
                d = s.get(Dataset, r0.dataset_id)
                four = self._four_eyes_in(s, d.id)
            chk, ids = self._check(d.name, r0.spec, None)
            rec = approval_record(dataset=d, release=r0, approver=user, decision="rejected", comment=comment,
                                  at=at, check=chk, four_eyes=four, released_ids=ids)
            reports = render_record(parse_mechanism(r0.spec), rec, pdf=pdf)
        return self._close(release_id, user, comment, "rejected", ("proposed",), reports=reports, at=at)

    def withdraw(self, release_id: Any, *, user: str, comment: str = "", role: str | None = None) -> Release:
        """Withdraw a proposed or approved release: only its proposer or an approver may
        (``role`` as the caller authenticated it, e.g. the web; else the ledger's users
        table says whether ``user`` is an active approver)."""
        return self._close(release_id, user, comment, "withdrawn", ("proposed", "approved"), role)

    def _release_in(self, s: Session, head, r: Release, user: str, override_reason: str | None,
                    prepared: Prepared | None = None) -> Release:
        if r.state != "approved":
            raise LedgerError(f"release {r.id} is {r.state}: only an approved release can be released")
        d = s.get(Dataset, r.dataset_id)  # a row proposed before the relation rule: checked here too
        check_relation(d.name, d.relation_name, prepared.mechanism if prepared is not None else parse_mechanism(r.spec))
        override_reason = _text("override_reason", override_reason, required=False, limit=MAX_TEXT) or None
        state, ids, eps_sum = self._released_state(s, r.dataset_id)
        parts = self._released_parts(s, r.dataset_id)
        before = read_total(state, eps_sum, parts=parts)
        after_state = prepared.after(state) if prepared is not None else add_rows(state, [r])
        after = read_total(after_state, eps_sum + r.epsilon_ref, parts=parts + parts_of([r]))
        specs = [spec_of(t) for t in s.execute(select(Threshold).where(Threshold.dataset_id == r.dataset_id)).scalars()]
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
        # the chain records the running composition's figures (what `verify` composes again), not
        # those read also at the releases' own grid for the limits (Total.refine)
        running = read_total(after_state, eps_sum + r.epsilon_ref) if after.refined else after
        append(s, head, kind="release.released", actor=user, rows=[r], dataset_id=r.dataset_id, release_id=r.id,
               data={"total": {"mu": running.mu, "epsilon": running.epsilon, "delta": DELTA_REF,
                               "epsilon_sum": new_sum, "count": after.count},  # sum of epsilon_ref
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
        user = _person("user", user)
        return self._write(lambda s, head: self._release_in(s, head, self._release(s, release_id), user,
                                                            override_reason))

    def record(self, dataset: str, mechanism: Any, *, title: str, user: str, approver: str | None = None,
               purpose: str = "", report: bool = True, override_reason: str | None = None,
               budget: CostBudget | None = DEFAULT_BUDGET) -> Release:
        """Propose (as ``user``), approve (as ``approver``, with its report) and release in
        ONE transaction: the whole release or nothing (imports of past releases, scripted
        pipelines). Under four-eyes (the default) ``approver`` must be someone else."""
        title, user = _line("title", title, limit=MAX_TITLE), _person("user", user)
        purpose = _text("purpose", purpose, required=False, limit=MAX_TEXT)
        if approver is None:
            approver = user  # refused below under four-eyes, with the reason
        approver = _person("approver", approver)
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
