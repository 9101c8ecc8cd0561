"""What the ledger hands back besides rows: a dataset's :class:`Status`, the :class:`Check`
of a proposed release, and rows and events as plain dicts (no database access here)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fdpkit.ledger.chain import canonical
from fdpkit.ledger.models import Dataset, Event, LiftRequest, Release
from fdpkit.ledger.totals import DELTA_REF, Crossing, ThresholdSpec, Total


@dataclass(frozen=True)
class Status:
    """A dataset's running totals: released, and released plus approved.
    ``relation_notes``: one line per released release accounted under a relation the dataset's
    declared one does not cover (:func:`fdpkit.ledger.rules.relation_notes`): the total counts
    it, but its figures may not bound the declared relation."""

    dataset: Dataset
    counts: dict[str, int]
    released: Total
    with_approved: Total
    thresholds: list[Crossing]
    alerts: list[Event] = field(default_factory=list)
    relation_notes: list[str] = field(default_factory=list)

    @property
    def exceeded(self) -> list[Crossing]:
        """The thresholds the released total exceeds now."""
        return [c for c in self.thresholds if c.exceeded]

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        r = self.released
        return {"dataset": self.dataset.name, "unit": self.dataset.unit, "relation": self.dataset.relation_name,
                "released_count": self.counts.get("released", 0), "counts": self.counts,
                "mu": r.mu, "regret": r.regret, "epsilon": r.epsilon, "delta": DELTA_REF,
                "method": r.method, "bound": r.bound, "epsilon_sum": r.epsilon_sum, "delta_sum": r.delta_sum,
                "released": r.to_dict(), "with_approved": self.with_approved.to_dict(),
                "thresholds": [c.to_dict() for c in self.thresholds],
                "exceeded": [c.message() for c in self.exceeded],
                "alerts": [event_dict(e) for e in self.alerts], "relation_notes": list(self.relation_notes)}


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


def alert_text(e: Event) -> str:
    """A logged alert as a sentence that says when it was true: the release that crossed the
    threshold and the time, then the message with the total of that moment ("logged when
    release 1 was released, 2026-11-27 16:11 UTC: notice threshold exceeded: ε 5.106 > 2 at
    δ = 1e-05"). Without them, an old total (5.106) read as a second current one beside what
    the released total exceeds now (5.844)."""
    message = json.loads(e.payload).get("data", {}).get("message", "")
    when = e.at.strftime("%Y-%m-%d %H:%M UTC") if e.at is not None else "at an unknown time"
    which = f"when release {e.release_id} was released, " if e.release_id is not None else ""
    return f"logged {which}{when}: {message}"


def lift_dict(r: LiftRequest, dataset: str | None = None) -> dict[str, Any]:
    """A lift request as plain JSON data: its fields, the change and the threshold it starts
    from in words, timestamps as UTC ISO strings (``dataset``: its name, when known)."""
    out = {k: getattr(r, k) for k in ("id", "dataset_id", "metric", "level", "action", "value", "delta", "fpr",
                                      "basis_value", "basis_delta", "basis_fpr", "reason", "requested_by", "state",
                                      "decided_by", "comment")}
    out["from"] = ThresholdSpec(r.metric, r.level, r.basis_value, r.basis_delta, r.basis_fpr).describe()
    out["change"] = ("remove" if r.action == "remove"
                     else ThresholdSpec(r.metric, r.level, r.value, r.delta, r.fpr).describe())
    for k in ("created_at", "decided_at"):
        v = getattr(r, k)
        out[k] = None if v is None else json.loads(canonical(v))
    if dataset is not None:
        out["dataset"] = dataset
    return out
