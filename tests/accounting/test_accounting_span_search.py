"""The span cap's search (Step 2 of ``accounting.tilted``, ``_tilt_placement._span_cap``) and
its Chernoff edges (``_cumulants._chernoff_edge``): few cumulant evaluations (issue 27: the cap
took 18-31 ms of compositions of 51-144 ms at small noise), each edge a valid Chernoff bound
within its stated accuracy, the tilt the largest theta within the cap to the search's tolerance.
Evaluations are counted, not timed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.accounting import _pld_adapter, tilted
from fdpkit.accounting import _tilt_placement as tp
from fdpkit.accounting._cumulants import _chernoff_edge, _chernoff_x, _Cumulants
from fdpkit.accounting.pld import _phase_pld

#: A coarse grid: the heavy loss tail of sigma 0.8, q 0.001 as at 1e-4, in milliseconds.
DISC = 1e-3
LOG_ALIAS = math.log(tilted.ALIAS_MASS)


def _cumulants(sigma: float, q: float, steps: int) -> _Cumulants:
    m = fp.dpsgd(sigma, q, steps)
    remove, _ = _pld_adapter.pmf_arrays(_phase_pld(m, m.phases[0], DISC)[0])
    return _Cumulants([tilted._factor(remove, steps)], DISC)


def _scan(cum: _Cumulants, theta: float, upper: bool, lam: float) -> float:
    """The Chernoff edge minimised over a fine grid of lambda around ``lam`` (a reference)."""
    sign = 1.0 if upper else -1.0
    kt = cum(theta)[0]
    lams = lam * np.exp(np.linspace(-0.3, 0.3, 1201))
    return sign * min((cum(theta + sign * t)[0] - kt - LOG_ALIAS) / t for t in lams)


@pytest.mark.parametrize("theta", [-0.5, 2.0, 4.9, 7.0])
@pytest.mark.parametrize("upper", [True, False])
def test_an_edge_is_a_chernoff_bound_within_its_accuracy(theta, upper):
    cum = _cumulants(0.8, 1e-3, 2000)
    kt, k1t, k2t = cum(theta)
    rtol = 1e-4
    x, lam = _chernoff_edge(cum, theta, kt, k1t, math.sqrt(k2t), LOG_ALIAS, upper, rtol)
    sign = 1.0 if upper else -1.0
    # the bound at the lambda returned, exactly as evaluated: P_theta beyond x <= ALIAS_MASS
    assert x == sign * (cum(theta + sign * lam)[0] - kt - LOG_ALIAS) / lam
    ref = _scan(cum, theta, upper, lam)
    assert sign * (x - ref) >= -1e-12 * abs(ref)  # no lambda of the scan gives a tighter bound ...
    assert abs(x - ref) <= rtol * abs(ref - k1t)  # ... by more than the accuracy stated


def test_an_edge_where_the_tilted_loss_runs_out_takes_few_evaluations():
    # theta 4.9 of sigma 0.8, q 0.001: the tilted loss sits near 0.06 with a tail to 12 per
    # step. Newton's steps on g (_chernoff_x) creep from the right: 11 evaluations, and the
    # edge it returns is 8e-4 of its distance from the mean above the minimum. Newton's on
    # ln I, started from the edge's lambda at a nearby theta (as the span cap starts it),
    # lands within 1e-4 in at most 4
    cum = _cumulants(0.8, 1e-3, 2000)
    kt, k1t, k2t = cum(4.9)
    sd = math.sqrt(k2t)
    before = cum.evaluations
    x_old = _chernoff_x(cum, 4.9, kt, sd, LOG_ALIAS, True)
    old = cum.evaluations - before
    cum = _cumulants(0.8, 1e-3, 2000)
    k = cum(4.8)
    _, guess = _chernoff_edge(cum, 4.8, k[0], k[1], math.sqrt(k[2]), LOG_ALIAS, True, 1e-4)
    before = cum.evaluations
    x_new, lam = _chernoff_edge(cum, 4.9, kt, k1t, sd, LOG_ALIAS, True, 1e-4, guess)
    new = cum.evaluations - before
    assert new <= 4 and old >= 10, (new, old)
    ref = _scan(cum, 4.9, True, lam)
    assert x_new - ref <= 1e-4 * (ref - k1t) < 5e-4 * (ref - k1t) <= x_old - ref


def _span(cum: _Cumulants, theta: float) -> float:
    kt, k1t, k2t = cum(theta)
    sd = math.sqrt(k2t)
    return (_chernoff_edge(cum, theta, kt, k1t, sd, LOG_ALIAS, True, 1e-7)[0]
            - _chernoff_edge(cum, theta, kt, k1t, sd, LOG_ALIAS, False, 1e-7)[0])


@pytest.mark.parametrize("sigma, q, steps", [(0.8, 1e-3, 271), (0.8, 1e-3, 2000), (1.0, 1e-5, 100_000)])
def test_the_span_cap_finds_the_largest_tilt_within_the_cap_in_few_evaluations(sigma, q, steps):
    cum = _cumulants(sigma, q, steps)
    hi = tp._saddle(cum, 50.0)
    max_span = 2.0 * (_span(_cumulants(sigma, q, steps), 0.0))
    assert _span(cum, hi) > max_span  # the cap binds
    before = cum.evaluations
    theta = tp._span_cap(cum, LOG_ALIAS, max_span, tp.THETA_START, hi)
    used = cum.evaluations - before
    # Brent's method on the spans of _chernoff_x took 125-142 evaluations here (a span
    # noisy by ~0.5 %); the bracketed Hermite search on accurate edges 40-47
    assert used <= 60, used
    tol = tp._PLACEMENT_XTOL / 10 * (1.0 + abs(theta))
    assert tp.THETA_START < theta < hi
    assert _span(cum, theta) <= max_span * (1 + 1e-6)
    assert _span(cum, theta + tol) > max_span
    # the capped tilt's window is the span the search measured (tilted._windows reads it)
    assert (theta, LOG_ALIAS, True) in cum.edges and (theta, LOG_ALIAS, False) in cum.edges
    assert cum.edges[theta, LOG_ALIAS, True] - cum.edges[theta, LOG_ALIAS, False] <= max_span


def _old_window(pl, i: int, d: float) -> list[int]:
    """Tilt i's window as _chernoff_x reads it (on fresh cumulants: the same values)."""
    theta, k, _, sd = pl.tilts[i]
    fresh = _Cumulants(pl.factors, d)
    lo = math.floor(_chernoff_x(fresh, theta, k, sd, LOG_ALIAS, False) / d) - 1
    hi = math.ceil(_chernoff_x(fresh, theta, k, sd, LOG_ALIAS, True) / d) + 1
    return [max(pl.lo_sup, lo), max(min(pl.hi_sup, hi), max(pl.lo_sup, lo))]


