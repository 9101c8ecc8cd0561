"""delta(eps) beyond eps ~ 709, where e^eps overflows: the mass at alpha = 0 still counts."""

import numpy as np
import pytest

import fdpkit as fp

#: delta(eps) of an (eps0, delta0) curve is delta0 for every eps >= eps0.
EPSILONS = [700.0, 709.0, 710.0, 1e4, np.inf]


@pytest.mark.parametrize("curve", [fp.EpsDeltaCurve(1.0, 0.1), fp.EpsDeltaCurve(1.0, 0.1).to_piecewise()])
def test_delta_above_overflow_keeps_the_atom_at_zero(curve):
    got = np.asarray(curve.delta_for_epsilon(EPSILONS))
    assert np.all(got >= 0.1 - 1e-15)
    assert np.isfinite(got).all()
