"""The certified thinning of large steep chains (issue 29, cost at large mu): the tangent
envelope lies on or above the chain in TPR (below it in beta) everywhere, within the stated
relative tolerance, and the large-mu report keeps its numbers up to that tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fdpkit.accounting import _chain_thinning as thinning
from fdpkit.accounting import pld_curve
from fdpkit.accounting._chain_thinning import THIN_RTOL, thin_chain
from fdpkit.fit import fit_gdp

#: Relative slack of the float comparisons of the checks (far below THIN_RTOL).
CHECK_RTOL = 1e-13


def _gaussian_chain(mu: float, n: int, noise: float = 0.0, seed: int = 0):
    """A steep chain on G_mu from FPR 1e-30 past the diagonal, (alpha, TPR, beta); ``noise``
    perturbs TPR and beta by a relative amount (a chain that is concave only up to it)."""
    z = np.linspace(stats.norm.isf(1e-30), 0.5 * mu - 1.0, n)  # to just past the diagonal
    alpha = np.concatenate([[0.0], stats.norm.sf(z)])
    beta = np.concatenate([[1.0], stats.norm.cdf(z - mu)])
    tpr = np.concatenate([[0.0], stats.norm.sf(z - mu)])
    if noise:
        rng = np.random.default_rng(seed)
        tpr[1:] *= 1.0 + noise * rng.standard_normal(n)
        beta[1:] *= 1.0 + noise * rng.standard_normal(n)
        tpr, beta = np.maximum.accumulate(tpr), np.minimum.accumulate(beta)
    return alpha, tpr, beta


def _check_envelope(chain, thinned, rtol):
    a, t, b = chain
    a2, t2, b2 = thinned
    assert np.all(np.diff(a2) > 0) and np.all(np.diff(t2) >= 0) and np.all(np.diff(b2) <= 0)
    h = int(np.searchsorted(t, 0.5, side="right"))
    # the chain's vertices lie below the thinned polyline in TPR (above it in beta) ...
    tt, bb = np.interp(a, a2, t2), np.interp(a, a2, b2)
    assert np.all(tt[:h] >= t[:h] * (1 - CHECK_RTOL))
    assert np.all(bb[h:] <= b[h:] * (1 + CHECK_RTOL))
    # ... and so do its edges: the thinned vertices lie above the chain's polyline
    k = int(np.searchsorted(t2, 0.5, side="right"))
    assert np.all(t2[:k] >= np.interp(a2[:k], a, t)[:k] * (1 - CHECK_RTOL))
    assert np.all(b2[k:] <= np.interp(a2[k:], a, b) * (1 + CHECK_RTOL))
    # within the tolerance, on the small side
    assert np.all(tt[1:h] - t[1:h] <= rtol * t[1:h] * (1 + 1e-6))
    assert np.all(b[h:] - bb[h:] <= rtol * b[h:] * (1 + 1e-6))


@pytest.mark.parametrize("mu, noise", [(3.0, 0.0), (20.0, 0.0), (3.0, 1e-15)])
def test_envelope_is_above_the_chain_and_within_tolerance(mu, noise):
    chain = _gaussian_chain(mu, 200_000, noise)
    thinned = thin_chain(*chain, min_vertices=0)
    assert len(thinned[0]) < len(chain[0]) / 4
    _check_envelope(chain, thinned, THIN_RTOL)
    # a looser tolerance keeps fewer vertices, still above the chain
    coarse = thin_chain(*chain, rtol=1e-3, min_vertices=0)
    assert len(coarse[0]) < len(thinned[0])
    _check_envelope(chain, coarse, 1e-3)


def test_small_chains_are_kept_whole():
    chain = _gaussian_chain(2.0, 1000)
    assert all(x is y for x, y in zip(thin_chain(*chain), chain))


def test_thinned_curve_is_a_pessimistic_copy_of_the_full_one(monkeypatch):
    """The certified curve of a chain with its thinning forced on: beta never above the full
    curve's, mu never below it, both within the tolerance."""
    chain = _gaussian_chain(8.0, 50_000)
    monkeypatch.setattr(thinning, "THIN_MIN_VERTICES", len(chain[0]))  # kept whole
    full = pld_curve._symmetric_hull([tuple(x.copy() for x in chain)])
    monkeypatch.setattr(thinning, "THIN_MIN_VERTICES", 0)
    thin = pld_curve._symmetric_hull([chain])
    assert len(thin.alphas) < len(full.alphas) / 2
    grid = np.concatenate([np.geomspace(1e-30, 0.5, 2000), np.linspace(0.5, 1.0, 200)])
    bf, bt = full.beta(grid), thin.beta(grid)
    assert np.all(bt <= bf * (1 + CHECK_RTOL))
    # on the stored half (FPR up to the diagonal, 3.2e-5 at mu 8) every reading moves by at
    # most the tolerance on the small side (beta, or TPR = 1 - beta)
    half = grid <= 1e-5
    small = np.minimum(bf, 1.0 - bf)[half]
    assert np.all((bf - bt)[half] <= THIN_RTOL * small * (1 + 1e-6))

    f_full, f_thin = fit_gdp(full, alpha_min=1e-20), fit_gdp(thin, alpha_min=1e-20)
    assert f_full.mu <= f_thin.mu <= f_full.mu * (1 + THIN_RTOL)
    assert abs(f_thin.regret - f_full.regret) <= THIN_RTOL


