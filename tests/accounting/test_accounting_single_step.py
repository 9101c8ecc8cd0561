"""The native single steps (fdpkit.accounting.single_step) against dp_accounting 0.6.0, the
reference: the same grid, the same PMF within a stated round-off bound, and a delta(eps)
that is never below dp_accounting's minus that bound (in practice: never below it)."""

import math

import numpy as np
import pytest
from dp_accounting import privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pldlib

from fdpkit.accounting import _pld_adapter as adapter
from fdpkit.accounting import single_step

#: Per grid point, |p - p_ref| <= envelope + POINTWISE_UNITS u (1 + e^d) / (e^d - 1): both
#: implementations evaluate Eq. (1) to within ROUNDOFF_UNITS u per delta, in different
#: operation orders, and Eq. (2) divides differences of deltas by e^d - 1.
POINTWISE_UNITS = 2 * single_step.ROUNDOFF_UNITS
U = float(np.finfo(float).eps) / 2
#: How much more pessimistic than dp_accounting fdpkit's delta(eps) may be for eps >= 0:
#: the envelope plus the two implementations' own round-off (below 1e-12 here) ...
DELTA_CLOSENESS = 1e-12
#: ... and for eps < 0, where the negative masses of Eq. (2) that are clipped to 0 after the
#: raise add up (total mass above 1 by up to 1e-10 more than dp_accounting's own excess,
#: which reaches 3e-9).
DELTA_CLOSENESS_NEGATIVE = 1e-9
#: The envelope at the top of the grid where the reference's delta is 0: 2 ROUNDOFF_UNITS u
#: (A + B (2 + eps + |ln B|)) with A, B <= 1/2 (Laplace), below 1e-13.
TOP_ROUNDOFF = 1e-13
EPS = np.concatenate([np.linspace(-1.0, 0.0, 5), np.linspace(0.01, 8.0, 40)])
REL = privacy_accountant.NeighboringRelation
SIGMAS = [0.5, 1.0, 2.0, 9.4, 30.0]
RATES = [1e-3, 0.05, 0.32768, 0.9, 1.0]
#: dp_accounting itself takes up to a second per step at d = 1e-4 and small sigma
CASES = [(s, q, d, rel) for s in SIGMAS for q in RATES for d in (1e-2, 1e-3)
         for rel in ("add-remove", "replace-one")] + [
    (9.4, 16384 / 50000, 1e-4, "add-remove"), (9.4, 16384 / 50000, 1e-4, "replace-one"),
    (2.0, 0.01, 1e-4, "add-remove"), (30.0, 0.9, 1e-4, "add-remove")]


def _reference(sigma, q, d, relation, sensitivity=1.0):
    rel = REL.REPLACE_ONE if relation == "replace-one" else REL.ADD_OR_REMOVE_ONE
    return pldlib.from_gaussian_mechanism(sigma, sensitivity=sensitivity, sampling_prob=q,
                                          value_discretization_interval=d, use_connect_dots=True,
                                          neighboring_relation=rel)


def _check_direction(native: single_step.StepArrays, ref: adapter.PmfArrays, d: float):
    pmf = native.pmf
    assert pmf.losses[0] == pytest.approx(ref.losses[0], abs=d / 4)  # the same grid
    assert len(pmf.probs) == len(ref.probs)
    assert np.all(pmf.probs >= 0) and np.all(np.isfinite(pmf.probs))
    env = native.envelope
    # raising the deltas by env changes p_i by at most the envelope's own Eq. (2) terms
    de = np.abs(np.diff(env))
    moved = np.zeros_like(env)
    moved[0] = env[0] + de[0] / math.expm1(d)
    moved[1:-1] = (de[1:] + math.exp(d) * de[:-1]) / math.expm1(d)
    moved[-1] = de[-1] / -math.expm1(-d)
    tol = moved + POINTWISE_UNITS * U * (1 + math.exp(d)) / math.expm1(d)
    assert np.all(np.abs(pmf.probs - ref.probs) <= tol)
    assert pmf.infinity_mass >= ref.infinity_mass
    # ours = computed + env, each computed delta within env / 2 of the exact one
    assert pmf.infinity_mass - ref.infinity_mass <= 2 * env[-1] + POINTWISE_UNITS * U * ref.infinity_mass
    # the envelope is non-increasing and relative in the tail (no +inf mass out of the body's
    # round-off; Laplace's top delta is an exact 0 computed as A - B, A = B = e^-1 / 2)
    assert np.all(np.diff(env) <= 0)
    assert env[-1] <= max(1e-9 * ref.infinity_mass, TOP_ROUNDOFF)


