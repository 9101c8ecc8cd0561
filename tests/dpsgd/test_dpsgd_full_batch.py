"""Full-batch DP-SGD (sample rate 1) is the Gaussian mechanism composed T times:
mu = sqrt(T) / sigma exactly, routed to the closed form everywhere (``account``, reports,
statement, sweeps, cost, calibration, compositions and the ledger). Moved from the core
reproducers."""

from __future__ import annotations

import math

import pytest

import fdpkit as fp
from fdpkit.calibrate import solver as cal
from fdpkit.accounting import account as accounting_account


# full batches (q = 1)
def test_full_batch_privacy_report_reproducer():
    r = fp.privacy_report(fp.dpsgd(0.8, 1.0, 1000))
    assert r.mu == math.sqrt(1000) / 0.8
    assert round(r.mu, 2) == 39.53 and r.method == "closed form"


# (there were two public account functions; issue 23 left one: fp.account is fdpkit.accounting.account)
@pytest.mark.parametrize("account", [fp.account, accounting_account], ids=["fp.account", "accounting.account"])
@pytest.mark.parametrize("kwargs, sensitivity", [
    (dict(relation="add-remove"), 1.0),
    (dict(relation="zero-out"), 1.0),
    (dict(relation="replace-one"), 2.0),  # replace-one doubles the sensitivity
])
def test_both_accounts_route_full_batches_to_the_closed_form(account, kwargs, sensitivity):
    acc = account(fp.dpsgd(0.8, 1.0, 1000, **kwargs))
    mu = sensitivity * math.sqrt(1000) / 0.8
    assert acc.method == "closed form" and acc.curve.mu == mu
    assert acc.epsilon_for_delta(1e-5) == fp.GaussianCurve(mu).epsilon_for_delta(1e-5)


def test_full_batch_fixed_size_and_group_privacy():
    fixed = fp.account(fp.dpsgd(2.0, batch_size=100, dataset_size=100, steps=4, sampling="fixed-size",
                                relation="replace-one"))
    assert fixed.method == "closed form" and fixed.curve.mu == 2.0
    # zero-out: every step holds every example, the sums differ by one gradient (Delta = 1)
    zero = fp.account(fp.dpsgd(2.0, batch_size=100, dataset_size=100, steps=4, sampling="fixed-size",
                               relation="zero-out"))
    assert zero.method == "closed form" and zero.curve.mu == 1.0
    group = fp.account(fp.dpsgd(2.0, 1.0, 4, unit="user", examples_per_user=3))
    assert group.method == "closed form" and group.curve.mu == 3.0


def test_full_batch_phase_of_a_schedule_is_one_exact_gaussian_step():
    """Four q = 1 steps at sigma 1 are one Gaussian step at sigma 1/2: identical PLDs."""
    mixed = fp.account(fp.dpsgd_schedule([(1.0, 1.0, 4), (2.0, 0.01, 100)]), discretization=1e-3)
    merged = fp.account(fp.dpsgd_schedule([(0.5, 1.0, 1), (2.0, 0.01, 100)]), discretization=1e-3)
    assert mixed.method == "PLD"
    assert mixed.epsilon_for_delta(1e-5) == merged.epsilon_for_delta(1e-5)
    full = fp.account(fp.dpsgd_schedule([(1.0, 1.0, 4), (2.0, 1.0, 12)]))
    assert full.method == "closed form" and full.curve.mu == pytest.approx(math.hypot(2.0, math.sqrt(3.0)))


def test_full_batch_statement_sweep_cost_and_calibration_agree():
    m = fp.dpsgd(0.8, 1.0, 1000)
    mu = math.sqrt(1000) / 0.8
    text = fp.privacy_report(m).statement()
    assert "closed form of full-batch training" in text and "μ = 39.53" in text
    row = fp.run_sweep([0.8], [1.0], [1000], discretization=1e-2).rows[0]
    assert row["mu"] == mu
    from fdpkit.accounting import estimate_cost

    assert estimate_cost(m).method == "closed form"
    res = fp.calibrate_dpsgd(mu=mu, sample_rate=1.0, steps=1000)
    assert res.achieved_mu <= mu and res.value == pytest.approx(0.8, rel=cal.X_RTOL * 2)


def test_full_batch_run_composes_as_exact_gdp_in_compositions_and_the_ledger():
    from fdpkit.accounting import Composition

    mu = math.hypot(math.sqrt(1000) / 0.8, 1.0)
    running = Composition.empty().add([fp.dpsgd(0.8, 1.0, 1000), fp.Gaussian(1.0)])
    assert running.gaussian_only and running.gaussian_mu == pytest.approx(mu, rel=1e-15)
    composed = fp.account(fp.Composed((fp.dpsgd(0.8, 1.0, 1000), fp.Gaussian(1.0))))
    assert composed.method == "closed form" and composed.curve.mu == pytest.approx(mu, rel=1e-15)
