"""The one adapter that reads dp_accounting's private PMF attributes: a round trip."""

from importlib import metadata

import numpy as np

from fdpkit.accounting._pld_adapter import PINNED_VERSION, pld_from_arrays, pmf_arrays
from fdpkit.accounting.pld import build_pld
from fdpkit.mechanisms import Gaussian, Laplace, Subsampled, dpsgd

#: dp_accounting's FFT round-off in a tail sum (absolute), in the comparisons below
DP_ACCOUNTING_NOISE = 5e-15
EPS = np.linspace(0, 6, 25)


def test_pinned_version_is_installed():
    assert metadata.version("dp-accounting") == PINNED_VERSION


def test_round_trip_preserves_the_profile():
    for mech in (Gaussian(1.0), Subsampled(Laplace(1.0), 0.1), dpsgd(2.0, 0.05, 50)):
        pld = build_pld(mech, 1e-3)
        remove, add = pmf_arrays(pld)
        assert remove.probs.ndim == 1 and len(remove.losses) == len(remove.probs)
        assert np.all(np.diff(remove.losses) > 0)
        again = pld_from_arrays(remove, add)
        np.testing.assert_allclose(again.get_delta_for_epsilon(EPS), pld.get_delta_for_epsilon(EPS), rtol=1e-12, atol=1e-300)


def test_symmetric_pld_has_no_add_direction():
    remove, add = pmf_arrays(build_pld(Gaussian(1.0), 1e-3))
    assert add is None and remove.infinity_mass >= 0


def test_vectorised_epsilon_matches_dp_accounting():
    from fdpkit.accounting.profile import pld_epsilon_for_delta

    for mech in (Gaussian(1.0), dpsgd(2.0, 0.05, 50), dpsgd(0.8, 0.01, 300), Subsampled(Laplace(0.5), 0.2)):
        pld = build_pld(mech, 1e-3)
        for delta in (1e-1, 1e-3, 1e-5, 1e-9, 1e-12, 1e-300, 0.0):
            ours, theirs = pld_epsilon_for_delta(pld, delta), pld.get_epsilon_for_delta(delta)
            assert ours >= theirs, (mech, delta, ours, theirs)       # never optimistic
            assert ours == theirs or ours - theirs <= 1e-8 * theirs, (mech, delta, ours, theirs)


def test_concurrent_composition_is_identical_to_dp_accounting(monkeypatch):
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    from fdpkit.accounting import _pld_adapter as adapter
    from fdpkit.mechanisms import Composed, Repeated

    single = build_pld(Subsampled(Gaussian(1.5), 0.05), 1e-3)
    other = build_pld(Subsampled(Laplace(2.0), 0.1), 1e-3)
    pairs = [
        (adapter.self_compose(single, 40, 1e-15), single.self_compose(40, 1e-15)),
        (adapter.compose(single, other, 1e-15), single.compose(other, 1e-15)),
    ]
    monkeypatch.setenv("FDPKIT_THREADS", "1")
    pairs.append((adapter.self_compose(single, 40, 1e-15), single.self_compose(40, 1e-15)))
    for ours, theirs in pairs:
        assert isinstance(ours, pldlib.PrivacyLossDistribution)
        for a, b in zip(pmf_arrays(ours), pmf_arrays(theirs)):
            np.testing.assert_array_equal(a.probs, b.probs)
            np.testing.assert_array_equal(a.losses, b.losses)
            assert a.infinity_mass == b.infinity_mass
    # build_pld composes Repeated and Composed with accounting.tilted (round-off bounded):
    # its profile agrees with dp_accounting's where round-off does not matter (dp_accounting's
    # FFT round-off is ~1e-15 absolute; since issue 29 fdpkit resolves the tail below it,
    # e.g. 3.4e-15 where dp_accounting reads 6.0e-15, so the absolute tolerance is that noise)
    rep = build_pld(Repeated(Subsampled(Gaussian(1.5), 0.05), 40), 1e-3)
    np.testing.assert_allclose(rep.get_delta_for_epsilon(EPS), pairs[0][1].get_delta_for_epsilon(EPS),
                               rtol=2e-5, atol=DP_ACCOUNTING_NOISE)
    comp = build_pld(Composed([Subsampled(Gaussian(1.5), 0.05), Subsampled(Laplace(2.0), 0.1)]), 1e-3)
    np.testing.assert_allclose(comp.get_delta_for_epsilon(EPS), pairs[1][1].get_delta_for_epsilon(EPS),
                               rtol=2e-5, atol=DP_ACCOUNTING_NOISE)


def test_profile_skip_search_keeps_dp_accountings_answer_on_a_dense_delta_grid():
    """PldProfile skips the losses where neither of dp_accounting's exits can fire
    (profile._skip_index, computed once per direction): one profile, many deltas in any
    order, each equal to the accountant's own epsilon (up to the documented round-up)."""
    from fdpkit.accounting.profile import EPS_SAFETY_RTOL, PldProfile

    deltas = np.concatenate([np.geomspace(1e-300, 0.9, 45), [0.0, 1e-5, 1e-10]])
    rng = np.random.default_rng(3)
    for mech in (dpsgd(9.4, 0.32768, 200), dpsgd(0.7, 0.02, 400), Subsampled(Laplace(0.5), 0.2), Gaussian(3.0)):
        pld = build_pld(mech, 1e-3)
        prof = PldProfile(pld)
        for delta in rng.permutation(deltas):
            ours, theirs = prof.epsilon_for_delta(float(delta)), pld.get_epsilon_for_delta(float(delta))
            assert ours >= theirs, (mech, delta, ours, theirs)
            assert ours <= theirs * (1 + 2 * EPS_SAFETY_RTOL) + 1e-300, (mech, delta, ours, theirs)
