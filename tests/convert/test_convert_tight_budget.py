"""The calculator's tight epsilon within its time limit (``convert.classic.TIGHT_BUDGET``:
about a second of CPU in the cost model's units)."""

from fdpkit.accounting import estimate_cost, tilted
from fdpkit.convert.classic import TIGHT_BUDGET, _composed, _tight


def test_two_hundred_pure_releases_get_their_tight_epsilon():
    """200 releases of epsilon 1 compose in about 0.3 s; the calculator said "not computed:
    exceeds the calculator's time limit" while the cost model read them at 3.1e7 work (10x
    their time) and the budget allowed 3e7 work and 2e6 grid points (they need 2.8e6)."""
    eps, acc = _tight([(1.0, 0.0)] * 200, 1e-5)
    assert eps is not None and acc is not None
    assert 20.0 < eps < 200.0  # below basic composition (200), above the sqrt(T) scale


def test_compositions_of_seconds_are_still_refused_at_once(monkeypatch):
    items = [(1.0, 0.0)] * 600  # a 6.4e6-point composition: estimated 1.4e7 work, over 1e7
    assert estimate_cost(_composed(items), 1e-4).work > TIGHT_BUDGET["max_work"]
    composed = []  # refused by the estimate: nothing composed (counted, not timed)
    real = tilted.compose
    monkeypatch.setattr(tilted, "compose", lambda *a, **k: composed.append(1) or real(*a, **k))
    assert _tight(items, 1e-5) == (None, None)
    assert not composed
