"""The ledger's operations: datasets, thresholds, releases through their states, approvals
with their reports, running totals and what a proposed release would do to them.

Every write is one transaction that locks the chain head, checks its preconditions, writes
its rows and appends one event per change (``fdpkit.ledger.chain``): a failed check raises
:class:`LedgerError` (a ``ValueError``) and writes nothing. Expensive work (privacy
reports, compositions of a new mechanism) is done before the transaction where possible.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterator

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from fdpkit.accounting import Composition, gaussian_mu
from fdpkit.convert import epsilon_for_delta as gdp_epsilon_for_delta
from fdpkit.ledger import db
from fdpkit.ledger.chain import VerifyResult, append, canonical, now, verify
from fdpkit.ledger.models import (
    Approval, ComposedState, Dataset, Event, Release, Threshold,
)
from fdpkit.ledger.totals import (
    DEFAULT_THRESHOLDS, DELTA_REF, Crossing, ThresholdSpec, Total, add_rows, check_threshold, crossings,
    newly_exceeded, read_total,
)
from fdpkit.mechanisms import Mechanism, mechanism_from_dict

RELATIONS = ("add-or-remove", "replace-one")


class LedgerError(ValueError):
    """Bad input or a forbidden state change; nothing was written."""


class NotFound(LedgerError):
    """An unknown dataset, release or user."""


#: Largest row id (SQL BIGINT); larger ids name no row.
MAX_ID = 2**63 - 1


def parse_mechanism(mechanism: Any) -> Mechanism:
    """A mechanism from a Mechanism, a spec dict or JSON text (the CLI/web specs)."""
    if isinstance(mechanism, (str, bytes)):
        try:
            mechanism = json.loads(mechanism)
        except json.JSONDecodeError as exc:
            raise LedgerError(f"mechanism is not valid JSON: {exc.msg}") from None
        except RecursionError:
            raise LedgerError("mechanism is nested too deeply") from None
    try:
        return mechanism_from_dict(mechanism)
    except ValueError as exc:
        raise LedgerError(str(exc)) from None


@dataclass(frozen=True)
class Prepared:
    """A mechanism checked and accounted before any transaction."""

    mechanism: Mechanism
    spec: str
    gaussian_mu: float | None
    epsilon_ref: float
    #: the mechanism's own composition state (None for the Gaussian family)
    alone: Composition | None = field(default=None, repr=False)

    def after(self, state: Composition) -> Composition:
        """``state`` followed by this mechanism (one composition at most)."""
        if self.alone is None:
            return Composition(state.count + 1, state.gaussian_mu_sq + self.gaussian_mu ** 2, state.pld,
                               state.discretization)
        return state.merge(self.alone)


@functools.lru_cache(maxsize=256)
def _gdp_epsilon_ref(mu: float) -> float:
    return float(gdp_epsilon_for_delta(mu, DELTA_REF))


def prepare(mechanism: Any) -> Prepared:
    """Parse and account a mechanism (its exact mu if Gaussian-family, its own epsilon at
    delta = 1e-5) before any transaction."""
    mech = parse_mechanism(mechanism)
    mu = gaussian_mu(mech)
    alone = None
    try:
        if mu is not None:
            eps = _gdp_epsilon_ref(mu)
        else:
            alone = Composition.empty().add([mech])
            eps = alone.epsilon_for_delta(DELTA_REF)
    except ValueError as exc:
        raise LedgerError(f"mechanism cannot be accounted: {exc}") from None
    return Prepared(mech, canonical(mech.to_dict()), mu, eps, alone)


def render_report(mechanism: Mechanism) -> tuple[bytes, bytes]:
    """The release's privacy report as it leaves the ledger: (JSON bytes, PDF bytes)."""
    from fdpkit.privacy import privacy_report
    from fdpkit.report import build_document, render_document

    doc = build_document(privacy_report(mechanism))
    return render_document(doc, "json"), render_document(doc, "pdf")


