"""calibrate_dpsgd in degenerate corners (issue 14): targets no numeric curve can express are
refused at once naming the argument, and every search is bounded (runs, per-run cost, total
estimated work): a capped search returns a safe value or a ValueError naming the target."""

from __future__ import annotations

import pytest

import fdpkit as fp
from fdpkit.calibrate import solver as cal
from fdpkit.accounting import BudgetExceeded, CostBudget

#: The fit's finite ceiling at the default alpha_min = 1e-10: 2 z(1e-10).
MU_CEILING_DEFAULT = 12.7227
CEILING_RTOL = 1e-4
#: Coarse enough that each accounting run of these tests takes milliseconds.
DISC = 1e-3


def _no_accounting(*args, **kwargs):
    raise AssertionError("a degenerate target must be refused before any accounting run")


@pytest.mark.parametrize("kw", [
    dict(noise_multiplier=1.0, sample_rate=0.5),            # steps unknown (the 22 s case)
    dict(sample_rate=0.5, steps=1000),                       # noise unknown
    dict(noise_multiplier=1.0, steps=1000),                  # sample rate unknown
])
def test_mu_above_the_fit_ceiling_is_refused_at_once(monkeypatch, kw):
    monkeypatch.setattr(cal, "account", _no_accounting)
    with pytest.raises(ValueError, match=r"^mu must be below 12\.72") as info:
        fp.calibrate_dpsgd(mu=50, **kw)
    assert "alpha_min" in str(info.value)


def test_full_batch_mu_above_the_fit_ceiling_is_solved_by_the_closed_form():
    """Issue 22: rate 1 is the Gaussian mechanism (mu = sqrt(T) / sigma exactly), so a mu
    above the numeric fit's ceiling is reachable: 50 = sqrt(2500) / 1."""
    res = fp.calibrate_dpsgd(mu=50, noise_multiplier=1.0, sample_rate=1.0)
    assert res.value == 2500 and res.achieved_mu <= 50.0 and res.converged


def test_mu_ceiling_follows_alpha_min():
    assert cal._mu_ceiling(1e-10) == pytest.approx(MU_CEILING_DEFAULT, rel=CEILING_RTOL)
    with pytest.raises(ValueError, match=r"^mu must be below 9\.5"):
        fp.calibrate_dpsgd(mu=10, noise_multiplier=1.0, sample_rate=0.5, alpha_min=1e-6)
    with pytest.raises(ValueError, match="alpha_min"):
        fp.calibrate_dpsgd(mu=10, noise_multiplier=1.0, sample_rate=0.5, alpha_min=0.7)


def test_shuffled_batches_are_exact_so_any_mu_is_reachable():
    r = fp.calibrate_dpsgd(mu=20, noise_multiplier=1.0, batch_size=10, dataset_size=1000,
                           sampling="shuffled", relation="replace-one")
    assert r.converged and 19 < r.achieved["mu"] <= 20


def test_tiny_target_fails_fast_naming_the_target():
    with pytest.raises(ValueError, match=r"even steps = 1 exceeds it \(mu <= 1e-06\)"):
        fp.calibrate_dpsgd(mu=1e-6, noise_multiplier=1.0, sample_rate=0.5, discretization=DISC)


def test_run_cap_bounds_the_search(monkeypatch):
    calls = []
    real = cal.account

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(cal, "account", counting)
    monkeypatch.setattr(cal, "MAX_SEARCH_RUNS", 3)
    with pytest.raises(ValueError, match=r"^epsilon: no run meeting this target was found by changing noise_multiplier"):
        fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, sample_rate=0.05, steps=100, discretization=DISC)
    assert len(calls) <= 3


def test_capped_search_returns_a_safe_value_or_names_the_target(monkeypatch):
    # one run short of what the free search needs: the closest full-resolution safe point
    # found so far comes back flagged, or, if none was found yet, a ValueError naming the target
    free = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, sample_rate=0.05, steps=100, discretization=DISC)
    monkeypatch.setattr(cal, "MAX_SEARCH_RUNS", free.evaluations + free.coarse_evaluations - 1)
    try:
        r = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, sample_rate=0.05, steps=100, discretization=DISC)
    except ValueError as exc:
        assert str(exc).startswith("epsilon: no run meeting this target was found")
    else:
        assert r.achieved["epsilon"] <= 2.0 and not r.converged and "limits" in r.reason