def test_an_uncapped_tilt_is_placed_and_windowed_as_before():
    # the headline's tilt is within the cap on _chernoff_x's span, the old rule: the tilt,
    # its window and so the composition are exactly as before (mu 1.5669487330002814)
    m = fp.dpsgd(9.4, 16384 / 50000, 2000)
    remove, _ = _pld_adapter.pmf_arrays(_phase_pld(m, m.phases[0], 1e-4)[0])
    pl = tilted.plan([(remove, 2000)])
    assert not pl.cumulants.edges
    assert pl.windows[0][0] == _old_window(pl, 0, 1e-4)[0]  # (its top is the output's top)


def test_only_the_tilt_the_search_placed_gets_the_measured_window():
    # sigma 1, q 1e-5, T 1e5 at d 1e-3: tilt 97.3 is within the cap (as before), tilt 152
    # is the span cap's; their windows: _chernoff_x's, and the span the search measured
    m = fp.dpsgd(1.0, 1e-5, 100_000)
    remove, _ = _pld_adapter.pmf_arrays(_phase_pld(m, m.phases[0], DISC)[0])
    pl = tilted.plan([(remove, 100_000)])
    (t0, *_), (t1, *_) = pl.tilts
    assert sorted({key[0] for key in pl.cumulants.edges}) == [t1]
    assert pl.windows[0][0] == _old_window(pl, 0, DISC)[0]  # (tops: _upper_only may shorten them)
    up, low = pl.cumulants.edges[t1, LOG_ALIAS, True], pl.cumulants.edges[t1, LOG_ALIAS, False]
    assert pl.windows[1][0] == max(pl.lo_sup, math.floor(low / DISC) - 1)
    assert up < _chernoff_x(_Cumulants(pl.factors, DISC), *pl.tilts[1][:2], pl.tilts[1][3], LOG_ALIAS, True)
