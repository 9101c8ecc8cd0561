"""DP-SGD in training terms: batch size, dataset size, epochs and their rounding rule;
hints; schedules and Opacus history import; bad input for every new parameter."""

import math

import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from _reference_bounds import dpa_phases_epsilon_bracket

import fdpkit as fp
from fdpkit.mechanisms import DPSGD, dpsgd_from_opacus_history, dpsgd_schedule, mechanism_from_dict

DISC = 1e-3
#: fdpkit's eps(delta) is at most this much above the exact one (tilted composition's
#: relative bound, the profile's round-up); against dp_accounting the exact value is
#: bracketed with its stated errors (tests/_reference_bounds.py)
EPS_RTOL = 1e-6


def test_training_shape_and_rounding_rule():
    m = fp.dpsgd(1.1, batch_size=256, dataset_size=60000, epochs=60)
    assert isinstance(m, DPSGD)
    assert m.steps == 14063  # ceil(60 * 60000 / 256) = ceil(14062.5)
    assert m.sample_rate == 256 / 60000
    assert (m.sampling, m.relation, m.unit) == ("poisson", "add-remove", "example")
    # exact decimal arithmetic: 0.1 epoch of 1000 examples in batches of 10 is 10 steps, not 11
    assert fp.dpsgd(1.0, batch_size=10, dataset_size=1000, epochs=0.1).steps == 10
    # epochs with only a sample rate: steps = ceil(epochs / q)
    assert fp.dpsgd(1.0, 0.3, epochs=1).steps == 4
    # positional (noise_multiplier, sample_rate, steps) keeps working
    assert fp.dpsgd(9.4, 0.32768, 2000).steps == 2000


def test_hints_name_the_public_parameter():
    with pytest.raises(ValueError, match=r"sample_rate must be in \(0, 1\], got 256: did you mean batch_size=256 "
                                         r"with dataset_size=N \(--batch-size 256 --dataset-size N\)\?"):
        fp.dpsgd(1.1, 256, 100)
    with pytest.raises(ValueError, match=r"batch_size must be a whole number of examples, got 0.004: did you mean sample_rate=0.004"):
        fp.dpsgd(1.1, batch_size=0.004, dataset_size=1000, steps=10)
    with pytest.raises(ValueError, match=r"^steps must be a whole number, got 14062.5") as err:
        fp.dpsgd(1.1, 0.01, 14062.5)
    assert "times" not in str(err.value)


@pytest.mark.parametrize("kwargs, match", [
    (dict(noise_multiplier=0.0, sample_rate=0.1, steps=10), r"noise_multiplier must be > 0"),
    (dict(noise_multiplier=1.0, steps=10), r"exactly one of sample_rate or batch_size"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, batch_size=10, dataset_size=100, steps=10), r"exactly one of sample_rate or batch_size"),
    (dict(noise_multiplier=1.0, batch_size=10, steps=10), r"dataset_size is required with batch_size"),
    (dict(noise_multiplier=1.0, batch_size=200, dataset_size=100, steps=10), r"batch_size must be at most dataset_size=100"),
    (dict(noise_multiplier=1.0, batch_size=10, dataset_size=0, steps=10), r"dataset_size must be in \[1, "),
    (dict(noise_multiplier=1.0, batch_size=10, dataset_size=100.5, steps=10), r"dataset_size must be a whole number"),
    (dict(noise_multiplier=1.0, sample_rate=0.1), r"exactly one of steps or epochs"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=0), r"steps must be in \[1,"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, epochs=-1), r"epochs must be > 0"),
    (dict(noise_multiplier=1.0, sample_rate=1e-9, epochs=100), r"epochs=100 give .* steps, more than"),
    # the count had 309 digits at epochs=1e308
    (dict(noise_multiplier=1.0, sample_rate=0.1, epochs=1e308), r"^epochs=1e\+308 give over 10\^30\d steps, more than"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, sampling="bogus"), r"sampling must be one of poisson, truncated-poisson, fixed-size, shuffled"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, relation="swap"), r"relation must be one of add-remove, replace-one, zero-out"),
    (dict(noise_multiplier=1.0, batch_size=10, dataset_size=100, steps=10, sampling="shuffled"),
     r"relation 'add-remove' cannot be accounted with sampling 'shuffled': adding or removing one example reshuffles"),
    (dict(noise_multiplier=1.0, batch_size=10, dataset_size=100, steps=10, sampling="fixed-size"),
     r"relation 'add-remove' cannot be accounted with sampling 'fixed-size'"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, sampling="shuffled", relation="replace-one"),
     r"sampling 'shuffled' needs batch_size and dataset_size"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, dataset_size=100, steps=10, sampling="truncated-poisson"),
     r"sampling 'truncated-poisson' needs max_batch_size"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, sampling="truncated-poisson", max_batch_size=20),
     r"sampling 'truncated-poisson' needs dataset_size"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, dataset_size=100, steps=10, sampling="truncated-poisson", max_batch_size=0),
     r"max_batch_size must be in \[1, 100\]"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, max_batch_size=20), r"max_batch_size applies only to sampling='truncated-poisson'"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, unit="household"), r"unit must be one of example, user"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, examples_per_user=3), r"examples_per_user needs unit='user'"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, unit="user", examples_per_user=0), r"examples_per_user must be in \[1,"),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=10, unit="user", examples_per_user=1.5), r"examples_per_user must be a whole number"),
])
def test_bad_input(kwargs, match):
    nm = kwargs.pop("noise_multiplier")
    with pytest.raises(ValueError, match=match):
        fp.dpsgd(nm, **kwargs)


