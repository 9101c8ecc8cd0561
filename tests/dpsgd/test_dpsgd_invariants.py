"""Hypothesis invariants: the rounding rules never undercount what ran, and group privacy on
a sound piecewise-linear curve stays sound (never above G_{k mu})."""

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fdpkit as fp
from dp_accounting.pld import privacy_loss_distribution as pldlib

from fdpkit import group_curve
from fdpkit.accounting import curve_from_pld
from fdpkit.curves import GaussianCurve

ALPHAS = np.geomspace(1e-10, 0.999, 300)
SOUND_SLACK = 1e-12  # float rounding allowed above the exact curve (beta, absolute)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10**6), b=st.integers(1, 10**6), e=st.decimals("0.01", "50", places=2))
def test_steps_from_epochs_round_up_exactly(n, b, e):
    b = min(b, n)
    m = fp.dpsgd(1.0, batch_size=b, dataset_size=n, epochs=float(e)) if float(e) * n / b <= 10**7 else None
    if m is None:
        return
    exact = Fraction(str(e)) * n / b
    assert m.steps == math.ceil(exact)  # never fewer steps than ran, never one too many


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 10**5), b=st.integers(1, 10**5), t=st.integers(1, 10**4))
def test_shuffled_participations_cover_every_partition(n, b, t):
    b = min(b, n)
    p = fp.dpsgd(1.0, batch_size=b, dataset_size=n, steps=t, sampling="shuffled",
                 relation="zero-out").phases[0].participations
    # with or without a dropped last batch, a pass has at least floor(n/b) batches
    assert p >= math.ceil(t / math.ceil(n / b)) and p == math.ceil(t / (n // b))


@settings(max_examples=8, deadline=None)
@given(mu=st.floats(0.1, 3.0), k=st.integers(2, 5))
def test_group_curve_of_a_sound_curve_is_sound(mu, k):
    lower = curve_from_pld(pldlib.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=1e-3))
    g = group_curve(lower, k)
    assert g.bound == "lower"
    assert (g.beta(ALPHAS) - GaussianCurve(k * mu).beta(ALPHAS)).max() <= SOUND_SLACK
