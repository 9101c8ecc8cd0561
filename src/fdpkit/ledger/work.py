"""Estimated work of the ledger's accounting, read from the database without composing
anything (units of :func:`fdpkit.accounting.estimate_cost`: ``WORK_PER_SECOND`` = 1e7 per
single-threaded CPU-second). A server uses it to decide where a status, a check, an
approval or a ledger report runs (the web's light or heavy worker lane) before any of it
is computed.

What costs what (measured on the reference machine, counted with some margin):

- reading a composed total (tight-mu fit, epsilons, TPR): :data:`READ_WORK`, once per
  dataset (and once per timeline bucket with releases);
- composing a release: its own ``estimate_cost`` at the running discretization, for every
  PLD (non-Gaussian) release the dataset's composed-state cache does not cover yet (and
  for every PLD release when the timeline is drawn: each bucket is composed from scratch);
- an approval: the release's privacy report accounted at the report's discretization (and,
  for shuffled DP-SGD, its Poisson comparison within the report's budget); its
  rendering as JSON and PDF (:data:`REPORT_RENDER_WORK`, a fixed-size document) is not
  counted, as for the calculator's report downloads: an approval is an interactive click
  whose cost does not grow with the request, so it takes the light lane unless its
  accounting is heavy (a lower-priority lane would starve it on a busy machine);
- the ledger report of a dataset: :data:`DOCUMENT_WORK` by format, plus its timeline;
- not counted: a total whose figure lies just over one of its thresholds at the running grid
  is read again at its releases' own grid (:meth:`fdpkit.ledger.totals.Total.refine`, at most
  :data:`fdpkit.ledger.totals.REFINE_WORK` a total); rare, and about one report's accounting.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from sqlalchemy import select

from fdpkit.accounting import DISCRETIZATION_DEFAULT, RUNNING_DISCRETIZATION, estimate_cost
from fdpkit.guarantee.setting import comparison_work
from fdpkit.ledger.models import ComposedState, Dataset, Release
from fdpkit.mechanisms import Mechanism, mechanism_from_dict
from fdpkit.ledger.operations import MAX_ID

#: Most timeline buckets (``fdpkit.ledger.timeline.MAX_BUCKETS``): one total read per bucket with releases.
MAX_BUCKETS = 520

#: Reading one composed total: the mu fit of the composed curve, epsilons and the TPR
#: (about 0.03 s measured; 0.05 s counted).
READ_WORK = 5e5
#: The timeline figure drawn as inline SVG (about 0.3 s measured; 0.5 s counted).
FIGURE_WORK = 5e6
#: A release's privacy report rendered as JSON and PDF at approval, beyond the accounting
#: (figures and PDF layout: about 3.3 s measured in a warm process). Fixed, so NOT counted
#: by :func:`approval_work` (see the module notes); stated for reference.
REPORT_RENDER_WORK = 5e7
#: The ledger report of a dataset by format, beyond its totals and timeline (PDF about 1.1 s
#: measured, HTML 0.3 s, JSON/CSV/Markdown 0.1 s).
DOCUMENT_WORK = {"pdf": 1.5e7, "html": 5e6}
DOCUMENT_WORK_OTHER = 1.5e6


def mechanism_work(mechanism: Mechanism | dict | str, discretization: float = RUNNING_DISCRETIZATION) -> float:
    """The cost model's work of accounting ``mechanism`` (a Mechanism, its spec dict or JSON
    text) at ``discretization``; 0 for a closed form. ValueError for a spec that does not parse."""
    if isinstance(mechanism, str):
        mechanism = json.loads(mechanism)
    if isinstance(mechanism, dict):
        mechanism = mechanism_from_dict(mechanism)
    return float(estimate_cost(mechanism, discretization).work)


@functools.lru_cache(maxsize=1024)
def _spec_work(spec: str) -> float:
    return mechanism_work(spec)


def totals_work(ledger: Any, dataset: str | None = None, *, timeline: bool = False,
                stop_at: float = math.inf) -> float:
    """Work of reading the running totals of ``dataset`` (every dataset when None): released
    and released-plus-approved, and with ``timeline`` the running total per bucket too.
    Database reads only (no composition); an unknown dataset costs nothing (the ledger
    answers it with NotFound). The sum stops once above ``stop_at`` (a caller that only
    compares it with a bound need not parse every release)."""
    if dataset is not None and (not isinstance(dataset, str) or "\x00" in dataset or len(dataset) > 200):
        return 0.0  # no dataset has this name (the ledger answers NotFound)
    with ledger.read() as s:
        ds = select(Dataset.id)
        if dataset is not None:
            ds = ds.where(Dataset.name == dataset)
        ids = list(s.execute(ds).scalars())
        if not ids:
            return 0.0
        rows = s.execute(select(Release.id, Release.dataset_id, Release.state, Release.spec)
                         .where(Release.dataset_id.in_(ids), Release.state.in_(("released", "approved")),
                                Release.gaussian_mu.is_(None))).all()
        n_released = len(s.execute(select(Release.id).where(Release.dataset_id.in_(ids),
                                                            Release.state == "released")).all()) if timeline else 0
        cached = {c.dataset_id: set(json.loads(c.release_ids))
                  for c in s.execute(select(ComposedState.dataset_id, ComposedState.release_ids)
                                     .where(ComposedState.dataset_id.in_(ids)))}
    work = 2 * READ_WORK * len(ids)
    for r in rows:
        times = (r.state == "approved" or r.id not in cached.get(r.dataset_id, ())) + (
            timeline and r.state == "released")
        if times:
            work += times * _spec_work(r.spec)
        if work > stop_at:
            return work
    if timeline:
        work += READ_WORK * min(n_released, MAX_BUCKETS) + FIGURE_WORK
    return work


def pending_work(ledger: Any, release_id: Any = None) -> float:
    """Work of checking the proposed and approved releases (``release_id``: that one only)
    against their datasets' released totals (the approval queue, a release's page, a
    release): each one's own accounting plus its dataset's totals."""
    with ledger.read() as s:
        q = select(Release.id, Release.dataset_id, Release.spec, Release.gaussian_mu).where(
            Release.state.in_(("proposed", "approved")))
        if release_id is not None:
            rid = _row_id(release_id)
            if rid is None:
                return 0.0
            q = q.where(Release.id == rid)
        rows = s.execute(q).all()
        names = dict(s.execute(select(Dataset.id, Dataset.name)).all())
    work = 0.0
    for name in {names[r.dataset_id] for r in rows if r.dataset_id in names}:
        work += totals_work(ledger, name)
    return work + sum(_spec_work(r.spec) + READ_WORK for r in rows if r.gaussian_mu is None)


def approval_work(ledger: Any, release_id: Any) -> float:
    """Work of approving ``release_id`` that grows with its mechanism: its privacy report
    accounted at the report's discretization (the fixed rendering, about
    :data:`REPORT_RENDER_WORK`, is not counted); 0 for an unknown release (NotFound)."""
    rid = _row_id(release_id)
    if rid is None:
        return 0.0
    with ledger.read() as s:
        spec = s.execute(select(Release.spec).where(Release.id == rid)).scalar_one_or_none()
    if spec is None:
        return 0.0
    mech = mechanism_from_dict(json.loads(spec) if isinstance(spec, str) else spec)
    # a shuffled release's report also computes its Poisson comparison (not a guarantee)
    return mechanism_work(mech, DISCRETIZATION_DEFAULT) + comparison_work(mech, None)


def document_work(ledger: Any, dataset: str, fmt: str) -> float:
    """Work of the ledger report of ``dataset`` in ``fmt`` (it reads the totals and the
    timeline twice: once for the data, once for the tables)."""
    return 2 * totals_work(ledger, dataset, timeline=True) + DOCUMENT_WORK.get(fmt, DOCUMENT_WORK_OTHER)


def _row_id(value: Any) -> int | None:
    """A row id the database can hold, else None (the ledger itself names the error)."""
    try:
        rid = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return rid if 1 <= rid <= MAX_ID else None
