"""Step 4b of ``accounting.tilted`` (``accounting._tail_l2``): tail sums bounded through the
l2-norm of a pass's round-off.

Layer 1: the l2 bound (5') of ``_fftpass`` holds against an extended-precision recomputation
of the same circular convolution (same float64 inputs, longdouble FFT and powers: its own
error is ~2,000 times smaller than the float64 bound). Layer 2: compositions forced through
Step 4b still bound the exact (direct longdouble) compositions from above. Layer 3: the
tiny-sample-rate runs whose tail sums the per-point round-off decided (sigma 0.6, q 1e-7,
T 10^5 read mu 3.99 times the largest-coordinate test's; now within 1.8 times) stay above
that test's mu, which is a lower bound on the true one.
"""

import math

import numpy as np
import pytest
from scipy import fft as sfft

import fdpkit as fp
from fdpkit.accounting import _tail_l2, tilted
from fdpkit.accounting._fftpass import _fft_pass, _power
from fdpkit.accounting._pld_adapter import pmf_arrays
from fdpkit.accounting._resolution import choose_discretization, max_test_mu
from fdpkit.accounting.pld import build_pld
from fdpkit.mechanisms import Gaussian, Subsampled

from test_accounting_roundoff import assert_tails_bound_exact

#: The longdouble reference's own error relative to the float64 bound: u_ld / u_64 = 2^-11
#: where longdouble is the x87 80-bit format (and the factors' bound scale alike); 1e-3 covers it.
REFERENCE_SLACK = 1e-3


@pytest.mark.parametrize("sigma, q, times, d", [
    (0.7, 1e-6, 10_000, 1e-4),   # a near-point-mass step: the heavy-tail regime
    (2.0, 0.05, 400, 1e-3),      # an ordinary one
])
def test_l2_bound_holds_against_extended_precision(sigma, q, times, d):
    if np.finfo(np.longdouble).eps >= np.finfo(float).eps:
        pytest.skip("no extended precision on this platform")
    step = pmf_arrays(build_pld(Subsampled(Gaussian(sigma), q), d))[0]
    pl = tilted.plan([(step, times)])
    (f,), cum = pl.factors, pl.cumulants
    for (theta, _, _, _), (lo, hi) in zip(pl.tilts, pl.windows):
        size = hi - lo + 1
        y, eps, eps2 = _fft_pass(pl.factors, cum, theta, lo, size, np.float64)
        # the same float64 tilted input _fft_pass composes, composed again in longdouble
        x = np.exp(cum.logp[0] + theta * cum.losses[0] - cum.lam(0, theta)[0])
        n_fft = sfft.next_fast_len(size, real=True)
        if len(x) > n_fft:
            x = np.bincount(np.arange(len(x)) % n_fft, weights=x, minlength=n_fft)
        spec = _power(sfft.rfft(x.astype(np.longdouble), n_fft), f.times)
        ref = sfft.irfft(spec, n_fft)
        shift = (lo - f.times * f.lo) % n_fft
        ref = np.roll(ref, -shift)[:size]
        diff = (y - ref).astype(np.longdouble)
        l2 = float(np.sqrt(np.sum(diff * diff)))
        assert l2 <= eps2 * (1 + REFERENCE_SLACK), (theta, l2, eps2)
        assert float(np.max(np.abs(diff))) <= eps * (1 + REFERENCE_SLACK), (theta, eps)
        assert eps2 <= math.sqrt(n_fft) * eps  # never weaker than the per-point bound summed in l2


@pytest.mark.parametrize("sigma, q, disc", [(2.0, 0.3, 1e-2), (1.5, 0.05, 1e-2)])
@pytest.mark.parametrize("times", [17, 33])
def test_step_4b_keeps_the_exact_composition_bounded(monkeypatch, sigma, q, disc, times):
    monkeypatch.setattr(tilted, "L2_MIN_TAIL_RATIO", -1.0)  # form (8) everywhere
    calls = []
    real = tilted.tighten_tails
    monkeypatch.setattr(tilted, "tighten_tails", lambda *a: calls.append(1) or real(*a))
    for a in pmf_arrays(build_pld(Subsampled(Gaussian(sigma), q), disc)):
        if a is None:
            continue
        assert_tails_bound_exact(tilted.compose([(a, times)]), a, times, points=80, tight=False)
    assert calls