def test_spec_round_trip_and_old_spec_form():
    for m in (fp.dpsgd(1.1, batch_size=256, dataset_size=60000, epochs=2, sampling="shuffled", relation="zero-out"),
              fp.dpsgd(1.0, 0.01, 100, relation="replace-one", unit="user", examples_per_user=3),
              fp.dpsgd(1.0, 0.01, 100, dataset_size=1000, sampling="truncated-poisson", max_batch_size=20),
              dpsgd_schedule([(1.0, 0.01, 10), {"noise_multiplier": 2.0, "batch_size": 5, "epochs": 1}], dataset_size=100)):
        assert mechanism_from_dict(m.to_dict()) == m
    old = mechanism_from_dict({"kind": "dpsgd", "noise_multiplier": 2.0, "sample_rate": 0.05, "steps": 50})
    assert old == fp.dpsgd(2.0, 0.05, 50)
    with pytest.raises(ValueError, match=r"unknown field\(s\) for 'dpsgd': bogus"):
        mechanism_from_dict({"kind": "dpsgd", "noise_multiplier": 2.0, "sample_rate": 0.05, "steps": 50, "bogus": 1})


def test_opacus_history_import_matches_dp_accounting():
    # the exact shape of Opacus's RDPAccountant.history: a list of (noise_multiplier, sample_rate, num_steps)
    history = [(1.1, 0.004, 300), (0.9, 0.008, 100), (1.1, 0.004, 50)]
    m = dpsgd_from_opacus_history(history)
    assert m.steps == 450 and len(m.phases) == 3 and m.noise_multiplier is None
    # the exact eps bracketed from dp_accounting's composition of the same single steps,
    # allowing for its stated errors (tests/_reference_bounds.py)
    phases = []
    for nm, q, steps in history:
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=DISC)
        acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(nm)), 1)
        phases.append((acc._pld, steps))  # noqa: SLF001 (test-only read of its single step)
    low, high = dpa_phases_epsilon_bracket(phases, 1e-5)
    ours = fp.privacy_report(m, discretization=DISC).epsilon_for_delta(1e-5)
    assert low <= ours <= high * (1 + EPS_RTOL)


@pytest.mark.parametrize("history, match", [
    ("not a list", r"history must be a list"),
    ([], r"history must hold at least one"),
    ([(1.0, 0.1)], r"history\[0\] must be a \(noise_multiplier, sample_rate, steps\) triple"),
    ([(1.0, 0.1, 10), (1.0, 2.0, 10)], r"history\[1\]: sample_rate must be in \(0, 1\]"),
])
def test_opacus_history_bad_input(history, match):
    with pytest.raises(ValueError, match=match):
        dpsgd_from_opacus_history(history)


def test_schedule_bad_input():
    with pytest.raises(ValueError, match=r"phases\[1\]: unknown field\(s\): sigma"):
        dpsgd_schedule([(1.0, 0.1, 10), {"sigma": 1.0}])
    with pytest.raises(ValueError, match=r"phases\[0\]: noise_multiplier is required"):
        dpsgd_schedule([{"sample_rate": 0.1, "steps": 10}])
    with pytest.raises(ValueError, match=r"phases must be a non-empty list"):
        dpsgd_schedule([])
    # a schedule is the composition of its phases
    s = dpsgd_schedule([(1.0, 0.02, 30), (2.0, 0.05, 20)])
    both = fp.Composed([fp.dpsgd(1.0, 0.02, 30), fp.dpsgd(2.0, 0.05, 20)])
    assert fp.privacy_report(s, discretization=DISC).epsilon_for_delta(1e-5) == pytest.approx(
        fp.privacy_report(both, discretization=DISC).epsilon_for_delta(1e-5), rel=EPS_RTOL)
    assert math.isfinite(fp.privacy_report(s, discretization=DISC).mu)



#: A shuffled phase of 30 steps, 10 batches a pass: 3 participations by default.
SHUFFLED_PHASE = {"noise_multiplier": 2.0, "batch_size": 100, "steps": 30}
SHUFFLED = {"dataset_size": 1000, "sampling": "shuffled", "relation": "replace-one"}


