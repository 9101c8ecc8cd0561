"""The one adapter that reads dp_accounting's private PMF attributes: a round trip."""

from importlib import metadata

import numpy as np

from _reference_bounds import DPA_TAIL_TRUNCATION, DPA_TRUNCATION_RISE, dpa_delta_roundoff

from fdpkit.accounting import tilted
from fdpkit.accounting._pld_adapter import PINNED_VERSION, pld_from_arrays, pmf_arrays
from fdpkit.accounting.pld import build_pld
from fdpkit.mechanisms import Gaussian, Laplace, Subsampled, dpsgd

EPS = np.linspace(0, 6, 25)
#: fdpkit's vectorised eps(delta) vs dp_accounting's loop on the same PLD: the 1e-9 round-up
#: (profile.EPS_SAFETY_RTOL) plus both implementations' rounding of the tail sums, whose
#: log-ratio amplifies it; measured up to 18 n u beyond the round-up (n = 132,341 masses,
#: eps 0.069 at delta 0.1: 4.9e-9 in all). Not a derived bound (issue 22 leaves it open).
EPS_VECTORISED_RTOL = 1e-8
#: Points whose dp_accounting delta exceeds this multiple of its round-off bound E are
#: compared to a relative accuracy of about 2 / MEANINGFUL (and the tilted bound w).
MEANINGFUL = 1e3


def test_pinned_version_is_installed():
    assert metadata.version("dp-accounting") == PINNED_VERSION


def test_round_trip_preserves_the_profile():
    for mech in (Gaussian(1.0), Subsampled(Laplace(1.0), 0.1), dpsgd(2.0, 0.05, 50)):
        pld = build_pld(mech, 1e-3)
        remove, add = pmf_arrays(pld)
        assert remove.probs.ndim == 1 and len(remove.losses) == len(remove.probs)
        assert np.all(np.diff(remove.losses) > 0)
        again = pld_from_arrays(remove, add)
        # the same dp_accounting code on the same arrays: identical, bit for bit
        np.testing.assert_array_equal(again.get_delta_for_epsilon(EPS), pld.get_delta_for_epsilon(EPS))


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
            assert ours == theirs or ours - theirs <= EPS_VECTORISED_RTOL * theirs, (mech, delta, ours, theirs)


def test_concurrent_composition_is_identical_to_dp_accounting(monkeypatch):
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    from fdpkit.accounting import _pld_adapter as adapter

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
    # "identical" above is the same dp_accounting code on the same inputs (threads only
    # change where it runs). build_pld composes Repeated and Composed with accounting.tilted
    # instead: test_tilted_composition_agrees_with_dp_accounting_within_its_round_off.


def _repaired(pld):
    return [None if a is None else tilted.repair(a) for a in pmf_arrays(pld)]


def _check_within_bounds(ours, ref, parts_by_direction, dpa_err):
    """ours (tilted) against ref (dp_accounting on the same repaired single-step PMFs):
    exact <= ours <= exact (1 + w) with w tilted's own achieved bound (Step 2), and
    exact - E <= ref <= exact + DPA_TRUNCATION_RISE + E with E dp_accounting's round-off."""
    worst = max(tilted._compose_once(parts, np.float64)[1] for parts in parts_by_direction)
    assert worst <= tilted.REL_TAIL
    d_ours, d_ref = ours.get_delta_for_epsilon(EPS), ref.get_delta_for_epsilon(EPS)
    assert np.all(d_ours >= d_ref - DPA_TRUNCATION_RISE - dpa_err), (d_ours, d_ref, dpa_err)
    assert np.all(d_ours <= (d_ref + dpa_err) * (1 + worst)), (d_ours, d_ref, dpa_err, worst)
    # not vacuous: on these points the two bounds above pin the tilted delta to within
    # about a relative w + 2 / MEANINGFUL of dp_accounting's
    assert (d_ref > MEANINGFUL * dpa_err).sum() >= 4


