"""The append-only, hash-chained event log and its verification.

Every change to the ledger appends one event in the same transaction:

    hash_n = SHA-256( hash_{n-1} || canonical_json(seq, at, kind, actor, dataset_id,
                                                   release_id, payload) ),   hash_0 = 0...0

and the payload carries a *snapshot* of every row the change wrote (for approvals, the
SHA-256 of the stored report bytes; for users, the SHA-256 of the password hash, never a
password). :func:`verify` walks the chain, then compares every row with the snapshot of the
last event that wrote it and every stored report with its digest, re-derives the released
totals from the chained release snapshots and compares them with what each
``release.released`` event recorded, and names the first broken event.

With a key (``FDPKIT_LEDGER_KEY``, set before the first event is written) the chain is
keyed: ``hash_n = HMAC-SHA256(key, hash_{n-1} || canonical_json(...))``, so nobody without
the key can re-hash a rewritten chain. An :class:`Anchor` (``seq:hash`` of an earlier head,
kept outside the database) pins the chain: :func:`verify` with it fails when that event is
gone (the chain was cut) or has another hash (the chain was rewritten).

What it cannot see: an attacker with write access to the database who rewrites the chain
from some event on and re-hashes every later event and the head is detected only with the
key (which they must not hold) or an anchor at or after the rewritten event; deleting the
newest events and rewinding the head is detected only with an anchor past the cut.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from fdpkit.ledger.models import Approval, ChainHead, Dataset, Event, LiftRequest, Release, Threshold, User
from fdpkit.accounting import Composition
from fdpkit.ledger.rules import relation_notes
from fdpkit.ledger.totals import DELTA_REF, add_rows

GENESIS = "0" * 64
#: Environment variable holding the key of a keyed (HMAC-SHA256) chain.
KEY_ENV = "FDPKIT_LEDGER_KEY"
#: Relative tolerance of re-derived totals against the recorded ones (PLD compositions
#: composed in another grouping differ in the last digits).
TOTAL_RTOL = 1e-6


def ledger_key(key: str | bytes | None = None) -> bytes | None:
    """The chain key: ``key`` if given, else ``FDPKIT_LEDGER_KEY``, else None (unkeyed)."""
    if key is None:
        key = os.environ.get(KEY_ENV) or None
    if key is None:
        return None
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, bytes) or not key:
        raise ValueError(f"key must be a non-empty text or bytes, got {key!r}")
    return key


@dataclass(frozen=True)
class Anchor:
    """A chain head kept elsewhere: the ``seq`` and ``hash`` of one event (``seq`` 0 is the
    empty chain). ``str(anchor)`` is ``"SEQ:HASH"``, the form :meth:`parse` reads."""

    seq: int
    hash: str

    def __str__(self) -> str:
        return f"{self.seq}:{self.hash}"

    @classmethod
    def parse(cls, anchor: Any) -> "Anchor":
        """An anchor from an Anchor, an object with ``seq``/``hash``, a ``(seq, hash)`` pair
        or the text ``"SEQ:HASH"``; ValueError naming ``anchor`` otherwise."""
        if isinstance(anchor, Anchor):
            return anchor
        if isinstance(anchor, str):
            seq, sep, h = anchor.strip().partition(":")
        elif isinstance(anchor, (tuple, list)) and len(anchor) == 2:
            seq, h, sep = anchor[0], anchor[1], ":"
        elif hasattr(anchor, "seq") and hasattr(anchor, "hash"):
            seq, h, sep = anchor.seq, anchor.hash, ":"
        else:
            raise ValueError(f"anchor must be SEQ:HASH, got {anchor!r}")
        try:
            n = int(seq)
        except (TypeError, ValueError):
            n = -1
        h = str(h).strip().lower()
        if not sep or n < 0 or len(h) != 64 or any(c not in "0123456789abcdef" for c in h):
            raise ValueError(f"anchor must be SEQ:HASH (a whole number >= 0 and 64 hex digits), got {anchor!r}")
        return cls(n, h)


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
               dataset_id: int | None, release_id: int | None, payload: str, key: bytes | None = None) -> str:
    """The SHA-256 hex digest chaining one event to the previous one.

    ``hash = sha256(prev_hash + canonical JSON of (seq, at, kind, actor, dataset_id,
    release_id, payload))`` (HMAC-SHA256 under ``key`` for a keyed chain), so editing any field of any event, or deleting one, breaks
    every later hash (what :meth:`fdpkit.ledger.Ledger.verify` checks).

    Parameters
    ----------
    prev_hash : str
        The previous event's hash (the genesis value for the first event).
    seq, at, kind, actor, dataset_id, release_id, payload
        The event's fields as stored; ``payload`` is its canonical JSON text.
    key : bytes, optional
        The chain's HMAC key (``FDPKIT_LEDGER_KEY``); None for the unkeyed chain.

    Returns
    -------
    str
        64 lowercase hex characters.
    """
    body = canonical({"seq": seq, "at": _plain(at), "kind": kind, "actor": actor,
                      "dataset_id": dataset_id, "release_id": release_id, "payload": payload})
    msg = (prev_hash + body).encode("utf-8")
    if key is not None:
        return hmac.new(key, msg, hashlib.sha256).hexdigest()
    return hashlib.sha256(msg).hexdigest()


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
    LiftRequest: ("id", "dataset_id", "metric", "level", "action", "value", "delta", "fpr", "basis_value",
                  "basis_delta", "basis_fpr", "reason", "requested_by", "created_at", "state", "decided_by",
                  "decided_at", "comment"),
}
_TABLE = {Dataset: "datasets", Release: "releases", Threshold: "thresholds", Approval: "approvals",
          User: "users", LiftRequest: "lift_requests"}
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
    """Append one event after ``head`` (an object with ``seq``, ``hash`` and optionally the
    chain ``key``, advanced here; the caller's transaction holds the chain-head lock and
    stores the head). ``rows`` are flushed first so that their ids and values are final;
    their snapshots go in the payload."""
    session.flush()
    payload = canonical({
        "rows": [{"table": _TABLE[type(r)], "row": snapshot(r)} for r in rows],
        "deleted": [{"table": t, "id": i} for t, i in deleted],
        "data": data or {},
    })
    at = now()
    seq = head.seq + 1
    h = event_hash(head.hash, seq, at, kind, actor, dataset_id, release_id, payload, getattr(head, "key", None))
    ev = Event(seq=seq, at=at, kind=kind, actor=actor, dataset_id=dataset_id, release_id=release_id,
               payload=payload, prev_hash=head.hash, hash=h)
    session.add(ev)
    head.seq, head.hash = seq, h
    return ev


# --------------------------------------------------------------------------- verify
@dataclass(frozen=True)
class VerifyResult:
    """Outcome of :func:`verify`: ``ok``, how many events were checked, and the first broken
    event (its seq and a reason) when not ok; ``head`` is the chain head that was verified
    (keep ``str(head)`` elsewhere and pass it back as ``anchor``), ``keyed`` whether the
    chain was checked with a key and ``anchor`` the anchor it was checked against.
    ``findings``: what an intact chain holds that its totals cannot vouch for (a released
    release accounted under a relation its dataset's declared one does not cover, written by
    an fdpkit older than that rule; :func:`fdpkit.ledger.rules.relation_notes`), one line each.
    """

    ok: bool
    events: int
    broken_seq: int | None = None
    reason: str = ""
    head: Anchor | None = None
    keyed: bool = False
    anchor: Anchor | None = field(default=None)
    findings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"ok": self.ok, "events": self.events, "broken_seq": self.broken_seq, "reason": self.reason,
                "head": None if self.head is None else str(self.head), "keyed": self.keyed,
                "anchor": None if self.anchor is None else str(self.anchor), "findings": list(self.findings)}


def verify(session: Session, anchor: Any = None, key: bytes | None = None) -> VerifyResult:
    """Check the chain (keyed with ``key``), the head, the ``anchor`` (an earlier head that
    must still be in the chain), every row against its last snapshot, report digests, and
    the released totals re-derived from the chained release snapshots."""
    anchor = None if anchor is None else Anchor.parse(anchor)
    prev, expected_seq, n = GENESIS, 1, 0
    last_snap: dict[tuple[str, int], tuple[int, dict | None]] = {}
    released: list[tuple[int, dict, dict]] = []  # (seq, release snapshot, recorded total)
    problems: list[tuple[int, str]] = []
    anchored_hash = GENESIS if anchor is not None and anchor.seq == 0 else None

    def result(ok: bool, seq: int | None = None, reason: str = "") -> VerifyResult:
        return VerifyResult(ok, n, seq, reason, Anchor(expected_seq - 1, prev) if ok else None,
                            key is not None, anchor, tuple(_relation_findings(last_snap)) if ok else ())

    for ev in session.execute(select(Event).order_by(Event.seq)).scalars():
        n += 1
        if ev.seq != expected_seq:
            return result(False, expected_seq, f"event {expected_seq} is missing (next stored event is {ev.seq})")
        if ev.prev_hash != prev:
            return result(False, ev.seq, f"event {ev.seq} does not link to event {ev.seq - 1}")
        h = event_hash(ev.prev_hash, ev.seq, utc(ev.at), ev.kind, ev.actor, ev.dataset_id,
                       ev.release_id, ev.payload, key)
        if h != ev.hash:
            hint = ""
            if ev.seq == 1:
                other = event_hash(ev.prev_hash, ev.seq, utc(ev.at), ev.kind, ev.actor, ev.dataset_id,
                                   ev.release_id, ev.payload, None)
                if key is not None and other == ev.hash:
                    hint = f" (the chain is not keyed; unset {KEY_ENV} to verify it)"
                elif key is None:
                    hint = f" (a keyed chain needs {KEY_ENV})"
            return result(False, ev.seq, f"event {ev.seq} ({ev.kind}) was modified: its hash does not match "
                                         f"its content{hint}")
        try:
            payload = json.loads(ev.payload)
        except json.JSONDecodeError:
            return result(False, ev.seq, f"event {ev.seq} has an unreadable payload")
        for item in payload.get("rows", []):
            last_snap[(item["table"], item["row"]["id"])] = (ev.seq, item["row"])
            if ev.kind == "release.released" and item["table"] == "releases":
                released.append((ev.seq, item["row"], (payload.get("data") or {}).get("total") or {}))
        for item in payload.get("deleted", []):
            last_snap[(item["table"], item["id"])] = (ev.seq, None)
        prev, expected_seq = ev.hash, expected_seq + 1
        if anchor is not None and ev.seq == anchor.seq:
            anchored_hash = ev.hash
    head = session.get(ChainHead, 1)
    if head is None or head.seq != expected_seq - 1 or head.hash != prev:
        missing = expected_seq if head is None or head.seq >= expected_seq else head.seq + 1
        return result(False, missing, f"the chain ends at event {expected_seq - 1} but its head "
                      f"says {head.seq if head else '?'}: events were deleted from the end")
    if anchor is not None:
        if anchor.seq > expected_seq - 1:
            return result(False, expected_seq, f"the chain ends at event {expected_seq - 1}, before the anchor "
                          f"(event {anchor.seq}): events were deleted from the end")
        if anchored_hash != anchor.hash:
            return result(False, anchor.seq, f"event {anchor.seq} no longer has the anchored hash: the chain "
                          "was rewritten up to there")
    seen: set[tuple[str, int]] = set()
    for model, table in _TABLE.items():
        for row in session.execute(select(model)).scalars():
            key_ = (table, row.id)
            seen.add(key_)
            seq, snap = last_snap.get(key_, (None, None))
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
    for key_, (seq, snap) in last_snap.items():
        if snap is not None and key_ not in seen:
            problems.append((seq, f"row {key_[0]}/{key_[1]} written by event {seq} was deleted"))
    problems.extend(_total_problems(released))
    if problems:
        seq, reason = min(problems)
        return result(False, seq, reason)
    return result(True)


def _relation_findings(last_snap: dict[tuple[str, int], tuple[int, dict | None]]) -> list[str]:
    """:func:`~fdpkit.ledger.rules.relation_notes` of every dataset, read from the chained
    snapshots (the rows as the chain vouches for them)."""
    released: dict[int, list[tuple[int, str]]] = {}
    for (table, rid), (_, snap) in sorted(last_snap.items()):
        if table == "releases" and snap is not None and snap.get("state") == "released":
            released.setdefault(snap.get("dataset_id"), []).append((rid, str(snap.get("spec") or "")))
    out: list[str] = []
    for did, items in sorted(released.items()):
        d = (last_snap.get(("datasets", did)) or (0, None))[1] or {}
        out += relation_notes(str(d.get("name", did)), str(d.get("relation") or ""), items)
    return out


def _close(a: float, b: Any) -> bool:
    return isinstance(b, (int, float)) and math.isclose(a, float(b), rel_tol=TOTAL_RTOL, abs_tol=1e-12)


def _total_problems(released: list[tuple[int, dict, dict]]) -> list[tuple[int, str]]:
    """Re-derive each dataset's released total from the chained release snapshots, in
    release order, and compare it with the total each ``release.released`` event recorded:
    count and epsilon sum at every event, mu at every event of a Gaussian-family total,
    and the composed epsilon at delta 1e-5 of each dataset's last release (one PLD
    composition per non-Gaussian release)."""
    out: list[tuple[int, str]] = []
    by_dataset: dict[int, list[tuple[int, dict, dict]]] = {}
    for item in released:
        by_dataset.setdefault(item[1].get("dataset_id"), []).append(item)
    for items in by_dataset.values():
        count, eps_sum, mu_sq, gaussian = 0, 0.0, 0.0, True
        for seq, row, total in items:
            count += 1
            eps_sum += float(row.get("epsilon_ref") or 0.0)
            if row.get("gaussian_mu") is None:
                gaussian = False
            else:
                mu_sq += float(row["gaussian_mu"]) ** 2
            if not total:
                continue  # written before totals were recorded
            bad = [k for k, v in (("count", total.get("count") == count),
                                  ("epsilon_sum", _close(eps_sum, total.get("epsilon_sum"))),
                                  ("mu", not gaussian or _close(math.sqrt(mu_sq), total.get("mu")))) if not v]
            if bad:
                out.append((seq, f"event {seq} records a released total that the chained releases do not "
                                 f"give ({', '.join(bad)})"))
        seq, _, total = items[-1]
        if not gaussian and total and not any(s == seq for s, _ in out):
            rows = [_Row(r) for _, r, _ in items]
            try:
                eps = add_rows(Composition.empty(), rows).epsilon_for_delta(DELTA_REF)
            except (ValueError, KeyError, TypeError, IndexError):
                out.append((seq, f"the releases chained up to event {seq} cannot be composed again"))
                continue
            if not (_close(eps, total.get("epsilon")) or abs(eps - float(total.get("epsilon") or 0)) < 1e-3 * max(1, eps)):
                out.append((seq, f"event {seq} records a released epsilon that the chained releases do not give "
                                 f"({total.get('epsilon')!r}, re-derived {eps!r})"))
    return out


class _Row:
    """A release snapshot read as a row (``gaussian_mu``, ``spec``) for :func:`add_rows`."""

    def __init__(self, snap: dict) -> None:
        self.gaussian_mu, self.spec = snap.get("gaussian_mu"), snap.get("spec")
