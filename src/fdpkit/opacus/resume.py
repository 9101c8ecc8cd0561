r"""Resumed training runs: which steps of an accountant's history a ledger already holds.

Opacus's checkpoint (``PrivacyEngine.save_checkpoint``) restores the accountant's whole
history, so a run resumed from it carries the steps of the run before. When a
:class:`fdpkit.opacus.BudgetGuard` records a run it writes on the accountant (and so into
fdpkit's accountant state dict, key :data:`fdpkit.vocabulary.OPACUS_RECORDED_KEY`) which
part of the history went into which release::

    {"dataset": "mnist", "releases": [{"release": 7, "history": [[1.1, 0.004, 2000]]}, ...]}

A guard created on the resumed accountant reads it back: the leading releases that are
still *released*, in this ledger's dataset, with exactly the recorded mechanism, are already
in the dataset's released total, so their steps are neither counted again against the hard
limit nor recorded again (the later release holds only the new steps; DP-SGD's accounting
already assumes every iterate is published, so the release of the first T1 steps composed
with the release of the next T2 is the run of T1 + T2 steps, each step counted once). Any
other part (no marker, another dataset, a release proposed, rejected, withdrawn or unknown to
this ledger, a history that does not extend the recorded one) counts as not recorded: its
steps count against the limit and go into the new release, as for a run that never stopped
(pessimistic, never optimistic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fdpkit.mechanisms import dpsgd_from_opacus_history, mechanism_from_json
from fdpkit.vocabulary import OPACUS_RECORDED_KEY

Row = tuple[float, float, int]


def merged(history: Any) -> list[Row]:
    """``history`` as (sigma, q, steps) rows, adjacent rows of one (sigma, q) merged (as
    Opacus's accountants merge consecutive steps)."""
    out: list[Row] = []
    for nm, q, t in history:
        if out and out[-1][0] == nm and out[-1][1] == q:
            out[-1] = (nm, q, out[-1][2] + int(t))
        elif int(t) > 0:
            out.append((nm, q, int(t)))
    return out


def after_prefix(history: Any, prefix: Any) -> list[Row] | None:
    """The steps of ``history`` after its first steps ``prefix`` (rows), or None when
    ``history`` does not begin with ``prefix``."""
    rest, head = merged(history), merged(prefix)
    for i, (nm, q, t) in enumerate(head):
        if i >= len(rest) or rest[i][0] != nm or rest[i][1] != q or rest[i][2] < t:
            return None
        if rest[i][2] > t and i != len(head) - 1:
            return None
    if not head:
        return rest
    last = len(head) - 1
    left = rest[last][2] - head[last][2]
    return ([(rest[last][0], rest[last][1], left)] if left else []) + rest[last + 1:]


@dataclass
class Recorded:
    """What of an accountant's history a ledger's dataset already holds."""

    #: (release id, history rows) of the leading released parts, in order
    released: list[tuple[int, list[Row]]] = field(default_factory=list)
    #: ids of later parts still proposed or approved: the new release covers their steps
    pending: list[int] = field(default_factory=list)

    @property
    def prefix(self) -> list[Row]:
        """The steps already in the released total."""
        return merged([row for _, rows in self.released for row in rows])

    def marker(self, dataset: str, release_id: int, rows: list[Row]) -> dict[str, Any]:
        """The accountant's marker once ``rows`` are recorded as ``release_id``."""
        parts = [*self.released, (release_id, rows)]
        return {"dataset": dataset,
                "releases": [{"release": rid, "history": [list(r) for r in part]} for rid, part in parts]}


def _parts(marker: Any, dataset: str) -> list[tuple[int, list[Row]]]:
    if not isinstance(marker, dict) or marker.get("dataset") != dataset:
        return []
    parts = []
    try:
        for item in marker.get("releases", []):
            rows = [(float(nm), float(q), int(t)) for nm, q, t in item["history"]]
            parts.append((int(item["release"]), rows))
    except (TypeError, ValueError, KeyError):
        return []
    return parts


def recorded_in(ledger: Any, dataset: str, accountant: Any) -> Recorded:
    """What of ``accountant.history`` the ``ledger`` already holds for ``dataset`` (its marker,
    checked against the ledger's releases; see the module docs)."""
    parts = _parts(getattr(accountant, OPACUS_RECORDED_KEY, None), dataset)
    if not parts or after_prefix(accountant.history, [r for _, rows in parts for r in rows]) is None:
        return Recorded()
    try:
        dataset_id = ledger.dataset(dataset).id
    except ValueError:  # NotFound is a LedgerError (ValueError)
        return Recorded()
    out, open_ = Recorded(), True
    for rid, rows in parts:
        try:
            r = ledger.release_info(rid)
            same = r.dataset_id == dataset_id and mechanism_from_json(r.spec) == dpsgd_from_opacus_history(rows)
        except ValueError:
            same = False
        if not same:
            break
        if open_ and r.state == "released":
            out.released.append((rid, rows))
        else:
            open_ = False
            if r.state in ("proposed", "approved"):
                out.pending.append(rid)
    return out