@dataclass(frozen=True)
class Status:
    """A dataset's running totals: released, and released plus approved."""

    dataset: Dataset
    counts: dict[str, int]
    released: Total
    with_approved: Total
    thresholds: list[Crossing]
    alerts: list[Event] = field(default_factory=list)

    @property
    def exceeded(self) -> list[Crossing]:
        """The thresholds the released total exceeds now."""
        return [c for c in self.thresholds if c.exceeded]

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        r = self.released
        return {"dataset": self.dataset.name, "unit": self.dataset.unit, "relation": self.dataset.relation,
                "released_count": self.counts.get("released", 0), "counts": self.counts,
                "mu": r.mu, "regret": r.regret, "epsilon": r.epsilon, "delta": DELTA_REF,
                "method": r.method, "bound": r.bound, "epsilon_sum": r.epsilon_sum, "delta_sum": r.delta_sum,
                "released": r.to_dict(), "with_approved": self.with_approved.to_dict(),
                "thresholds": [c.to_dict() for c in self.thresholds],
                "exceeded": [c.message() for c in self.exceeded],
                "alerts": [event_dict(e) for e in self.alerts]}


@dataclass(frozen=True)
class Check:
    """What one proposed release would do to the released total."""

    before: Total
    after: Total
    thresholds: list[Crossing]
    new_crossings: list[Crossing]

    @property
    def messages(self) -> list[str]:
        """One sentence per threshold the release would newly cross."""
        return [f"would exceed the {c.threshold.level} threshold: " + c.message().split(": ", 1)[1]
                for c in self.new_crossings]

    @property
    def blocked(self) -> bool:
        """Whether releasing would exceed a hard threshold (then it needs an override reason)."""
        return any(c.exceeded and c.threshold.level == "hard" for c in self.thresholds)

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"before": self.before.to_dict(), "after": self.after.to_dict(), "blocked": self.blocked,
                "messages": self.messages, "thresholds": [c.to_dict() for c in self.thresholds]}


def release_dict(r: Release) -> dict[str, Any]:
    """A release as plain JSON data (the CLI's and the web API's shape): its fields, the
    mechanism spec as a dict, and timestamps as UTC ISO strings."""
    out = {k: getattr(r, k) for k in ("id", "dataset_id", "title", "purpose", "analyst", "state",
                                      "gaussian_mu", "epsilon_ref", "override_reason", "override_by")}
    out["mechanism"] = json.loads(r.spec)
    for k in ("created_at", "approved_at", "released_at", "closed_at"):
        v = getattr(r, k)
        out[k] = None if v is None else json.loads(canonical(v))
    return out


def event_dict(e: Event) -> dict[str, Any]:
    """An event of the hash-chained log as plain JSON data: sequence number, time, kind,
    actor, dataset and release ids, the event's data and its hash."""
    payload = json.loads(e.payload)
    return {"seq": e.seq, "at": json.loads(canonical(e.at)), "kind": e.kind, "actor": e.actor,
            "dataset_id": e.dataset_id, "release_id": e.release_id, "data": payload.get("data", {}),
            "hash": e.hash}


def _spec_of(t: Threshold) -> ThresholdSpec:
    return ThresholdSpec(t.metric, t.level, t.value, t.delta, t.fpr)


@dataclass
class Head:
    """The chain head as seen inside one write transaction."""

    seq: int
    hash: str


