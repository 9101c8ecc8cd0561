"""The append-only, hash-chained event log and its verification.

Every change to the ledger appends one event in the same transaction:

    hash_n = SHA-256( hash_{n-1} || canonical_json(seq, at, kind, actor, dataset_id,
                                                   release_id, payload) ),   hash_0 = 0...0

and the payload carries a *snapshot* of every row the change wrote (for approvals, the
SHA-256 of the stored report bytes; for users, the SHA-256 of the password hash, never a
password). :func:`verify` walks the chain, then compares every row with the snapshot of the
last event that wrote it and every stored report with its digest, and names the first
broken event: an edited row, an edited or deleted event, or a cut tail is found.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from fdpkit.ledger.models import Approval, ChainHead, Dataset, Event, Release, Threshold, User

GENESIS = "0" * 64


def utc(value: dt.datetime | None) -> dt.datetime | None:
    """Aware UTC datetime (SQLite returns naive datetimes that were stored as UTC)."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)


def now() -> dt.datetime:
    """The current time as an aware UTC datetime (every ledger timestamp)."""
    return dt.datetime.now(dt.timezone.utc)


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return utc(value).isoformat(timespec="microseconds")
    if isinstance(value, float):
        return repr(value) if not math.isfinite(value) else value
    if isinstance(value, bytes):
        return hashlib.sha256(value).hexdigest()
    return value


def canonical(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, datetimes as UTC ISO strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain)


def event_hash(prev_hash: str, seq: int, at: dt.datetime, kind: str, actor: str,
               dataset_id: int | None, release_id: int | None, payload: str) -> str:
    """The SHA-256 hex digest chaining one event to the previous one.

    ``hash = sha256(prev_hash + canonical JSON of (seq, at, kind, actor, dataset_id,
    release_id, payload))``, so editing any field of any event, or deleting one, breaks
    every later hash (what :meth:`fdpkit.ledger.Ledger.verify` checks).

    Parameters
    ----------
    prev_hash : str
        The previous event's hash (the genesis value for the first event).
    seq, at, kind, actor, dataset_id, release_id, payload
        The event's fields as stored; ``payload`` is its canonical JSON text.

    Returns
    -------
    str
        64 lowercase hex characters.
    """
    body = canonical({"seq": seq, "at": _plain(at), "kind": kind, "actor": actor,
                      "dataset_id": dataset_id, "release_id": release_id, "payload": payload})
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- snapshots
_SNAPSHOT_FIELDS = {
    Dataset: ("id", "name", "unit", "relation", "description", "created_at"),
    Release: ("id", "dataset_id", "title", "purpose", "spec", "analyst", "state", "created_at",
              "approved_at", "released_at", "closed_at", "gaussian_mu", "epsilon_ref",
              "override_reason", "override_by"),
    Threshold: ("id", "dataset_id", "metric", "level", "value", "delta", "fpr"),
    Approval: ("id", "release_id", "approver", "decision", "comment", "created_at",
               "report_json_sha256", "report_pdf_sha256"),
    User: ("id", "name", "role", "active", "created_at"),
}
_TABLE = {Dataset: "datasets", Release: "releases", Threshold: "thresholds", Approval: "approvals",
          User: "users"}
_MODEL = {v: k for k, v in _TABLE.items()}


def snapshot(row: Any) -> dict[str, Any]:
    """The row's fields as plain JSON values (the password hash only as its digest)."""
    out = {f: _plain(getattr(row, f)) for f in _SNAPSHOT_FIELDS[type(row)]}
    if isinstance(row, User):
        out["password_hash_sha256"] = hashlib.sha256(row.password_hash.encode()).hexdigest()
    return out


def append(session: Session, head: Any, *, kind: str, actor: str, rows: list[Any] = (),
           deleted: list[tuple[str, int]] = (), dataset_id: int | None = None,
           release_id: int | None = None, data: dict | None = None) -> Event:
    """Append one event after ``head`` (an object with ``seq`` and ``hash``, advanced here;
    the caller's transaction holds the chain-head lock and stores the head). ``rows`` are
    flushed first so that their ids and values are final; their snapshots go in the payload."""
    session.flush()
    payload = canonical({
        "rows": [{"table": _TABLE[type(r)], "row": snapshot(r)} for r in rows],
        "deleted": [{"table": t, "id": i} for t, i in deleted],
        "data": data or {},
    })
    at = now()
    seq = head.seq + 1
    h = event_hash(head.hash, seq, at, kind, actor, dataset_id, release_id, payload)
    ev = Event(seq=seq, at=at, kind=kind, actor=actor, dataset_id=dataset_id, release_id=release_id,
               payload=payload, prev_hash=head.hash, hash=h)
    session.add(ev)
    head.seq, head.hash = seq, h
    return ev


