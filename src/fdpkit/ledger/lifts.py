"""Thresholds, and lifting a hard limit with a second person: the change itself
(:meth:`ThresholdLifts.set_threshold`, :meth:`~ThresholdLifts.remove_threshold`) and its
two-step form for a second person who is not at hand (:meth:`~ThresholdLifts.request_lift`
by one person, :meth:`~ThresholdLifts.approve_lift` or :meth:`~ThresholdLifts.reject_lift`
by another: the web's way).

Lifting a hard limit means raising it, loosening its δ or FPR, or removing it. Under
four-eyes (a dataset's default) it needs a second person. A request stores the hard
threshold it starts from (its *basis*) and changes nothing in the limits; approving it
applies it only while the threshold still stands as it did, and every change of a threshold
marks the pending requests on it whose basis it changed as superseded (in its own chained
event), so a stale request never applies old values. A mixin of
:class:`fdpkit.ledger.operations.Ledger` (its sessions, lookups and four-eyes setting).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from fdpkit.ledger.budget import spec_of
from fdpkit.ledger.chain import append, now
from fdpkit.ledger.models import Dataset, LiftRequest, Threshold
from fdpkit.ledger.rules import (
    MAX_ID, MAX_TEXT, LedgerError, NeedsSecondPerson, NotFound, _check_order, _person, _text,
)
from fdpkit.ledger.totals import ThresholdSpec, check_threshold


def lifts(t: Threshold | None, spec: ThresholdSpec | None) -> bool:
    """Whether replacing the threshold ``t`` by ``spec`` (None: removing it) lifts a hard
    limit: anything but a lower or equal value at the same or a stricter δ / FPR. Setting a
    first hard threshold, or any other level, lifts none.

    A stricter δ is a smaller one: ε(δ) does not increase with δ, so ε(δ') ≤ v' with δ' ≤ δ and
    v' ≤ v gives ε(δ) ≤ v (a census limit ε 1 at δ 1e-6 in place of ε 8 at δ 1e-5 is a lowering, which
    needed a second person as a "lift"). A stricter FPR is a larger one: the certified TPR does not
    decrease with the FPR, so TPR(f') ≤ v' with f' ≥ f and v' ≤ v gives TPR(f) ≤ v."""
    if t is None or t.level != "hard":
        return False
    if spec is None or spec.value > t.value:
        return True
    if spec.delta is not None and t.delta is not None:
        return spec.delta > t.delta
    if spec.fpr is not None and t.fpr is not None:
        return spec.fpr < t.fpr
    return (spec.delta, spec.fpr) != (t.delta, t.fpr)


def _change(spec: ThresholdSpec | None) -> str:
    return "remove it" if spec is None else f"set it to {spec.describe()}"


class ThresholdLifts:
    """Thresholds and lift requests (mixed into :class:`~fdpkit.ledger.operations.Ledger`)."""

    # supplied by Ledger
    _dataset: Any
    _write: Any
    _four_eyes_in: Any
    _listed: Any
    read: Any

    @staticmethod
    def _threshold_row(s: Session, d: Dataset, metric: str, level: str) -> Threshold | None:
        return s.execute(select(Threshold).where(Threshold.dataset_id == d.id, Threshold.metric == metric,
                                                 Threshold.level == level)).scalar_one_or_none()

    def _check_lift(self, s: Session, d: Dataset, t: Threshold | None, spec: ThresholdSpec | None,
                    user: str, approver: str | None) -> dict[str, Any]:
        """Four-eyes for the hard limit: a change that :func:`lifts` it needs, under four-eyes
        (the dataset's default), a second person, ``approver`` (not ``user``), named in the
        chained event. Returns the event data to add (the approver, where one was needed)."""
        if not lifts(t, spec) or not self._four_eyes_in(s, d.id):
            return {}
        if approver is None or not approver.strip():
            raise NeedsSecondPerson(
                f"four-eyes: lifting the hard limit of {d.name} ({spec_of(t).describe()}; {_change(spec)}) needs a "
                "second person: name an approver who is not you (CLI: --approver NAME), or file a lift request "
                "that another approver approves, or lower it instead")
        approver = _person("approver", approver)
        if approver == user:
            raise LedgerError(f"four-eyes: {user} cannot approve their own lifting of the hard limit of {d.name}; "
                              "another approver must")
        return {"approver": approver}

    def _apply(self, s: Session, head, d: Dataset, metric: str, level: str, spec: ThresholdSpec | None,
               user: str, extra: dict[str, Any], rows: list[Any] = ()) -> Threshold | None:
        """Set (``spec``) or remove (None) a threshold in the caller's transaction, in one
        chained event that also carries ``rows`` and the pending lift requests on this
        threshold that the change supersedes (their basis is gone)."""
        t = self._threshold_row(s, d, metric, level)
        if spec is None:
            if t is None:
                raise NotFound(f"dataset {d.name!r} has no {level} threshold on {metric}")
            tid = t.id
            s.delete(t)
            stale = self._supersede(s, d, metric, level, None, user)
            append(s, head, kind="threshold.removed", actor=user, rows=[*rows, *stale], deleted=[("thresholds", tid)],
                   dataset_id=d.id, data={"metric": metric, "level": level, **extra})
            return None
        others = s.execute(select(Threshold).where(Threshold.dataset_id == d.id, Threshold.metric == metric,
                                                   Threshold.level != level)).scalars()
        _check_order(spec, [spec_of(o) for o in others])
        if t is None:
            t = Threshold(dataset_id=d.id, metric=metric, level=level, value=0.0)
            s.add(t)
        t.value, t.delta, t.fpr = spec.value, spec.delta, spec.fpr
        stale = self._supersede(s, d, metric, level, t, user)
        append(s, head, kind="threshold.set", actor=user, rows=[t, *rows, *stale], dataset_id=d.id,
               data={"threshold": spec.describe(), **extra})
        return t

    @staticmethod
    def _supersede(s: Session, d: Dataset, metric: str, level: str, t: Threshold | None,
                   user: str) -> list[LiftRequest]:
        """Mark the pending lift requests on this threshold whose basis differs from ``t``
        (None: removed) superseded; returns them (for the event's rows)."""
        out = []
        for r in s.execute(select(LiftRequest).where(LiftRequest.dataset_id == d.id, LiftRequest.metric == metric,
                                                     LiftRequest.level == level,
                                                     LiftRequest.state == "pending")).scalars():
            if t is None or (t.value, t.delta, t.fpr) != (r.basis_value, r.basis_delta, r.basis_fpr):
                r.state, r.decided_at = "superseded", now()
                r.comment = f"the {level} threshold on {metric} was changed by {user} before a decision"
                out.append(r)
        return out

    def set_threshold(self, dataset: str, *, metric: str, level: str, value: Any, user: str,
                      delta: Any = None, fpr: Any = None, approver: str | None = None) -> Threshold:
        """Set (create or replace) the ``level`` threshold of ``metric`` for ``dataset``.

        Raising a hard threshold (or changing its δ or FPR) lifts the hard limit: under
        four-eyes it needs ``approver``, a second person (else :class:`NeedsSecondPerson`;
        :meth:`request_lift` is the two-step form)."""
        spec = check_threshold(metric, level, value, delta, fpr)
        user = _person("user", user)

        def fn(s: Session, head):
            d = self._dataset(s, dataset)
            t = self._threshold_row(s, d, metric, level)
            others = s.execute(select(Threshold).where(Threshold.dataset_id == d.id, Threshold.metric == metric,
                                                       Threshold.level != level)).scalars()
            _check_order(spec, [spec_of(o) for o in others])
            extra = self._check_lift(s, d, t, spec, user, approver)
            return self._apply(s, head, d, metric, level, spec, user, extra)
        return self._write(fn)

    def remove_threshold(self, dataset: str, *, metric: str, level: str, user: str,
                         approver: str | None = None) -> None:
        """Remove ``dataset``'s threshold on ``metric`` at ``level`` (logged as an event by ``user``).
        Removing the hard one lifts the hard limit: under four-eyes it needs ``approver``."""
        user = _person("user", user)

        def fn(s: Session, head):
            d = self._dataset(s, dataset)
            t = self._threshold_row(s, d, metric, level)
            if t is None:
                raise NotFound(f"dataset {dataset!r} has no {level} threshold on {metric}")
            self._apply(s, head, d, metric, level, None, user, self._check_lift(s, d, t, None, user, approver))
        self._write(fn)

    # ------------------------------------------------------------------ lift requests
    @staticmethod
    def _lift(s: Session, request_id: Any) -> LiftRequest:
        try:
            rid = int(request_id)
        except (TypeError, ValueError, OverflowError):
            raise LedgerError(f"lift request id must be a whole number, got {request_id!r}") from None
        r = s.get(LiftRequest, rid) if 1 <= rid <= MAX_ID else None
        if r is None:
            raise NotFound(f"lift request {rid} is unknown")
        return r

    def request_lift(self, dataset: str, *, metric: str, level: str, user: str, reason: str,
                     value: Any = None, delta: Any = None, fpr: Any = None, remove: bool = False) -> LiftRequest:
        """Ask for a hard limit to be lifted (set to ``value`` at ``delta`` / ``fpr``, or
        ``remove`` it) by a second person: stores a pending request with ``reason`` and the
        threshold it starts from, logged as a chained ``threshold.lift_requested`` event;
        the limits do not change until another person :meth:`approve_lift` it. A change
        that lifts nothing (a lower value, another level) or a dataset without four-eyes
        is refused: set it directly."""
        user = _person("user", user)
        reason = _text("reason", reason, limit=MAX_TEXT)
        if not isinstance(remove, bool):
            raise LedgerError(f"remove must be True or False, got {remove!r}")
        if remove and value is not None:
            raise LedgerError("give value (to set the threshold) or remove, not both")
        spec = None if remove else check_threshold(metric, level, value, delta, fpr)

        def fn(s: Session, head):
            d = self._dataset(s, dataset)
            t = self._threshold_row(s, d, metric, level)
            if t is None and remove:
                raise NotFound(f"dataset {dataset!r} has no {level} threshold on {metric}")
            if spec is not None:
                others = s.execute(select(Threshold).where(Threshold.dataset_id == d.id, Threshold.metric == metric,
                                                           Threshold.level != level)).scalars()
                _check_order(spec, [spec_of(o) for o in others])
            if not lifts(t, spec):
                what = "removing" if spec is None else f"setting {spec.describe()}"
                raise LedgerError(f"{what} lifts no hard limit of {d.name}: set it directly (no second person "
                                  "is needed)")
            if not self._four_eyes_in(s, d.id):
                raise LedgerError(f"{d.name} has four-eyes relaxed: set the threshold directly (no second person "
                                  "is needed)")
            r = LiftRequest(dataset_id=d.id, metric=metric, level=level, action="remove" if spec is None else "set",
                            value=None if spec is None else spec.value, delta=None if spec is None else spec.delta,
                            fpr=None if spec is None else spec.fpr, basis_value=t.value, basis_delta=t.delta,
                            basis_fpr=t.fpr, reason=reason, requested_by=user, created_at=now(), state="pending",
                            comment="")
            s.add(r)
            s.flush()
            append(s, head, kind="threshold.lift_requested", actor=user, rows=[r], dataset_id=d.id,
                   data={"lift_request": r.id, "from": spec_of(t).describe(),
                         "change": "remove" if spec is None else spec.describe(), "reason": reason})
            return r
        return self._write(fn)

    def approve_lift(self, request_id: Any, *, user: str, comment: str = "") -> LiftRequest:
        """Approve a pending lift request as a second person (never its requester) and apply
        it, in one chained ``threshold.set`` / ``threshold.removed`` event that names both
        (``requested_by`` and ``approver``). Refused, writing nothing, when the threshold
        no longer stands as it did when requested (the request is stale: request again)
        or the change would break the order notice ≤ warning ≤ hard."""
        user = _person("user", user)
        comment = _text("comment", comment, required=False, limit=MAX_TEXT)

        def fn(s: Session, head):
            r = self._lift(s, request_id)
            if r.state != "pending":
                raise LedgerError(f"lift request {r.id} is {r.state}: only a pending request can be approved")
            if user == r.requested_by:
                raise LedgerError(f"four-eyes: {user} requested lift {r.id} and cannot approve it; another "
                                  "approver must")
            d = s.get(Dataset, r.dataset_id)
            t = self._threshold_row(s, d, r.metric, r.level)
            if t is None or (t.value, t.delta, t.fpr) != (r.basis_value, r.basis_delta, r.basis_fpr):
                now_is = "removed" if t is None else f"now {spec_of(t).describe()}"
                raise LedgerError(f"lift request {r.id} is stale: the {r.level} threshold on {r.metric} of {d.name} "
                                  f"is {now_is}, not as it stood when requested; reject it and request again")
            spec = None if r.action == "remove" else ThresholdSpec(r.metric, r.level, r.value, r.delta, r.fpr)
            r.state, r.decided_by, r.decided_at, r.comment = "approved", user, now(), comment or ""
            self._apply(s, head, d, r.metric, r.level, spec, user,
                        {"approver": user, "requested_by": r.requested_by, "lift_request": r.id,
                         "reason": r.reason, "comment": comment or ""}, rows=[r])
            return r
        return self._write(fn)

    def reject_lift(self, request_id: Any, *, user: str, comment: str = "") -> LiftRequest:
        """Reject a pending lift request (``comment``, the reason, required), or withdraw it
        when ``user`` is its requester; a chained ``threshold.lift_rejected`` /
        ``threshold.lift_withdrawn`` event. The limits do not change."""
        user = _person("user", user)

        def fn(s: Session, head):
            r = self._lift(s, request_id)
            mine = user == r.requested_by
            text = _text("comment", comment, required=not mine, limit=MAX_TEXT)
            if r.state != "pending":
                raise LedgerError(f"lift request {r.id} is {r.state}: only a pending request can be "
                                  f"{'withdrawn' if mine else 'rejected'}")
            r.state = "withdrawn" if mine else "rejected"
            r.decided_by, r.decided_at, r.comment = user, now(), text or ""
            append(s, head, kind=f"threshold.lift_{r.state}", actor=user, rows=[r], dataset_id=r.dataset_id,
                   data={"lift_request": r.id, "comment": text or ""})
            return r
        return self._write(fn)

    def lift_info(self, request_id: Any) -> LiftRequest:
        """The lift request with id ``request_id`` (NotFound if none)."""
        with self.read() as s:
            return self._lift(s, request_id)

    def lift_requests(self, dataset: str | None = None, state: str | None = "pending") -> list[LiftRequest]:
        """Lift requests by id (the pending ones by default; ``state=None``: all), optionally
        of one ``dataset``."""
        return self._listed(LiftRequest, dataset, state)