class Ledger:
    """A privacy-budget ledger at a SQLAlchemy URL (see :func:`fdpkit.ledger.open_ledger`)."""

    def __init__(self, url: str | None = None, *, upgrade: bool = True) -> None:
        self.url = db.resolve_url(url)
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
            head = Head(row.seq, row.hash)
            result = fn(s, head)
            row.seq, row.hash = head.seq, head.hash
            return result
        return db.run_write(self.engine, run)

    # ------------------------------------------------------------------ lookups
    @staticmethod
    def _dataset(s: Session, name: str) -> Dataset:
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
                q = q.limit(int(limit))
            return list(reversed(s.execute(q).scalars().all()))

    def verify(self) -> VerifyResult:
        """Check the event chain and every row against it (see :mod:`fdpkit.ledger.chain`)."""
        with self.read() as s:
            return verify(s)

    # ------------------------------------------------------------------ datasets, thresholds
    def add_dataset(self, name: str, *, unit: str, user: str, relation: str = "add-or-remove",
                    description: str = "") -> Dataset:
        """Register a dataset with its privacy unit and the default thresholds
        (epsilon 2 / 4 / 8 at delta 1e-5: notice / warning / hard)."""
        name, unit, user = _text("name", name), _text("unit", unit), _text("user", user)
        if relation not in RELATIONS:
            raise LedgerError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")

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

    def propose(self, dataset: str, mechanism: Any, *, title: str, user: str, purpose: str = "") -> Release:
        """Record a proposed release (state ``proposed``)."""
        title, user = _text("title", title), _text("user", user)
        p = prepare(mechanism)
        return self._write(lambda s, head: self._propose_in(s, head, dataset, p, title, user, purpose or ""))

    def _approve_in(self, s: Session, head, r: Release, user: str, comment: str,
                    reports: tuple[bytes, bytes] | None) -> Approval:
        if r.state != "proposed":
            raise LedgerError(f"release {r.id} is {r.state}: only a proposed release can be approved")
        js, pdf = reports if reports is not None else (None, None)
        a = Approval(release_id=r.id, approver=user, decision="approved", comment=comment or "",
                     created_at=now(), report_json=js, report_pdf=pdf,
                     report_json_sha256=None if js is None else hashlib.sha256(js).hexdigest(),
                     report_pdf_sha256=None if pdf is None else hashlib.sha256(pdf).hexdigest())
        s.add(a)
        r.state, r.approved_at = "approved", a.created_at
        append(s, head, kind="release.approved", actor=user, rows=[r, a], dataset_id=r.dataset_id,
               release_id=r.id, data={"report_pdf_sha256": a.report_pdf_sha256,
                                      "report_json_sha256": a.report_json_sha256})
        return a

    def approve(self, release_id: Any, *, user: str, comment: str = "", report: bool = True) -> Approval:
        """Approve a proposed release, storing its privacy report (JSON and PDF bytes with their
        SHA-256). ``report=False`` stores none (bulk imports, tests)."""
        user = _text("user", user)
        r0 = self.release_info(release_id)
        if r0.state != "proposed":
            raise LedgerError(f"release {r0.id} is {r0.state}: only a proposed release can be approved")
        reports = render_report(mechanism_from_dict(json.loads(r0.spec))) if report else None
        return self._write(lambda s, head: self._approve_in(s, head, self._release(s, r0.id), user,
                                                            comment, reports))

    def _close(self, release_id: Any, user: str, comment: str, new_state: str, allowed: tuple[str, ...]):
        user = _text("user", user)

        def fn(s: Session, head):
            r = self._release(s, release_id)
            if r.state not in allowed:
                raise LedgerError(f"release {r.id} is {r.state}: only a {' or '.join(allowed)} release "
                                  f"can be {new_state}")
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
        """Reject a proposed release (logged with ``comment``); it can no longer be released."""
        return self._close(release_id, user, comment, "rejected", ("proposed",))

    def withdraw(self, release_id: Any, *, user: str, comment: str = "") -> Release:
        """Withdraw a proposed or approved release (logged with ``comment``)."""
        return self._close(release_id, user, comment, "withdrawn", ("proposed", "approved"))

    def _release_in(self, s: Session, head, r: Release, user: str, override_reason: str | None,
                    prepared: Prepared | None = None) -> Release:
        if r.state != "approved":
            raise LedgerError(f"release {r.id} is {r.state}: only an approved release can be released")
        state, ids, eps_sum = self._released_state(s, r.dataset_id)
        before = read_total(state, eps_sum)
        after_state = prepared.after(state) if prepared is not None else add_rows(state, [r])
        after = read_total(after_state, eps_sum + r.epsilon_ref)
        specs = [_spec_of(t) for t in s.execute(select(Threshold).where(Threshold.dataset_id == r.dataset_id)).scalars()]
        hard = [c for c in crossings(after, specs) if c.exceeded and c.threshold.level == "hard"]
        if hard and not (override_reason and override_reason.strip()):
            raise LedgerError(f"release {r.id} would exceed the hard limit ({hard[0].message().split(': ', 1)[1]}); "
                              "an approver must override it with a reason")
        r.state, r.released_at = "released", now()
        if hard:
            r.override_reason, r.override_by = override_reason.strip(), user
            append(s, head, kind="release.override", actor=user, dataset_id=r.dataset_id, release_id=r.id,
                   data={"reason": r.override_reason, "exceeded": [c.message() for c in hard]})
        append(s, head, kind="release.released", actor=user, rows=[r], dataset_id=r.dataset_id, release_id=r.id,
               data={"total": {"mu": after.mu, "epsilon": after.epsilon, "delta": DELTA_REF,
                               "epsilon_sum": after.epsilon_sum, "count": after.count}})
        for c in newly_exceeded(before, after, specs):
            append(s, head, kind="alert", actor=user, dataset_id=r.dataset_id, release_id=r.id,
                   data={"level": c.threshold.level, "metric": c.threshold.metric, "message": c.message(),
                         **c.to_dict()})
        self._save_state(s, r.dataset_id, after_state, sorted([*ids, r.id]), eps_sum + r.epsilon_ref)
        return r

    def release(self, release_id: Any, *, user: str, override_reason: str | None = None) -> Release:
        """Release an approved release. If the new total would exceed a hard limit the release
        is refused unless ``override_reason`` is given (logged as an override event)."""
        user = _text("user", user)
        return self._write(lambda s, head: self._release_in(s, head, self._release(s, release_id), user,
                                                            override_reason))

    def record(self, dataset: str, mechanism: Any, *, title: str, user: str, approver: str | None = None,
               purpose: str = "", report: bool = True, override_reason: str | None = None) -> Release:
        """Propose, approve (with its report) and release in ONE transaction: the whole
        release or nothing (imports of past releases, scripted pipelines)."""
        title, user = _text("title", title), _text("user", user)
        approver = _text("approver", approver or user)
        p = prepare(mechanism)
        reports = render_report(p.mechanism) if report else None

        def fn(s: Session, head):  # noqa: D401
            r = self._propose_in(s, head, dataset, p, title, user, purpose or "")
            self._approve_in(s, head, r, approver, "", reports)
            return self._release_in(s, head, r, approver, override_reason, p)
        return self._write(fn)

    # ------------------------------------------------------------------ totals
    def _released_state(self, s: Session, dataset_id: int) -> tuple[Composition, list[int], float]:
        """The composition of the dataset's released releases: the cached state plus the
        releases it does not cover yet (all of them when the cache does not match)."""
        current = set(s.execute(select(Release.id).where(Release.dataset_id == dataset_id,
                                                         Release.state == "released")).scalars())
        cache = s.get(ComposedState, dataset_id)
        state, ids, eps_sum = Composition.empty(), [], 0.0
        if cache is not None:
            cached_ids = json.loads(cache.release_ids)
            if set(cached_ids) <= current:
                try:
                    state, ids, eps_sum = Composition.from_bytes(cache.state), cached_ids, cache.epsilon_sum
                except ValueError:
                    pass
        missing = sorted(current - set(ids))
        if missing:
            cols = select(Release.id, Release.gaussian_mu, Release.spec, Release.epsilon_ref)
            if len(missing) > 500:
                rows = [r for r in s.execute(cols.where(Release.dataset_id == dataset_id,
                                                        Release.state == "released")) if r.id in set(missing)]
            else:
                rows = list(s.execute(cols.where(Release.id.in_(missing))))
            rows.sort(key=lambda r: r.id)
            state = add_rows(state, rows)
            eps_sum += sum(m.epsilon_ref for m in rows)
            ids = sorted(current)
        return state, ids, eps_sum

    @staticmethod
    def _save_state(s: Session, dataset_id: int, state: Composition, ids: list[int], eps_sum: float) -> None:
        cache = s.get(ComposedState, dataset_id)
        if cache is None:
            cache = ComposedState(dataset_id=dataset_id)
            s.add(cache)
        cache.release_ids, cache.epsilon_sum, cache.state = json.dumps(ids), eps_sum, state.to_bytes()

    def _refresh_cache(self, dataset_id: int, state: Composition, ids: list[int], eps_sum: float) -> None:
        try:
            db.run_write(self.engine, lambda s: self._save_state(s, dataset_id, state, ids, eps_sum))
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
            total.epsilon_at(dl)
        return total

    def check(self, dataset: str, mechanism: Any) -> Check:
        """What releasing ``mechanism`` would do to ``dataset``'s released total (about one
        composition, whatever the number of releases already recorded)."""
        p = prepare(mechanism)
        with self.read() as s:
            d = self._dataset(s, dataset)
            state, ids, eps_sum = self._released_state(s, d.id)
            specs = [_spec_of(t) for t in s.execute(select(Threshold).where(Threshold.dataset_id == d.id)).scalars()]
        deltas = [t.delta for t in specs if t.delta is not None]
        before = self._total(d.id, state, ids, eps_sum, deltas)
        after = read_total(p.after(state), eps_sum + p.epsilon_ref, deltas)
        return Check(before, after, crossings(after, specs), newly_exceeded(before, after, specs))

    def check_release(self, release_id: Any) -> Check:
        """What releasing ``release_id`` would do: the totals before and after, thresholds newly crossed, and whether a hard one blocks it."""
        r = self.release_info(release_id)
        with self.read() as s:
            name = s.get(Dataset, r.dataset_id).name
        return self.check(name, r.spec)


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise LedgerError(f"{name} must be a non-empty text, got {value!r}")
    return value.strip()