# --------------------------------------------------------------------------- verify
@dataclass(frozen=True)
class VerifyResult:
    """Outcome of :func:`verify`: ``ok``, how many events were checked, and the first broken
    event (its seq and a reason) when not ok."""

    ok: bool
    events: int
    broken_seq: int | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"ok": self.ok, "events": self.events, "broken_seq": self.broken_seq, "reason": self.reason}


def verify(session: Session) -> VerifyResult:
    """Check the chain, the head, every row against its last snapshot, and report digests."""
    prev, expected_seq, n = GENESIS, 1, 0
    last_snap: dict[tuple[str, int], tuple[int, dict | None]] = {}
    problems: list[tuple[int, str]] = []
    for ev in session.execute(select(Event).order_by(Event.seq)).scalars():
        n += 1
        if ev.seq != expected_seq:
            return VerifyResult(False, n, expected_seq,
                                f"event {expected_seq} is missing (next stored event is {ev.seq})")
        if ev.prev_hash != prev:
            return VerifyResult(False, n, ev.seq, f"event {ev.seq} does not link to event {ev.seq - 1}")
        h = event_hash(ev.prev_hash, ev.seq, utc(ev.at), ev.kind, ev.actor, ev.dataset_id,
                       ev.release_id, ev.payload)
        if h != ev.hash:
            return VerifyResult(False, n, ev.seq, f"event {ev.seq} ({ev.kind}) was modified: its hash "
                                "does not match its content")
        try:
            payload = json.loads(ev.payload)
        except json.JSONDecodeError:
            return VerifyResult(False, n, ev.seq, f"event {ev.seq} has an unreadable payload")
        for item in payload.get("rows", []):
            last_snap[(item["table"], item["row"]["id"])] = (ev.seq, item["row"])
        for item in payload.get("deleted", []):
            last_snap[(item["table"], item["id"])] = (ev.seq, None)
        prev, expected_seq = ev.hash, expected_seq + 1
    head = session.get(ChainHead, 1)
    if head is None or head.seq != expected_seq - 1 or head.hash != prev:
        missing = expected_seq if head is None or head.seq >= expected_seq else head.seq + 1
        return VerifyResult(False, n, missing, f"the chain ends at event {expected_seq - 1} but its head "
                            f"says {head.seq if head else '?'}: events were deleted from the end")
    seen: set[tuple[str, int]] = set()
    for model, table in _TABLE.items():
        for row in session.execute(select(model)).scalars():
            key = (table, row.id)
            seen.add(key)
            seq, snap = last_snap.get(key, (None, None))
            if seq is None:
                problems.append((n + 1, f"row {table}/{row.id} was written outside the event log"))
                continue
            actual = json.loads(canonical(snapshot(row)))
            if snap is None or actual != snap:
                diff = sorted(k for k in set(actual) | set(snap or {})
                              if (snap or {}).get(k) != actual.get(k))
                problems.append((seq, f"row {table}/{row.id} differs from event {seq} in "
                                      f"{', '.join(diff) or 'existence'}"))
            if isinstance(row, Approval):
                for fmt in ("json", "pdf"):
                    data, digest = getattr(row, f"report_{fmt}"), getattr(row, f"report_{fmt}_sha256")
                    if (data is None) != (digest is None) or (
                            data is not None and hashlib.sha256(data).hexdigest() != digest):
                        problems.append((seq, f"the {fmt.upper()} report of approval {row.id} does not "
                                              "match its SHA-256"))
    for key, (seq, snap) in last_snap.items():
        if snap is not None and key not in seen:
            problems.append((seq, f"row {key[0]}/{key[1]} written by event {seq} was deleted"))
    if problems:
        seq, reason = min(problems)
        return VerifyResult(False, n, seq, reason)
    return VerifyResult(True, n)
