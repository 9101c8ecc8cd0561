"""The ledger's operations: datasets, thresholds, releases through their states, approvals
with their reports, running totals and what a proposed release would do to them.

Every write is one transaction that locks the chain head, checks its preconditions, writes
its rows and appends one event per change (``fdpkit.ledger.chain``): a failed check raises
:class:`LedgerError` (a ``ValueError``) and writes nothing. Expensive work (privacy
reports, compositions of a new mechanism) is done before the transaction where possible.
The release life cycle is in :mod:`fdpkit.ledger.lifecycle`, the totals and checks in
:mod:`fdpkit.ledger.budget`.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any, Iterator

from sqlalchemy import select
from sqlalchemy.orm import Session

from fdpkit.ledger import db
from fdpkit.ledger.chain import Anchor, VerifyResult, append, ledger_key, now, verify
from fdpkit.ledger.lifecycle import ReleaseLifecycle
from fdpkit.ledger.lifts import ThresholdLifts
from fdpkit.ledger.models import Approval, ChainHead, Dataset, Event, Release, Threshold, User
from fdpkit.ledger.prepared import (  # noqa: F401 - parse_mechanism, Prepared are public here
    DEFAULT_BUDGET, Prepared, parse_mechanism, prepare, state_digest,
)
from fdpkit.ledger.rules import (  # noqa: F401 - the errors and limits are public here
    DATASET_NAME, MAX_ID, MAX_NAME, MAX_TEXT, MAX_TITLE, RELATIONS, SETTING_EVENT, LedgerError, NeedsSecondPerson,
    NotFound,
    _check_order, _line, _person, _text,
)
from fdpkit.ledger.totals import (  # noqa: F401 - public here
    DEFAULT_THRESHOLDS, DELTA_REF, ThresholdSpec, Total, check_threshold,
)
from fdpkit.ledger.views import Check, Status, alert_text, event_dict, lift_dict, release_dict  # noqa: F401 - public here
from fdpkit.vocabulary import ADD_REMOVE, canonical_relation


@dataclass
class Head:
    """The chain head as seen inside one write transaction (and the chain key, if any)."""

    seq: int
    hash: str
    key: bytes | None = None


class Ledger(ReleaseLifecycle, ThresholdLifts):
    """A privacy-budget ledger at a SQLAlchemy URL (see :func:`fdpkit.ledger.open_ledger`).

    Its release life cycle lives in :mod:`fdpkit.ledger.lifecycle` and its totals and checks
    in :mod:`fdpkit.ledger.budget`, its thresholds and lift requests in
    :mod:`fdpkit.ledger.lifts` (mixins); this module holds the sessions, lookups,
    governance and datasets."""

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
        return self._listed(Release, dataset, state)

    def _listed(self, model: Any, dataset: str | None, state: str | None) -> list:
        """Rows of ``model`` (a table with ``dataset_id`` and ``state``) by id, optionally of one
        ``dataset`` and in one ``state``."""
        with self.read() as s:
            q = select(model).order_by(model.id)
            if dataset is not None:
                q = q.where(model.dataset_id == self._dataset(s, dataset).id)
            if state is not None:
                q = q.where(model.state == state)
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
        user = _person("user", user)
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
        (ε 2 / 4 / 8 at δ = 1e-5: notice / warning / hard). ``relation`` is
        "add-remove" or "replace-one" (the old spelling "add-or-remove" is accepted and
        stored as "add-remove")."""
        name, unit, user = _text("name", name), _line("unit", unit), _person("user", user)
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