def test_chains_with_repeated_fpr_are_kept_whole():
    """A vertical edge (alpha repeated: null masses that underflow) has no slope to bound:
    such a chain is returned as it is, never thinned."""
    a, t, b = _gaussian_chain(3.0, 2000)
    a[5] = a[4]
    assert all(x is y for x, y in zip(thin_chain(a, t, b, min_vertices=0), (a, t, b)))


def test_headline_report_is_thinned_pessimistically(monkeypatch):
    """The headline DP-SGD report's chains (about 180,000 vertices each) are thinned by
    default since issue 27: its mu is never below the full curve's and within the
    tolerance (Gomez et al. Eq. 21: mu moves by at most about 1.3 THIN_RTOL relative)."""
    import fdpkit as fp

    run = fp.dpsgd(noise_multiplier=9.4, sample_rate=16384 / 50000, steps=2000)
    thin = fp.privacy_report(run)
    monkeypatch.setattr(thinning, "THIN_MIN_VERTICES", 1 << 30)
    full = fp.privacy_report(run)
    assert len(thin.curve.alphas) < len(full.curve.alphas) / 4
    assert full.mu <= thin.mu <= full.mu * (1 + 1.3 * THIN_RTOL)
    assert thin.mu >= 1.56695 - 1e-5


@pytest.mark.parametrize("mu", [1.5, 3.0, 8.0])
def test_thinned_tpr_keeps_the_privacy_profile_sound(mu):
    """The privacy profile read from the thinned chain's TPRs (vertex_profile searches their
    slopes, so they must stay concave) is never below the full chain's, at eps = 0 (the
    diagonal, where the beta run's envelope vertices are) and above. Until issue 27 those
    vertices took the next vertex's TPR, and delta(0) could come out below the full chain's."""
    from fdpkit.curves.base import vertex_profile

    chain = _gaussian_chain(mu, 200_000)
    a2, t2, _ = thin_chain(*chain, min_vertices=0)
    eps = np.concatenate([[0.0], np.geomspace(1e-6, 3.0 * mu, 400)])
    full, thin = vertex_profile(chain[0], chain[1], eps), vertex_profile(a2, t2, eps)
    assert np.all(thin >= full * (1 - CHECK_RTOL))
    # within the tolerance of the vertex that attains delta: TPR moves by at most THIN_RTOL
    # times the smaller of TPR and beta there
    a, t, b = chain
    at = np.array([np.argmax(t - np.exp(e) * a) for e in eps])
    assert np.all(thin - full <= THIN_RTOL * np.minimum(t[at], b[at]) * (1 + 1e-6) + 1e-15)


def _headline_chains():
    """The steep chains (remove, add) of the headline DP-SGD report's PLD."""
    import fdpkit as fp
    from fdpkit.accounting.profile import PldProfile

    acc = fp.account(fp.dpsgd(noise_multiplier=9.4, sample_rate=16384 / 50000, steps=2000),
                     discretization=1e-4)
    return [tuple(x.copy() for x in pld_curve._steep_chain(d)) for d in PldProfile(acc.pld).directions]


def test_dominated_chain_dropped_before_thinning_is_sound(monkeypatch):
    """Of the headline report's two chains the add direction lies almost wholly below the
    remove direction: it is cut down to the points not below the thinned remove chain
    before its own thinning (pld_curve._thinned). The curve is never above the full one in
    beta, within the tolerance of it, and as tight as thinning both chains whole."""
    chains = _headline_chains()
    assert all(len(c[0]) > thinning.THIN_MIN_VERTICES for c in chains)
    plain = [thin_chain(*c) for c in chains]
    ours = pld_curve._thinned([tuple(x.copy() for x in c) for c in chains])
    assert sum(len(c[0]) for c in ours) < sum(len(c[0]) for c in plain)
    monkeypatch.setattr(thinning, "THIN_MIN_VERTICES", 1 << 62)  # the hulls below thin nothing more
    full = pld_curve._symmetric_hull([tuple(x.copy() for x in c) for c in chains])
    curves = {name: pld_curve._symmetric_hull([tuple(x.copy() for x in c) for c in cs])
              for name, cs in (("plain", plain), ("ours", ours))}
    grid = np.geomspace(1e-20, 0.2, 1500)
    bf = full.beta(grid)
    for c in curves.values():
        b = c.beta(grid)
        assert np.all(b <= bf * (1 + CHECK_RTOL))
        assert np.all(bf - b <= THIN_RTOL * np.minimum(bf, 1 - bf) * (1 + 1e-6) + 1e-15)
    # (1e-12: far above the rounding of the vertices' norm_isf, a few units in the last place)
    assert fit_gdp(curves["ours"]).mu <= fit_gdp(curves["plain"]).mu * (1 + 1e-12)


def test_a_wholly_dominated_large_chain_is_left_out():
    """Two large chains, one wholly below the other (its first vertex too: the other's
    m_inf is above 0): the dominated one loses every point before its thinning and is left
    out; the curve is the dominant chain's own (until the fix, an IndexError)."""
    top, low = _gaussian_chain(3.0, 50_000), _gaussian_chain(2.0, 50_000)
    top[1][0], top[2][0] = 1e-30, 1.0  # a tiny mass at +inf: TPR above 0 at FPR 0
    both = pld_curve._symmetric_hull([tuple(x.copy() for x in top), tuple(x.copy() for x in low)])
    alone = pld_curve._symmetric_hull([top])
    grid = np.geomspace(1e-12, 0.9, 200)
    assert np.array_equal(both.beta(grid), alone.beta(grid))