def test_per_run_budget_names_the_target():
    tiny = CostBudget(max_grid_points=10_000, max_work=1e5, max_memory_bytes=2**20)
    with pytest.raises(ValueError, match=r"^tpr: meeting this target by changing steps needs more than the cost budget"):
        fp.calibrate_dpsgd(tpr=0.9999, fpr=1e-3, noise_multiplier=1.0, sample_rate=0.5, budget=tiny,
                           discretization=DISC)


@pytest.mark.parametrize("kw", [
    dict(epsilon=100.0, delta=1e-5),
    dict(tpr=0.999999, fpr=1e-3),
    dict(advantage=0.999999),
])
def test_huge_targets_stay_within_the_search_bounds(kw):
    # the answer needs many steps: each run is checked against the budget before any work
    budget = CostBudget(max_grid_points=500_000, max_work=3e6, max_memory_bytes=2**28)
    try:
        r = fp.calibrate_dpsgd(**kw, noise_multiplier=1.0, sample_rate=0.5, discretization=DISC, budget=budget)
    except ValueError as exc:
        assert str(exc).split(":")[0] in {"epsilon", "tpr", "advantage"} or "could not meet" in str(exc)
    else:
        assert r.evaluations + r.coarse_evaluations <= cal.MAX_SEARCH_RUNS


#: Targets that sigma = 1 meets cheaply, whose search once stepped to tiny noise (sigma 0.05:
#: a grid of ~2e8 points) and ended with a false "needs more than the cost budget" error.
CHEAP_TARGETS = [
    dict(epsilon=1.0, delta=0.5),           # a boundary near sigma 0.23, within the budget
    dict(epsilon=1.0, delta=0.999),         # met by every noise multiplier (epsilon 0)
    dict(posterior=0.999999, prior=0.01),   # likewise (the posterior at FPR 1e-3 stays below 0.87)
]
#: A budget whose edge lies near sigma 0.34 for q = 0.01, T = 100 (mu 3 there).
SMALL = CostBudget(max_grid_points=200_000, max_work=3e6, max_memory_bytes=2**28)


@pytest.mark.slow  # accounting runs at the budget's edge (about 10 s each)
@pytest.mark.parametrize("target", CHEAP_TARGETS)
def test_a_refused_candidate_retreats_to_the_safe_side(target):
    r = fp.calibrate_dpsgd(**target, sample_rate=0.01, steps=100)
    assert r.unknown == "noise_multiplier" and r.noise_multiplier < 1.0
    # the report accounts the run as the search did (the library's rule within the budget)
    rep = fp.privacy_report(r.mechanism, deltas=[target.get("delta", 1e-5)], budget=cal.CALIBRATION_BUDGET)
    if "epsilon" in target:
        assert rep.epsilon_for_delta(target["delta"]) <= target["epsilon"]
    else:
        assert float(fp.posterior(rep.curve, target["prior"], 1e-3)) <= target["posterior"]
    if target.get("delta") == 0.5:  # the boundary is within the budget: the tight answer
        assert r.converged and rep.epsilon_for_delta(0.5) >= 1.0 - 1e-3
    else:  # every sigma meets it: the smallest the budget allows, flagged
        assert not r.converged and "need more than the cost budget" in r.reason


def test_a_target_that_holds_past_the_budget_returns_its_edge_flagged():
    r = fp.calibrate_dpsgd(posterior=0.999999, prior=0.01, noise_multiplier=0.5, sample_rate=0.01,
                           discretization=DISC, budget=SMALL)
    assert r.unknown == "steps" and not r.converged and "larger values of steps" in r.reason
    rep = fp.privacy_report(r.mechanism, discretization=DISC, budget=SMALL)
    assert float(fp.posterior(rep.curve, 0.01, 1e-3)) <= 0.999999
    with pytest.raises(BudgetExceeded):  # one step more is refused
        fp.privacy_report(r.mechanism.with_(steps=r.value + 1), discretization=DISC, budget=SMALL)


@pytest.mark.parametrize("unknown, kw", [
    ("noise_multiplier", dict(sample_rate=0.01, steps=100)),                     # sigma ~ 0.22 needed
    ("steps", dict(noise_multiplier=0.5, sample_rate=0.01, discretization=DISC)),  # ~8,000 steps needed
])
def test_an_answer_beyond_the_budget_is_still_a_budget_error(unknown, kw):
    with pytest.raises(ValueError, match=rf"^mu: meeting this target by changing {unknown} needs more than the cost"):
        fp.calibrate_dpsgd(mu=5.0, **kw, budget=SMALL)
