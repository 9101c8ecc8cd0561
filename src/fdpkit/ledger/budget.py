"""The ledger's budget readings: the composition of a dataset's released releases (from
the chained release rows, or a cache the chain vouches for), running totals against the
thresholds, and what a proposed release would do to them. A mixin of
:class:`fdpkit.ledger.operations.Ledger`, which supplies the sessions and the lookups.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from fdpkit.accounting import Composition, CostBudget
from fdpkit.ledger import db
from fdpkit.ledger.models import ComposedState, Dataset, Event, Release, Threshold
from fdpkit.ledger.prepared import DEFAULT_BUDGET, prepare, state_digest
from fdpkit.ledger.rules import check_relation, relation_notes
from fdpkit.ledger.totals import (
    Claim, ThresholdSpec, Total, add_rows, basic_claim, crossings, newly_exceeded, parts_of, read_total, settle,
)
from fdpkit.ledger.views import Check, Status


def spec_of(t: Threshold) -> ThresholdSpec:
    """The threshold row ``t`` as a :class:`~fdpkit.ledger.totals.ThresholdSpec`."""
    return ThresholdSpec(t.metric, t.level, t.value, t.delta, t.fpr)


class BudgetReads:
    """Totals and checks of a ledger (mixed into :class:`~fdpkit.ledger.operations.Ledger`)."""

    def _released_state(self, s: Session, dataset_id: int) -> tuple[Composition, list[int], float]:
        """The composition of the dataset's released releases, from the chained release rows.
        The cached state is used only when it composes exactly the released releases and
        matches the digest that the newest ``release.released`` event put in the chain (an
        edited cache is ignored, never trusted)."""
        current = sorted(s.execute(select(Release.id).where(Release.dataset_id == dataset_id,
                                                            Release.state == "released")).scalars())
        if not current:
            return Composition.empty(), [], 0.0
        cache = s.get(ComposedState, dataset_id)
        if cache is not None:
            try:
                cached_ids = sorted(int(i) for i in json.loads(cache.release_ids))
            except (ValueError, TypeError):
                cached_ids = None
            if cached_ids == current and self._chained_digest(s, dataset_id) == state_digest(
                    cached_ids, cache.epsilon_sum, cache.state):
                try:
                    return Composition.from_bytes(cache.state), cached_ids, float(cache.epsilon_sum)
                except ValueError:
                    pass
        cols = select(Release.id, Release.gaussian_mu, Release.spec, Release.epsilon_ref).where(
            Release.dataset_id == dataset_id, Release.state == "released").order_by(Release.id)
        rows = list(s.execute(cols))
        state = add_rows(Composition.empty(), rows)
        return state, [r.id for r in rows], float(sum(r.epsilon_ref for r in rows))

    @staticmethod
    def _released_parts(s: Session, dataset_id: int) -> tuple[Any, ...]:
        """The non-Gaussian mechanisms of the dataset's released releases (a total's ``parts``)."""
        return parts_of(s.execute(select(Release.spec, Release.gaussian_mu).where(
            Release.dataset_id == dataset_id, Release.state == "released", Release.gaussian_mu.is_(None))))

    @staticmethod
    def _chained_digest(s: Session, dataset_id: int) -> str | None:
        payload = s.execute(select(Event.payload).where(Event.dataset_id == dataset_id,
                                                        Event.kind == "release.released")
                            .order_by(Event.seq.desc()).limit(1)).scalar_one_or_none()
        try:
            return None if payload is None else json.loads(payload).get("data", {}).get("composed_sha256")
        except (ValueError, AttributeError):
            return None

    @staticmethod
    def _save_state(s: Session, dataset_id: int, state: bytes, ids: list[int], eps_sum: float) -> None:
        cache = s.get(ComposedState, dataset_id)
        if cache is None:
            cache = ComposedState(dataset_id=dataset_id)
            s.add(cache)
        cache.release_ids, cache.epsilon_sum, cache.state = json.dumps(ids), eps_sum, state

    def _refresh_cache(self, dataset_id: int, state: Composition, ids: list[int], eps_sum: float) -> None:
        data = state.to_bytes()
        try:
            db.run_write(self.engine, lambda s: self._save_state(s, dataset_id, data, ids, eps_sum))
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
            specs = [spec_of(t) for t in s.execute(select(Threshold).where(Threshold.dataset_id == d.id)).scalars()]
            alerts = list(s.execute(select(Event).where(Event.dataset_id == d.id, Event.kind == "alert")
                                    .order_by(Event.seq)).scalars())
            claim = self._claim(s, d.id)
            parts = self._released_parts(s, d.id)
            notes = relation_notes(d.name, d.relation_name, s.execute(
                select(Release.id, Release.spec).where(Release.dataset_id == d.id, Release.state == "released")
                .order_by(Release.id)).all())
        if stale and ids:
            self._refresh_cache(d.id, state, ids, eps_sum)
        deltas = [t.delta for t in specs if t.delta is not None]
        released = self._total(d.id, state, ids, eps_sum, deltas, claim, parts)
        with_approved = (settle(read_total(add_rows(state, approved), eps_sum + sum(a.epsilon_ref for a in approved),
                                           deltas, basic_claim(approved, claim), parts + parts_of(approved)), specs)
                         if approved else released)
        counts = {k: int(counts.get(k, 0)) for k in ("proposed", "approved", "released", "rejected", "withdrawn")}
        return Status(d, counts, released, with_approved, crossings(released, specs), alerts, notes)

    @staticmethod
    def _claim(s: Session, dataset_id: int) -> Claim:
        """The basic-composition claim of the dataset's released releases (pure ones at δ 0)."""
        return basic_claim(s.execute(select(Release.spec, Release.epsilon_ref).where(
            Release.dataset_id == dataset_id, Release.state == "released")))

    def _total(self, dataset_id: int, state: Composition, ids: list[int], eps_sum: float,
               deltas: list[float], claim: Claim | None = None, parts: tuple[Any, ...] = ()) -> Total:
        """The released total, kept in memory per set of releases: its readings (mu fit,
        epsilons) are computed once per change of the ledger, not once per request
        (``claim``: its basic-composition claim, :func:`~fdpkit.ledger.totals.basic_claim`)."""
        key = (dataset_id, tuple(ids), eps_sum)
        total = self._totals.get(key)
        if total is None:
            total = read_total(state, eps_sum, parts=parts)
            if len(self._totals) >= 16:
                try:
                    self._totals.pop(next(iter(self._totals)))
                except (KeyError, StopIteration, RuntimeError):  # another thread got there first
                    pass
            self._totals[key] = total
        if claim is not None:
            total.claim = claim
        for dl in deltas:
            total.epsilon_for_delta(dl)
        return total

    def check(self, dataset: str, mechanism: Any, *, budget: CostBudget | None = DEFAULT_BUDGET) -> Check:
        """What releasing ``mechanism`` would do to ``dataset``'s released total (about one
        composition when the cached total matches the chain; the total is re-derived from
        the chained release rows otherwise). ``budget`` bounds the mechanism's accounting
        (None: no limit)."""
        return self._check(dataset, mechanism, budget)[0]

    def _check(self, dataset: str, mechanism: Any, budget: CostBudget | None) -> tuple[Check, list[int]]:
        """:meth:`check` and the ids of the released releases it read."""
        p = prepare(mechanism, budget)
        with self.read() as s:
            d = self._dataset(s, dataset)
            check_relation(d.name, d.relation_name, p.mechanism)
            state, ids, eps_sum = self._released_state(s, d.id)
            specs = [spec_of(t) for t in s.execute(select(Threshold).where(Threshold.dataset_id == d.id)).scalars()]
            claim = self._claim(s, d.id)
            parts = self._released_parts(s, d.id)
        deltas = [t.delta for t in specs if t.delta is not None]
        before = self._total(d.id, state, ids, eps_sum, deltas, claim, parts)
        after = read_total(p.after(state), eps_sum + p.epsilon_ref, deltas, basic_claim([p], claim),
                           parts + (() if p.gaussian_mu is not None else (p.mechanism,)))
        return Check(before, after, crossings(after, specs), newly_exceeded(before, after, specs)), ids

    @staticmethod
    def _released_ids(s: Session, dataset_id: int) -> list[int]:
        return sorted(s.execute(select(Release.id).where(Release.dataset_id == dataset_id,
                                                         Release.state == "released")).scalars())

    def check_release(self, release_id: Any) -> Check:
        """What releasing ``release_id`` would do: the totals before and after, thresholds newly crossed, and whether a hard one blocks it."""
        r = self.release_info(release_id)
        with self.read() as s:
            name = s.get(Dataset, r.dataset_id).name
        return self.check(name, r.spec)
