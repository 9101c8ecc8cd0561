"""The one adapter that reads dp_accounting's private PMF attributes: a round trip."""

from importlib import metadata

import numpy as np

from fdpkit.accounting._pld_adapter import PINNED_VERSION, pld_from_arrays, pmf_arrays
from fdpkit.accounting.pld import build_pld
from fdpkit.mechanisms import Gaussian, Laplace, Subsampled, dpsgd

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
            assert ours == theirs or ours - theirs <= 2e-9 * theirs, (mech, delta, ours, theirs)
