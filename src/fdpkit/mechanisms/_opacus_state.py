"""An Opacus accountant's saved state as fdpkit reads it, without torch: the history of a
``state_dict`` (or of a ``PrivacyEngine.save_checkpoint`` checkpoint holding one), refused
where fdpkit's accountant recorded that the run's loader did not sample with Poisson. One
reader for :func:`fdpkit.opacus.history_from_state` and the CLI's ``--opacus-history`` and
``--from-opacus`` files; :func:`fdpkit.dpsgd_from_opacus_history` validates the rows.

Resumed training runs: which steps of an accountant's history a ledger already holds.
Opacus's checkpoint (``PrivacyEngine.save_checkpoint``) restores the accountant's whole
history, so a run resumed from it carries the steps of the run before. When a
:class:`fdpkit.opacus.BudgetGuard` records a run it writes on the accountant (and so into
fdpkit's accountant state dict, key :data:`fdpkit.vocabulary.OPACUS_RECORDED_KEY`) which
part of the history went into which release::

    {"dataset": "mnist", "releases": [{"release": 7, "history": [[1.1, 0.004, 2000]]}, ...]}

:func:`recorded_in` reads it back against a ledger (the guard of the resumed run, and
``fdpkit ledger propose/check --from-opacus``): the leading releases that are still
*released*, in this ledger's dataset, with exactly the recorded mechanism, are already in the
dataset's released total, so their steps are neither counted again against the hard limit
nor recorded again (the later release holds only the new steps; DP-SGD's accounting already
assumes every iterate is published, so the release of the first T1 steps composed with the
release of the next T2 is the run of T1 + T2 steps, each step counted once). Any other part
(no marker, another dataset, a release proposed, rejected, withdrawn or unknown to this
ledger, a history that does not extend the recorded one) counts as not recorded: its steps
count against the limit and go into the new release, as for a run that never stopped
(pessimistic, never optimistic). The ledger is read through ``ledger.dataset(name).id`` and
``ledger.release_info(id)`` (``dataset_id``, ``state``, ``spec``) only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fdpkit.errors import ParameterError
from fdpkit.mechanisms.training import dpsgd_from_opacus_history
from fdpkit.vocabulary import OPACUS_RECORDED_KEY, OPACUS_SAMPLING_KEY

#: Opacus accountants whose ``history`` has the same meaning (and can be loaded).
COMPATIBLE = ("fdpkit", "rdp", "prv", "gdp")


def refuse_non_poisson_state(state: Mapping, what: str) -> None:
    """Refuse an Opacus accountant state dict that fdpkit's accountant saved from a run whose
    loader did not sample with Poisson (its :data:`fdpkit.vocabulary.OPACUS_SAMPLING_KEY`):
    its history read as Poisson steps would understate the run's privacy loss (a shuffled
    run of sigma 1, q 0.05, 80 steps: Poisson's epsilon 3.2 where its own accounting certifies
    15.5). ``what`` names the file or object in the message."""
    scheme = state.get(OPACUS_SAMPLING_KEY)
    if scheme in (None, "poisson"):
        return
    raise ParameterError(f"{what} was saved from a run whose loader sampled {scheme!r} (make_private with "
                         "poisson_sampling=False), not Poisson: its history alone would understate the run's privacy "
                         "loss; account the batches that ran (fdpkit.opacus.privacy_report(engine, data_loader), or "
                         "fdpkit report dpsgd --sampling shuffled with the batch and dataset size)", "history")


def state_history(obj: Any, what: str) -> Any:
    """The history in ``obj``: an accountant ``state_dict`` (``{"history": ..., "mechanism":
    ...}``), a checkpoint with ``privacy_accountant_state_dict``, or the history itself (a list
    of (noise_multiplier, sample_rate, steps); lists of lists become lists of tuples). ``what``
    names ``obj`` in the errors; the rows are not validated here."""
    if isinstance(obj, Mapping):
        if "privacy_accountant_state_dict" in obj:
            obj = obj["privacy_accountant_state_dict"]
        if not isinstance(obj, Mapping) or "history" not in obj:
            raise ValueError(f"{what} holds no accountant history: expected a state_dict with 'history', "
                             "a checkpoint with 'privacy_accountant_state_dict', or a list of "
                             "(noise_multiplier, sample_rate, steps)")
        if "mechanism" in obj and obj["mechanism"] not in COMPATIBLE:
            raise ValueError(f"mechanism must be one of {', '.join(COMPATIBLE)}, got {obj['mechanism']!r}")
        refuse_non_poisson_state(obj, what)
        obj = obj["history"]
    if isinstance(obj, list):
        obj = [tuple(h) if isinstance(h, list) else h for h in obj]
    return obj


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
    return recorded_for(ledger, dataset, accountant.history, getattr(accountant, OPACUS_RECORDED_KEY, None))


def recorded_marker(obj: Any) -> Any:
    """The ``fdpkit_recorded`` marker of a state dict or checkpoint (None without one)."""
    if isinstance(obj, Mapping):
        obj = obj.get("privacy_accountant_state_dict", obj)
        if isinstance(obj, Mapping):
            return obj.get(OPACUS_RECORDED_KEY)
    return None


def recorded_for(ledger: Any, dataset: str, history: Any, marker: Any) -> Recorded:
    """What of ``history`` the ``ledger`` holds for ``dataset``, by the ``marker`` saved with it."""
    parts = _parts(marker, dataset)
    if not parts or after_prefix(history, [r for _, rows in parts for r in rows]) is None:
        return Recorded()
    try:
        dataset_id = ledger.dataset(dataset).id
    except ValueError:  # NotFound is a LedgerError (ValueError)
        return Recorded()
    out, open_ = Recorded(), True
    for rid, rows in parts:
        try:
            r = ledger.release_info(rid)
            same = r.dataset_id == dataset_id and json.loads(r.spec) == dpsgd_from_opacus_history(rows).to_dict()
        except (ValueError, TypeError):
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
