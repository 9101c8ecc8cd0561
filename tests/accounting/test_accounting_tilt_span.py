"""Tilt placement keeps each FFT window near the untilted loss range (small noise): a far
tilt of a step with a heavy loss tail once needed a window 20x wider, and paid for it in
every pass; the composition stays a sound, tight bound."""

from __future__ import annotations

import math

import numpy as np

import fdpkit as fp
from fdpkit.accounting import _pld_adapter, tilted
from fdpkit.accounting._cumulants import _chernoff_x
from fdpkit.accounting.pld import _phase_pld

#: Coarse grid: the same shape as at 1e-4 (sigma 0.8, q 0.001, T 271: 1.58M -> 148k points).
DISC = 1e-3
#: Slack on the span cap: the window's ends are rounded outward to the grid.
GRID_SLACK = 4


def _remove_direction(sigma, q, steps):
    m = fp.dpsgd(sigma, q, steps)
    remove, _ = _pld_adapter.pmf_arrays(_phase_pld(m, m.phases[0], DISC)[0])
    return remove


def test_windows_span_at_most_twice_the_untilted_range():
    step = _remove_direction(0.8, 0.001, 271)
    plan = tilted.plan([(step, 271)])
    cum, d = plan.cumulants, DISC
    bottom = max(plan.lo_sup * d, _chernoff_x(cum, 0.0, plan.k0, math.sqrt(plan.k20), math.log(tilted.ALIAS_MASS),
                                              False))
    cap = tilted.MAX_SPAN_FACTOR * (plan.top * d - bottom) / d
    assert all(hi - lo <= cap + GRID_SLACK for lo, hi in plan.windows), (plan.windows, cap)
    assert plan.stop - plan.start <= cap + GRID_SLACK


def _fft_reference_error(p: np.ndarray, steps: int, size: int, ref: np.ndarray) -> float:
    """A bound on ||ref - exact||_2 for ``ref = irfft(rfft(p, size) ** steps, size)``, the same
    Higham bound as Step 3 of :mod:`fdpkit.accounting.tilted`: forward and inverse transforms
    err by at most eta ||.||_2 with eta = 10 u (log2 size + 2); the power by repeated squaring
    adds a relative (1 + 4u)^steps - 1; |P_k| <= sum p + G."""
    u = np.finfo(float).eps / 2
    eta = 10.0 * u * (math.ceil(math.log2(size)) + 2)
    norm_p = float(np.sqrt(np.sum(p * p))) * (1 + 1e-6)
    g = eta * math.sqrt(size) * norm_p
    m = math.fsum(p.tolist()) * (1 + 1e-12) + g
    power = steps * m ** (steps - 1) * eta * norm_p  # ||dY||_2 / sqrt(size), forward error powered
    rounding = math.expm1(steps * math.log1p(4 * u)) * m ** steps  # |Y_k| <= m^steps, per coefficient
    return (power + rounding + eta * float(np.sqrt(np.sum(ref * ref)))) * (1 + 1e-6)


def test_capped_composition_stays_a_tight_upper_bound_of_the_tail():
    # the composed PMF's upper tail dominates the exact composition's (round-off bounded
    # by construction); checked against a float64 FFT composition of the same step, within
    # that reference's own stated error bound (a tail sum of n points errs by at most
    # sqrt(n) times its l2 bound) and the mass the repair removes (sum p - 1, at the lowest
    # losses: at most steps times it anywhere in the composition)
    steps = 20
    step = _remove_direction(0.8, 0.001, steps)
    out = tilted.compose([(step, steps)])
    p = np.clip(np.asarray(step.probs, dtype=float), 0.0, None)
    n = steps * (len(p) - 1) + 1
    size = 1 << (n - 1).bit_length()
    ref = np.fft.irfft(np.fft.rfft(p, size) ** steps, size)[:n]
    l2 = _fft_reference_error(p, steps, size, ref)
    repaired = steps * max(math.fsum(p.tolist()) - 1.0, 0.0)
    u = np.finfo(float).eps / 2
    lo0 = int(round(step.losses[0] / DISC)) * steps
    ref_losses = (lo0 + np.arange(n)) * DISC
    for loss in (0.0, 0.05, 0.2, 0.5):
        sel = ref[ref_losses >= loss - DISC / 2]
        exact = float(np.sum(sel))
        tol = math.sqrt(len(sel)) * l2 + repaired + 2 * len(sel) * u * float(np.sum(np.abs(sel)))
        assert tol < 1e-3 * exact, (loss, tol, exact)  # the check below means something
        mine = float(np.sum(out.probs[out.losses >= loss - DISC / 2])) + out.infinity_mass
        assert mine >= exact - tol, (loss, mine, exact, tol)
        assert mine <= exact * (1 + 1e-3) + tol, (loss, mine, exact)


def test_a_heavy_tailed_step_gets_its_tilts_below_the_window_top():
    # sigma 0.3, q 1e-9: the per-step loss has variance 7e-14 but a tail reaching loss 17, so
    # K'(theta) stays ~0 up to theta ~3 and then explodes; the Gaussian first guess of the
    # saddle point of the window's top was theta 9e8, returned unevaluated (beyond the
    # Newton solver's cap): the cap on every tilt was void, the one tilt sat at K' = 243
    # (14x beyond the top) and the extended-precision redo read mu 7.24 (TPR(0) = 0.81)
    m = fp.dpsgd(0.3, 1e-9, 10_000)
    remove, _ = _pld_adapter.pmf_arrays(_phase_pld(m, m.phases[0], DISC)[0])
    for dtype in (np.float64, np.longdouble):
        plan = tilted.plan([(remove, 10_000)], dtype=dtype)
        top = plan.top * DISC
        # at the saddle point of the top, to the placement's tolerance (theta within 1e-2
        # relative: K' doubles over 0.04 here)
        assert all(k1 <= 3.0 * top for _, _, k1, _ in plan.tilts), (plan.tilts, top)
    # sound either way (every tilt's bound holds); now tight: mu ~0.1 at FPR >= the report's
    # alpha_min (a participation with probability 1e-5 overall, at mu_1 = 1/0.3)
    rep = fp.privacy_report(m, discretization=DISC)
    assert 0.05 < rep.mu < 0.2, rep.mu
    assert rep.curve.tpr(np.array([0.0]))[0] < 1e-6