def test_tilted_composition_agrees_with_dp_accounting_within_its_round_off():
    """Issue 22: no tolerance from one CPU's luck. dp_accounting composes the same repaired
    single-step PMFs (so that both compose one input); its deltas carry its tail truncation
    and FFT round-off (bounded on these inputs by _reference_bounds), the tilted ones are
    upper bounds within their own achieved relative bound. At delta ~ 1e-14 dp_accounting's
    value is round-off: 4 % apart there on an AVX-512 Xeon, and nothing is claimed there."""
    from fdpkit.mechanisms import Composed, Repeated

    single = build_pld(Subsampled(Gaussian(1.5), 0.05), 1e-3)
    other = build_pld(Subsampled(Laplace(2.0), 0.1), 1e-3)
    rs, ro = _repaired(single), _repaired(other)
    rs_add, ro_add = rs[1] or rs[0], ro[1] or ro[0]

    rep = build_pld(Repeated(Subsampled(Gaussian(1.5), 0.05), 40), 1e-3)
    ref = pld_from_arrays(*rs).self_compose(40, DPA_TAIL_TRUNCATION)
    err = max(dpa_delta_roundoff([(a.probs, 40)], real=False) for a in (rs[0], rs_add))
    _check_within_bounds(rep, ref, [[(rs[0], 40)], [(rs_add, 40)]], err)

    comp = build_pld(Composed([Subsampled(Gaussian(1.5), 0.05), Subsampled(Laplace(2.0), 0.1)]), 1e-3)
    ref = pld_from_arrays(*rs).compose(pld_from_arrays(*ro), DPA_TAIL_TRUNCATION)
    err = max(dpa_delta_roundoff([(a.probs, 1), (b.probs, 1)], real=True)
              for a, b in ((rs[0], ro[0]), (rs_add, ro_add)))
    _check_within_bounds(comp, ref, [[(rs[0], 1), (ro[0], 1)], [(rs_add, 1), (ro_add, 1)]], err)


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


def _same_arrays(ours, theirs):
    for a, b in zip(ours, theirs, strict=True):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert a.losses.tobytes() == b.losses.tobytes() and a.probs.tobytes() == b.probs.tobytes()
        assert a.infinity_mass == b.infinity_mass and a.discretization == b.discretization


def test_native_pld_reads_back_what_dp_accountings_object_would():
    # NativePld hands fdpkit the arrays that pmf_arrays would read from pld_from_arrays's
    # object (single steps: rebuilt on the grid; compositions: on their exact grid), and builds
    # that object, with the same numbers, only when asked
    import pickle

    from dp_accounting.pld import privacy_loss_distribution as pldlib

    from fdpkit.accounting._pld_adapter import NativePld, as_dp_accounting, native_pld
    from fdpkit.mechanisms import Repeated

    for mech in (Subsampled(Gaussian(1.5), 0.05), Subsampled(Laplace(2.0), 0.1), Gaussian(1.0),
                 Repeated(Subsampled(Gaussian(1.5), 0.05), 40), dpsgd(2.0, 0.05, 50)):
        pld = build_pld(mech, 1e-3)
        assert isinstance(pld, NativePld) and pld._pld is None
        remove, add = pld._source
        _same_arrays(pmf_arrays(pld), pmf_arrays(pld_from_arrays(remove, add)))
        _same_arrays(pmf_arrays(native_pld(remove, add)), pmf_arrays(pld_from_arrays(remove, add)))
        again = pickle.loads(pickle.dumps(pld))
        _same_arrays(pmf_arrays(again), pmf_arrays(pld))
        np.testing.assert_array_equal(pld.get_delta_for_epsilon(EPS), pld_from_arrays(remove, add).get_delta_for_epsilon(EPS))
        real = as_dp_accounting(pld)
        assert type(real) is pldlib.PrivacyLossDistribution and as_dp_accounting(pld) is real
        assert as_dp_accounting(real) is real and as_dp_accounting(None) is None


def test_native_curve_pmf_is_dp_accountings_connect_the_dots():
    # from_curve._direction_arrays (Doroshenko et al. Algorithm 1, derived in its docstring) gives
    # the floats of dp_accounting's create_pmf_pessimistic_connect_dots_fixed_gap, on dense
    # and sparse (<= 1000 points) grids, symmetric and not, and the single-loss case
    from fdpkit.accounting.from_curve import native_pld_from_curve, pld_from_curve
    from fdpkit.accounting.pld import fixed_size_step_curve
    from fdpkit.curves import GaussianCurve, LaplaceCurve, PiecewiseLinearCurve

    curves = [GaussianCurve(1.0), LaplaceCurve(0.7), fixed_size_step_curve(1.2, 0.05, "replace-one", 1e-3),
              PiecewiseLinearCurve.from_tpr([0.0, 0.1, 0.5, 1.0], [0.0, 0.45, 0.8, 1.0]),
              PiecewiseLinearCurve.from_tpr([0.0, 1.0], [0.0, 1.0])]
    for c in curves:
        for d in (1e-3, 0.05, 0.5):
            native, theirs = native_pld_from_curve(c, d), pld_from_curve(c, d)
            _same_arrays(pmf_arrays(native), pmf_arrays(theirs))
            built = native.to_dp_accounting()  # pld_from_curve's own object (sparse PMFs stay sparse)
            assert type(built) is type(theirs)
            np.testing.assert_array_equal(built.get_delta_for_epsilon(EPS), theirs.get_delta_for_epsilon(EPS))
            assert built.get_epsilon_for_delta(1e-5) == theirs.get_epsilon_for_delta(1e-5)
