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
