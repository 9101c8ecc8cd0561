"""Large mu (issue 29, item 1): epsilon(delta) read inside the composition's tight region,
never at the Chernoff envelope of its last tilt, and a finite mu wherever the curve
supports one (alpha_min lowered by decades and stated with the mu).

References: dp_accounting's own PLDs of the same subsampled Gaussian composed by
``self_compose`` at the same discretization; the optimistic one (losses rounded down,
no connect-the-dots) is a lower bound on the truth, the pessimistic one an upper bound."""

import pytest
from dp_accounting.pld import privacy_loss_distribution as pldlib

import fdpkit as fp
from fdpkit.accounting import account, curve_from_pld
from fdpkit.fit import ALPHA_MIN_DEFAULT, fit_gdp, fit_gdp_adapted

DISC = 1e-3
#: fdpkit's epsilon at most this above dp_accounting's pessimistic one (before issue 29:
#: 264.5 against 169.3 at delta 1e-9 for sigma 0.5, q 0.5, T 100)
EPS_RTOL = 1e-4
#: fitted mu within this of the mu fitted to the optimistic (lower-bound) PLD's curve
MU_RTOL = 1e-2


def _dp_accounting(sigma, q, steps, pessimistic):
    return pldlib.from_gaussian_mechanism(
        sigma, sampling_prob=q, pessimistic_estimate=pessimistic, value_discretization_interval=DISC,
        use_connect_dots=pessimistic).self_compose(steps)


@pytest.mark.parametrize("sigma, q, steps", [(0.5, 0.5, 100), (0.5, 0.5, 200)])
def test_epsilon_at_large_mu_is_interior_and_tight(sigma, q, steps):
    acc = account(fp.dpsgd(sigma, q, steps), discretization=DISC)
    pess, opt = _dp_accounting(sigma, q, steps, True), _dp_accounting(sigma, q, steps, False)
    for delta in (1e-5, 1e-9, 1e-12):
        ours = acc.epsilon_for_delta(delta)
        assert ours >= opt.get_epsilon_for_delta(delta)  # sound
        assert ours <= pess.get_epsilon_for_delta(delta) * (1 + EPS_RTOL)  # tight
    # a smaller delta needs a larger epsilon (not one value at the window's edge)
    assert acc.epsilon_for_delta(1e-12) > acc.epsilon_for_delta(1e-9) + 10


def test_mu_beyond_the_default_range_is_stated_with_its_alpha_min():
    sigma, q, steps = 0.5, 0.5, 200  # mu ~ 13.7 > 2 z(1e-10) = 12.7
    acc = account(fp.dpsgd(sigma, q, steps), discretization=DISC)
    assert fit_gdp(acc.curve).mu == float("inf")  # the default range is empty ...
    fit = fit_gdp_adapted(acc.curve)
    assert fit.alpha_min == 1e-12 and "lowered" in fit.reason  # ... a decade or two lower it is not
    ref = fit_gdp(curve_from_pld(_dp_accounting(sigma, q, steps, False)), alpha_min=fit.alpha_min).mu
    assert ref <= fit.mu <= ref * (1 + MU_RTOL)
    # the curve's TPR never reaches 1 at FPR 0 (its beta near 1 keeps its digits)
    assert acc.curve.tpr(0.0) < 1e-15


def test_report_states_the_lowered_range():
    r = fp.privacy_report(fp.dpsgd(0.5, 0.5, 200), discretization=DISC, deltas=[1e-5])
    assert 13 < r.mu < 15 and r.alpha_min == r.provenance["alpha_min"] == 1e-12
    assert any("lowered to 1e-12" in w for w in r.warnings)
    assert r.failure_mode != "catastrophic"
    assert fit_gdp_adapted(fp.GaussianCurve(3.0), ALPHA_MIN_DEFAULT).alpha_min == 0.0


def test_a_run_beyond_every_readable_fpr_says_so():
    """sigma 0.5, q 0.5, T 10^4 (mu ~ 366 by the CLT): the certified curve is below FNR = FPR
    at every FPR down to 1e-300, so no finite mu can be read at any FPR a float holds. The
    fit said "lower alpha_min", which the report had already done down to 1e-300, and the
    warning printed f(0) = 1 - 1.0e+00."""
    r = fp.privacy_report(fp.dpsgd(0.5, 0.5, 10_000))
    assert r.mu == float("inf")
    assert "every FPR a float can hold" in r.fit.reason and "lower alpha_min" not in r.fit.reason
    assert any("f(0) = 0: 1 - f(0) is the accountant's bound" in w for w in r.warnings)