def test_tighten_tails_never_raises_a_bound_and_keeps_it_non_increasing():
    rng = np.random.default_rng(7)
    n = 500
    losses = np.arange(n) * 1e-2
    upper = np.sort(rng.uniform(0, 1e-3, n))[::-1].copy()
    upper[-1] = max(upper[-1], 1e-9)
    before = upper.copy()
    y = rng.uniform(0, 1e-8, n + 40)
    _tail_l2.tighten_tails(upper, [(10, 300, 0.5, 0.0, 1.0, -20, n + 19)], lambda *_: (y, 1e-12), losses, 0,
                           1e-9, np.finfo(float).eps / 2)
    assert np.all(upper <= before)
    assert np.all(np.diff(upper) <= 0)
    assert np.any(upper < before)


@pytest.mark.parametrize("sigma, q, steps, before, bound", [
    (0.6, 1e-7, 100_000, 3.99, 1.8),
    (0.7, 1e-6, 100_000, 1.385, 1.2),
])
def test_round_off_no_longer_decides_tiny_sample_rate_tails(sigma, q, steps, before, bound):
    mech = fp.dpsgd(noise_multiplier=sigma, sample_rate=q, steps=steps)
    d, how = choose_discretization(mech)
    assert "Eq. 4" in how
    mu = fp.fit_gdp(fp.account(mech, discretization=d).curve).mu
    lower = max_test_mu([(q, sigma, steps)])
    assert mu >= lower * (1 - 1e-6)  # a test that exists: never below it
    assert mu <= bound * lower  # was `before` times it with the per-point bound alone


def test_headline_never_forms_the_l2_bound(monkeypatch):
    calls = []
    real = tilted.tighten_tails
    monkeypatch.setattr(tilted, "tighten_tails", lambda *a: calls.append(1) or real(*a))
    mu = fp.privacy_report(fp.dpsgd(noise_multiplier=9.4, sample_rate=16384 / 50000, steps=2000)).mu
    assert not calls  # so the output is Step 4's, bit for bit
    assert abs(mu - 1.56695) <= 1e-5


def test_step_4b_reads_the_passes_it_kept_and_nothing_changes(monkeypatch):
    """Step 4b used to compute every pass again (forward transforms, powers, inverse): a
    50-phase noise schedule paid a fifth of its time for it. The passes' outputs are now
    kept (up to KEPT_PASS_POINTS) and read there: no pass runs twice, and the composition is
    bit-identical to the one that recomputes them."""
    step = pmf_arrays(build_pld(Subsampled(Gaussian(0.8), 1e-3), 1e-4))[0]
    passes = []
    real_pass = tilted._fft_pass
    monkeypatch.setattr(tilted, "_fft_pass", lambda *a: passes.append(a[2:5]) or real_pass(*a))
    calls = []
    real_4b = tilted.tighten_tails
    monkeypatch.setattr(tilted, "tighten_tails", lambda *a: calls.append(1) or real_4b(*a))
    kept = tilted.compose([(step, 2000)])
    assert calls  # this run does reach Step 4b
    assert len(passes) == len(set(passes))  # each pass once
    ran = len(passes)
    monkeypatch.setattr(tilted, "KEPT_PASS_POINTS", 0)  # nothing kept: Step 4b recomputes
    again = tilted.compose([(step, 2000)])
    assert len(passes) > 2 * ran  # the recomputations, for contrast
    np.testing.assert_array_equal(kept.probs, again.probs)
    assert kept.infinity_mass == again.infinity_mass