def _delta(pmf: adapter.PmfArrays, eps: np.ndarray) -> np.ndarray:
    """delta(eps) = m + sum_l p(l) max(0, 1 - e^{eps - l}) of one direction."""
    w = np.maximum(0.0, -np.expm1(eps[:, None] - pmf.losses[None, :]))
    return pmf.infinity_mass + w @ pmf.probs


@pytest.mark.parametrize("sigma,q,d,relation", CASES)
def test_gaussian_step_equals_dp_accounting(sigma, q, d, relation):
    remove, add = single_step.gaussian_step(sigma, 1.0, q, d, relation)
    ref_remove, ref_add = adapter.pmf_arrays(_reference(sigma, q, d, relation))
    assert (add is None) == (ref_add is None)
    for nat, ref in ((remove, ref_remove), (add, ref_add)):
        if nat is None:
            continue
        _check_direction(nat, ref, d)
        ours, theirs = _delta(nat.pmf, EPS), _delta(ref, EPS)
        assert np.all(ours >= theirs - nat.bound)      # the soundness statement
        assert np.all(ours >= theirs)                   # and in fact never below at all
        assert np.all(ours - theirs <= np.where(EPS >= 0, nat.bound + DELTA_CLOSENESS,
                                                DELTA_CLOSENESS_NEGATIVE))


@pytest.mark.parametrize("scale,q", [(0.5, 0.01), (0.5, 0.5), (2.0, 0.2), (1.0, 1.0), (0.1, 0.05)])
def test_laplace_step_equals_dp_accounting(scale, q):
    d = 1e-3
    remove, add = single_step.laplace_step(scale, 1.0, q, d)
    ref_remove, ref_add = adapter.pmf_arrays(pldlib.from_laplace_mechanism(
        scale, sampling_prob=q, value_discretization_interval=d, use_connect_dots=True))
    for nat, ref in ((remove, ref_remove), (add, ref_add)):
        if nat is None:
            assert ref is None
            continue
        _check_direction(nat, ref, d)
        assert np.all(_delta(nat.pmf, EPS) >= _delta(ref, EPS))


def test_sensitivity_scales_like_dp_accounting():
    remove, add = single_step.gaussian_step(2.0, 2.0, 0.2, 1e-3)
    ref_remove, ref_add = adapter.pmf_arrays(_reference(2.0, 0.2, 1e-3, "add-remove", 2.0))
    _check_direction(remove, ref_remove, 1e-3)
    _check_direction(add, ref_add, 1e-3)


def test_truncated_and_fixed_size_steps_match_the_reference(monkeypatch):
    from fdpkit.accounting.pld import build_pld
    from fdpkit.mechanisms import dpsgd

    mechs = [dpsgd(1.2, batch_size=50, dataset_size=1000, steps=1, sampling="truncated-poisson",
                   max_batch_size=60),
             dpsgd(1.2, batch_size=50, dataset_size=1000, steps=1, sampling="fixed-size",
                   relation="replace-one"),
             dpsgd(1.2, sample_rate=0.05, steps=1, relation="replace-one")]
    native = [build_pld(m, 1e-3) for m in mechs]
    monkeypatch.setenv("FDPKIT_NATIVE_STEPS", "0")
    refs = [build_pld(m, 1e-3) for m in mechs]
    for ours, theirs in zip(native, refs):
        a, b = ours.get_delta_for_epsilon(EPS), theirs.get_delta_for_epsilon(EPS)
        assert np.all(a >= b - 1e-12) and np.all(a - b <= 1e-9)