@pytest.mark.parametrize("value, match", [
    ("abc", "must be a whole number"), (-1, r"must be in \[3, 30\]"), (0, r"must be in \[3, 30\]"),
    (1.5, "must be a whole number"), (True, "must be a whole number"),
    (2, r"must be in \[3, 30\].*at least ceil\(30 / 10\)"), (31, r"must be in \[3, 30\]"),
])
def test_schedule_participations_bad_values_are_refused(value, match):
    # they were accepted and ignored
    with pytest.raises(fp.ParameterError, match=r"^phases\[0\]: participations " + match) as e:
        dpsgd_schedule([{**SHUFFLED_PHASE, "participations": value}], **SHUFFLED)
    assert e.value.parameter == "participations"
    with pytest.raises(fp.ParameterError, match=r"^participations " + match):
        mechanism_from_dict({"kind": "dpsgd", **SHUFFLED_PHASE, **SHUFFLED, "participations": value})


def test_participations_take_effect_for_shuffled_batches_and_are_refused_elsewhere():
    # shuffled: mu = sqrt(P) * Delta / sigma with the P given (it gave the default P = 3's mu)
    given = dpsgd_schedule([{**SHUFFLED_PHASE, "participations": 5}], **SHUFFLED)
    assert given.phases[0].participations == 5
    assert fp.privacy_report(given, discretization=DISC).mu == pytest.approx(math.sqrt(5) * 2 / 2.0, rel=1e-12)
    assert dpsgd_schedule([SHUFFLED_PHASE], **SHUFFLED).phases[0].participations == 3
    # a spec keeps it through to_dict / from_dict (a loader's count, fdpkit.opacus)
    assert mechanism_from_dict(given.to_dict()) == given
    single = mechanism_from_dict({"kind": "dpsgd", **SHUFFLED_PHASE, **SHUFFLED, "participations": 4})
    assert single.phases[0].participations == 4 and mechanism_from_dict(single.to_dict()) == single
    # other schemes are accounted from the sample rate and steps: refused, saying why
    for sampling, relation in (("poisson", "add-remove"), ("fixed-size", "replace-one")):
        with pytest.raises(fp.ParameterError, match=r"participations applies only to sampling 'shuffled'") as e:
            dpsgd_schedule([{**SHUFFLED_PHASE, "participations": 5}], dataset_size=1000, sampling=sampling,
                           relation=relation)
        assert e.value.parameter == "participations"

def test_elementary_form_for_simulation():
    from fdpkit.audit import simulate_attack

    assert fp.dpsgd(2.0, 0.1, 40).elementary() == fp.Repeated(fp.Subsampled(fp.Gaussian(2.0), 0.1), 40)
    sh = fp.dpsgd(2.0, batch_size=10, dataset_size=100, epochs=3, sampling="shuffled", relation="replace-one")
    assert sh.elementary() == fp.Repeated(fp.Gaussian(2.0, 2.0), 3)
    assert fp.dpsgd(2.0, 0.1, 40, relation="replace-one").elementary() is None
    with pytest.raises(ValueError, match=r"DP-SGD with sampling 'poisson', relation 'replace-one' cannot be simulated"):
        simulate_attack(fp.dpsgd(2.0, 0.1, 40, relation="replace-one"), trials=10, seed=0)


@pytest.mark.parametrize("spec, name", [
    ({"kind": "dpsgd", "noise_multiplier": 1, "sample_rate": 0.5, "batch_size": 256, "steps": 100,
      "dataset_size": 60000}, "sample_rate"),
    ({"kind": "dpsgd", "noise_multiplier": 1, "batch_size": 600, "steps": 5, "epochs": 3, "dataset_size": 60000},
     "steps"),
])
def test_a_spec_whose_written_values_disagree_is_refused(spec, name):
    """A spec giving both sample_rate and batch_size (or steps and epochs) must agree: the
    sample rate was dropped, and q = 0.5 accounted as 256/60,000 (mu 0.23 instead of 5.4)."""
    from fdpkit.mechanisms import mechanism_from_dict

    with pytest.raises(fp.ParameterError, match=f"^{name} .* disagrees") as info:
        mechanism_from_dict(spec)
    assert info.value.parameter == name
    with pytest.raises(ValueError, match=r"phases\[0\]: " + name):
        fp.dpsgd_schedule([{k: v for k, v in spec.items() if k not in ("kind", "dataset_size")}], dataset_size=60000)
    # what to_dict writes (both, agreeing) still reads back, for one phase and a schedule
    m = fp.dpsgd(1.0, batch_size=256, dataset_size=60000, epochs=3)
    s = fp.dpsgd_schedule([{"noise_multiplier": 1.0, "batch_size": 256, "epochs": 2},
                           {"noise_multiplier": 2.0, "sample_rate": 0.01, "steps": 10}], dataset_size=60000)
    assert mechanism_from_dict(m.to_dict()) == m and mechanism_from_dict(s.to_dict()) == s


def test_a_step_count_past_4300_digits_is_named_not_a_conversion_error():
    # str(10**5000) raised Python's "Exceeds the limit (4300 digits)" ValueError from the message itself
    import fdpkit as fp

    with pytest.raises(fp.ParameterError, match="steps must be at most 10000000, got a 5001-digit number") as e:
        fp.dpsgd(1.0, 0.01, 10**5000)
    assert e.value.parameter == "steps"