def test_headline_mu_unchanged_and_never_lower():
    import fdpkit as fp

    mu = fp.privacy_report(fp.dpsgd(noise_multiplier=9.4, sample_rate=16384 / 50000, steps=2000)).mu
    assert abs(mu - 1.56695) <= 1e-5
    assert mu >= 1.5669487066468437   # the value with dp_accounting's single step (main)


@pytest.mark.parametrize("kwargs,match", [
    (dict(sigma=0.0, sensitivity=1.0, sample_rate=0.1, discretization=1e-3), "sigma"),
    (dict(sigma=1.0, sensitivity=-1.0, sample_rate=0.1, discretization=1e-3), "sensitivity"),
    (dict(sigma=1.0, sensitivity=1.0, sample_rate=1.5, discretization=1e-3), "sample_rate"),
    (dict(sigma=1.0, sensitivity=1.0, sample_rate=0.1, discretization=float("nan")), "discretization"),
    (dict(sigma=1.0, sensitivity=1.0, sample_rate=0.1, discretization=1e-3, relation="x"), "relation"),
])
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        single_step.gaussian_step(**kwargs)


@pytest.mark.parametrize("sigma,sensitivity,q,relation", [
    (1e15, 2.0, 0.01, "add-remove"), (1e20, 2.0, 0.01, "add-remove"), (1e20, 2.0, 0.01, "replace-one"),
    (1e20, 1.0, 1e-12, "add-remove"), (1e100, 1.0, 0.5, "replace-one")])
def test_huge_noise_steps_are_distributions(sigma, sensitivity, q, relation):
    # losses within a grid cell or two: clipping the raised p_0 once put a null mass above 1
    # at loss 0 (fixed-size replace-one at noise 1e20 failed "not a valid privacy loss distribution")
    for step in single_step.gaussian_step(sigma, sensitivity, q, 1e-4, relation):
        if step is None:
            continue
        pmf = step.pmf
        assert np.all(pmf.probs >= 0)
        assert math.fsum(pmf.probs) + pmf.infinity_mass <= 1.0 + 4 * U
        up = pmf.losses >= 0
        assert math.fsum(np.exp(-pmf.losses[up]) * pmf.probs[up]) <= 1.0 + 4 * U
        assert pmf.infinity_mass <= 1e-12   # no +inf mass out of round-off
        # the top loss rounds to 0 or below at this noise: the grid still reaches d, so the
        # round-off envelope of delta(0) is a mass at loss d, not at +inf (it was 2.6e-14)
        assert pmf.losses[-1] > 0 and pmf.infinity_mass == 0.0


@pytest.mark.parametrize("step, args, parameter", [
    (single_step.gaussian_step, (1e308, 1.0, 0.5, 1e-2), "sigma"),  # sigma ** 2 overflowed
    (single_step.gaussian_step, (1e-308, 1.0, 0.5, 1e-2), "sigma"),  # ZeroDivisionError
    (single_step.laplace_step, (1e-308, 1.0, 0.5, 1e-2), "scale"),
    (single_step.gaussian_step, (1.0, 1.0, 0.5, 1e300), "discretization"),
    (single_step.gaussian_step, (1.0, 1.0, float("nan"), 1e-2), "sample_rate"),
    (single_step.gaussian_step, (1.0, float("inf"), 0.5, 1e-2), "sensitivity"),
])
def test_extreme_parameters_are_a_parameter_error(step, args, parameter):
    # a raw OverflowError / ZeroDivisionError escaped (and gaussian_pld falls back to
    # dp_accounting only on a ValueError)
    from fdpkit.errors import ParameterError

    with pytest.raises(ParameterError) as info:
        step(*args)
    assert info.value.parameter == parameter


def test_tiny_noise_in_the_discretization_rule_is_no_overflow():
    # choose_discretization squared sensitivity / sigma with ** (OverflowError at sigma 1e-308)
    import fdpkit as fp

    with pytest.raises(ValueError, match="noise_multiplier") as info:
        fp.privacy_report(fp.dpsgd(1e-308, 0.5, 10))
    assert not isinstance(info.value, OverflowError)
