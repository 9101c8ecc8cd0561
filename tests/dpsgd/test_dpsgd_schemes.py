"""Each sampling scheme / relation / privacy unit against an independent computation:
dp_accounting's own accountant where it supports the scheme, the closed form C_q(G) at
T = 1 for fixed-size batches (Dong, Roth & Su Thm. 4.2), closed forms for shuffled batches
and group privacy, and a Monte Carlo check of the shuffled-batch Gaussian."""

import math

import numpy as np
import pytest
from dp_accounting import dp_event, privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pldlib
from scipy.stats import norm

from _reference_bounds import dpa_epsilon_bracket

import fdpkit as fp
from fdpkit import compose_curves, group_curve
from fdpkit.accounting import account, curve_from_pld
from fdpkit.accounting.pld import fixed_size_step_curve
from fdpkit.curves import GaussianCurve, PiecewiseLinearCurve
from fdpkit.fit import fit_gdp

DISC = 1e-3
# fdpkit's eps(delta) is sound and tight: at least the exact one, at most this much above it
# (the tilted composition's relative bound and the profile's round-up). The exact value is
# bracketed from dp_accounting's composition of the same single step, allowing for its
# stated errors (_reference_bounds.dpa_epsilon_bracket; about 5e-7 relative here).
EPS_RTOL = 1e-6
CQ_ATOL = 5e-4            # certified one-step fixed-size curve vs exact C_q(G) (lower bound; loss grid 1e-3)
GROUP_ATOL = 2e-3         # PLD-based group curve vs exact G_{k mu} (beta, absolute)
MC_SAMPLES = 400_000
MC_ATOL = 5 * 0.5 / math.sqrt(MC_SAMPLES)  # five standard errors of a rate
ALPHAS = np.concatenate([np.geomspace(1e-9, 0.5, 200), np.linspace(0.5, 0.999, 50)])
REL = privacy_accountant.NeighboringRelation


def _dp_accounting_eps(event, count, relation, delta=1e-5):
    """(low, high) around the exact eps(delta): dp_accounting's accountant builds the single
    step (its PLD, read from the accountant), composed as it would compose it, with its
    truncation and FFT round-off allowed for."""
    acc = pld_privacy_accountant.PLDAccountant(relation, value_discretization_interval=DISC)
    acc.compose(event, 1)
    return dpa_epsilon_bracket(acc._pld, count, delta)  # noqa: SLF001 (test-only read)


@pytest.mark.parametrize("relation, rel", [("add-remove", REL.ADD_OR_REMOVE_ONE), ("replace-one", REL.REPLACE_ONE),
                                           ("zero-out", REL.REPLACE_SPECIAL)])
def test_poisson_relations_match_dp_accounting(relation, rel):
    m = fp.dpsgd(1.0, 0.02, 60, relation=relation)
    ours = fp.privacy_report(m, discretization=DISC).epsilon_for_delta(1e-5)
    low, high = _dp_accounting_eps(dp_event.PoissonSampledDpEvent(0.02, dp_event.GaussianDpEvent(1.0)), 60, rel)
    assert low <= ours <= high * (1 + EPS_RTOL)


def test_zero_out_equals_add_remove_and_replace_one_is_weaker():
    e = {r: fp.privacy_report(fp.dpsgd(1.0, 0.02, 60, relation=r), discretization=DISC).epsilon_for_delta(1e-5)
         for r in ("add-remove", "zero-out", "replace-one")}
    assert e["zero-out"] == e["add-remove"] < e["replace-one"]


@pytest.mark.parametrize("relation, rel", [("add-remove", REL.ADD_OR_REMOVE_ONE), ("replace-one", REL.REPLACE_ONE)])
def test_truncated_poisson_matches_dp_accounting(relation, rel):
    m = fp.dpsgd(1.0, batch_size=10, dataset_size=500, steps=40, sampling="truncated-poisson",
                 max_batch_size=13, relation=relation)
    ours = fp.privacy_report(m, discretization=DISC).epsilon_for_delta(1e-5)
    ev = dp_event.TruncatedSubsampledGaussianDpEvent(dataset_size=500, sampling_probability=0.02,
                                                     truncated_batch_size=13, noise_multiplier=1.0)
    low, high = _dp_accounting_eps(ev, 40, rel)
    assert low <= ours <= high * (1 + EPS_RTOL)
    # truncation can only cost privacy relative to untruncated Poisson
    plain = fp.privacy_report(fp.dpsgd(1.0, 0.02, 40, relation=relation), discretization=DISC).epsilon_for_delta(1e-5)
    assert ours >= plain


def _exact_cq(q, mu):
    """C_q(G_mu) = min{f_q, f_q^{-1}}** with f_q = q G_mu + (1 - q) Id, on a fine grid
    (independent of fdpkit's accounting: inverse by interpolation, hull by fdpkit's
    generic lower convex hull of points)."""
    x = np.concatenate([[0.0], np.geomspace(1e-15, 1.0, 400_001)])
    fq = q * norm.cdf(norm.isf(x) - mu) + (1 - q) * (1 - x)
    finv = np.interp(x, fq[::-1], x[::-1])
    return PiecewiseLinearCurve.lower_convex_hull(x, 1.0 - np.minimum(fq, finv))


def test_fixed_size_one_step_is_cq_of_gaussian():
    sigma, b, n = 1.5, 20, 1000
    c = account(fp.dpsgd(sigma, batch_size=b, dataset_size=n, steps=1, sampling="fixed-size",
                         relation="replace-one"), discretization=DISC).curve
    exact = _exact_cq(b / n, 2.0 / sigma)
    diff = c.beta(ALPHAS) - exact.beta(ALPHAS)
    assert diff.max() <= 1e-12, "fixed-size curve above the exact C_q(G): optimistic"
    assert diff.min() >= -CQ_ATOL


def _roc_points(sigma, q, up, low, x):
    """(FPR, FNR) points of the likelihood-ratio tests of P_low (null) against P_up, with
    P_c = (1 - q) N(0, sigma^2) + q N(c, sigma^2) (c None: N(0, sigma^2)), binned on the
    cells of ``x``: an independent quadrature of T(P_low, P_up) (binning only raises it)."""
    def cdf(c):
        base = norm.cdf(x, 0, sigma)
        return base if c is None else (1 - q) * base + q * norm.cdf(x, c, sigma)
    pu, pl = np.diff(cdf(up)), np.diff(cdf(low))
    order = np.argsort(-(pu / np.maximum(pl, 1e-300)))
    fpr = np.concatenate([[0.0], np.cumsum(pl[order])])
    tpr = np.concatenate([[0.0], np.cumsum(pu[order])])
    return np.clip(fpr, 0, 1), np.clip(1 - tpr, 0, 1)


# zero-out: the exact single step (fdpkit.accounting.without_replacement): the hull of the
# curves of P_2 vs P_1 and the Poisson pair N(0) vs P_1, both orders; never looser than
# C_q(G_{2/sigma}) (issue 29: Delta = 1 alone was optimistic, test_dpsgd_fixed_size_instance.py)
def test_fixed_size_zero_out_one_step_is_exact():
    sigma, b, n = 1.5, 20, 1000
    q = b / n
    c = account(fp.dpsgd(sigma, batch_size=b, dataset_size=n, steps=1, sampling="fixed-size",
                         relation="zero-out"), discretization=DISC).curve
    x = np.linspace(-14 * sigma - 2, 14 * sigma + 4, 100_001)
    pts = [_roc_points(sigma, q, up, low, x) for up, low in ((2.0, 1.0), (1.0, 2.0), (1.0, None), (None, 1.0))]
    fpr = np.concatenate([p[0] for p in pts] + [[0.0, 1.0]])
    tpr = 1.0 - np.concatenate([p[1] for p in pts] + [[1.0, 0.0]])
    order = np.lexsort((-tpr, fpr))
    exact = PiecewiseLinearCurve.lower_convex_hull(fpr[order], tpr[order])
    diff = c.beta(ALPHAS) - exact.beta(ALPHAS)
    assert diff.max() <= 1e-12, "fixed-size zero-out curve above the exact single step: optimistic"
    assert diff.min() >= -CQ_ATOL
    cq = _exact_cq(q, 2.0 / sigma).beta(ALPHAS)
    assert np.all(c.beta(ALPHAS) >= cq - 1e-12) and (c.beta(ALPHAS) - cq).max() > 1e-3  # tighter


def _bucket_pld(curve, d):
    """Independent curve -> PLD (privacy buckets): each hull segment of slope e^l is an atom
    of Q-mass dTPR at loss l rounded up to the grid; TPR(0) is the mass at +inf."""
    a, t = np.asarray(curve.alphas), np.asarray(curve.tprs)
    da, dt = np.diff(a), np.diff(t)
    keep = (dt > 0) & (da > 0)
    loss = np.log(dt[keep] / da[keep])
    idx = np.ceil(loss / d).astype(int)
    probs = np.bincount(idx - idx.min(), weights=dt[keep])
    from dp_accounting.pld import pld_pmf

    pmf = pld_pmf.DensePLDPmf(d, int(idx.min()), probs, float(t[0]), True)
    return pldlib.PrivacyLossDistribution(pmf)


def test_fixed_size_composition_against_independent_routes():
    sigma, b, n, steps = 1.0, 20, 1000, 5
    m = fp.dpsgd(sigma, batch_size=b, dataset_size=n, steps=steps, sampling="fixed-size", relation="replace-one")
    ours = account(m, discretization=DISC)
    step = fixed_size_step_curve(sigma, b / n, "replace-one", DISC)
    # compose_curves (T copies of the curve) and a privacy-bucket PLD composed by dp_accounting
    via_compose = compose_curves(*[step] * steps, discretization=DISC)
    buckets = _bucket_pld(step, DISC).self_compose(steps)
    e_ours = ours.epsilon_for_delta(1e-5)
    assert e_ours == pytest.approx(via_compose.epsilon_for_delta(1e-5), rel=1e-6)
    e_b = buckets.get_epsilon_for_delta(1e-5)
    assert e_ours <= e_b * (1 + 1e-9) and e_ours == pytest.approx(e_b, rel=5e-3)


def test_fixed_size_composes_and_is_weaker_than_poisson():
    kw = dict(batch_size=20, dataset_size=1000, sampling="fixed-size", relation="replace-one")
    mus = [fp.privacy_report(fp.dpsgd(1.0, steps=t, **kw), discretization=DISC).mu for t in (1, 10, 50)]
    assert mus[0] < mus[1] < mus[2]
    # Poisson with the same sensitivity 2 composes the two directions separately: never weaker
    pois = curve_from_pld(pldlib.from_gaussian_mechanism(1.0, sensitivity=2.0, sampling_prob=0.02,
                                                         value_discretization_interval=DISC).self_compose(50))
    assert mus[2] >= fit_gdp(pois).mu - 1e-9


def test_shuffled_closed_form_and_poisson_comparison():
    m = fp.dpsgd(2.0, batch_size=100, dataset_size=1000, epochs=3, sampling="shuffled", relation="replace-one")
    r = fp.privacy_report(m, discretization=DISC)
    assert r.method == "closed form" and r.mu == pytest.approx(math.sqrt(3) * 2 / 2.0)
    z = fp.privacy_report(m.__class__(m.phases, "shuffled", "zero-out", 1000), discretization=DISC)
    assert z.mu == pytest.approx(math.sqrt(3) / 2.0)
    # independent: dp_accounting's Gaussian PLD with sensitivity 2, composed 3 times
    ref = pldlib.from_gaussian_mechanism(2.0, sensitivity=2.0, value_discretization_interval=1e-4).self_compose(3)
    assert r.epsilon_for_delta(1e-5) == pytest.approx(ref.get_epsilon_for_delta(1e-5), rel=1e-3)
    assert r.epsilon_for_delta(1e-5) <= ref.get_epsilon_for_delta(1e-5)  # exact vs pessimistic
    cmp = r.comparison
    assert cmp["label"] == "Poisson accounting (not a guarantee for shuffled batches)"
    assert any("Chua" in c and "ICML 2024" in c for c in cmp["citations"])
    assert any("Annamalai" in c and "2024" in c for c in cmp["citations"])
    assert cmp["mu"] < r.mu  # the Poisson number is the optimistic one
    assert any("not a guarantee for shuffled batches" in w for w in r.warnings)
    d = r.to_dict()
    assert d["setting"]["sampling"] == "shuffled" and d["comparison"]["mu"] == pytest.approx(cmp["mu"])
    # steps instead of epochs: an example is in at most ceil(T / floor(N/B)) steps
    assert fp.dpsgd(2.0, batch_size=300, dataset_size=1000, steps=7, sampling="shuffled",
                    relation="zero-out").phases[0].participations == 3


def test_shuffled_poisson_comparison_within_its_budget():
    from fdpkit.accounting import CostBudget, estimate_cost
    from fdpkit.accounting.entry_point import poisson_twin
    from fdpkit.guarantee.setting import COMPARISON_BUDGET, comparison_work

    small = fp.dpsgd(2.0, batch_size=100, dataset_size=1000, epochs=3, sampling="shuffled", relation="replace-one")
    # the comparison's cost is the Poisson twin's, at the report's discretization
    assert comparison_work(small, DISC) == estimate_cost(poisson_twin(small), DISC).work > 0
    assert comparison_work(fp.dpsgd(2.0, 0.1, 30), DISC) == 0.0  # no comparison for a Poisson run
    tiny = CostBudget(max_grid_points=10, max_work=1.0, max_memory_bytes=1024)
    assert comparison_work(small, DISC, tiny) == 0.0  # over the budget: left out, costs nothing
    r = fp.privacy_report(small, discretization=DISC, budget=tiny)
    assert r.comparison is None and r.mu == pytest.approx(math.sqrt(3) * 2 / 2.0)
    assert any("left out of this report" in w for w in r.warnings)
    # without a budget of its own a report bounds the comparison by COMPARISON_BUDGET: a
    # 4,000-step comparison at sigma 0.6, q 0.5 (far over it) is left out before any work
    big = fp.dpsgd(0.6, batch_size=5000, dataset_size=10000, epochs=2000, sampling="shuffled",
                   relation="replace-one")
    assert estimate_cost(poisson_twin(big), 1e-4).work > COMPARISON_BUDGET.max_work
    r = fp.privacy_report(big)
    assert r.comparison is None and r.mu == pytest.approx(2 * math.sqrt(2000) / 0.6)
    assert any("left out of this report" in w for w in r.warnings)
    assert not any("would give mu" in w for w in r.warnings)


def test_shuffled_comparison_mu_is_finite_beyond_the_default_range():
    # Poisson accounting of this run has mu ~ 14, beyond 2 z(1e-10) = 12.7: the comparison
    # once read mu = inf (a plain fit on an empty FPR range); it now fits as the report does
    m = fp.dpsgd(0.6, batch_size=5000, dataset_size=10000, epochs=60, sampling="shuffled", relation="replace-one")
    r = fp.privacy_report(m)
    assert r.mu == pytest.approx(2 * math.sqrt(60) / 0.6)
    assert 12.7 < r.comparison["mu"] < r.mu and math.isfinite(r.comparison["mu"])
    assert not any("mu = inf" in w for w in r.warnings)


def test_shuffled_gaussian_monte_carlo():
    """Monte Carlo of what one example's P participations release: P Gaussian sums, each moved
    by Delta = 2 (replace-one, clipped gradients +C and -C). The likelihood-ratio test's
    empirical (FPR, TPR) must sit on G_mu, mu = sqrt(P) * 2 / sigma."""
    rng = np.random.default_rng(12)
    sigma, parts = 3.0, 4
    mu = fp.privacy_report(fp.dpsgd(sigma, batch_size=10, dataset_size=100, epochs=parts, sampling="shuffled",
                                    relation="replace-one"), discretization=DISC).mu
    h0 = rng.normal(-1.0, sigma, size=(MC_SAMPLES, parts)).sum(axis=1)  # gradient -C in every batch
    h1 = rng.normal(+1.0, sigma, size=(MC_SAMPLES, parts)).sum(axis=1)  # replaced by +C
    for thr in (0.0, 5.0, 10.0):
        fpr, tpr = (h0 > thr).mean(), (h1 > thr).mean()
        assert tpr == pytest.approx(float(GaussianCurve(mu).tpr(fpr)), abs=MC_ATOL)


def test_group_privacy_k_examples_per_user():
    m = fp.dpsgd(2.0, batch_size=100, dataset_size=1000, epochs=2, sampling="shuffled", relation="zero-out",
                 unit="user", examples_per_user=3)
    assert fp.privacy_report(m, discretization=DISC).mu == pytest.approx(3 * math.sqrt(2) / 2.0)
    # on a numeric curve: the Gaussian through the PLD, grouped, against G_{k mu}
    num = curve_from_pld(pldlib.from_gaussian_mechanism(2.0, value_discretization_interval=DISC))
    for k in (2, 4):
        g = group_curve(num, k)
        diff = g.beta(ALPHAS) - GaussianCurve(k / 2.0).beta(ALPHAS)
        assert diff.max() <= 1e-12 and diff.min() >= -GROUP_ATOL
    # Poisson DP-SGD with k examples per user: weaker than example level, sound curve
    base = fp.privacy_report(fp.dpsgd(1.0, 0.02, 50), discretization=DISC)
    grp = fp.privacy_report(fp.dpsgd(1.0, 0.02, 50, unit="user", examples_per_user=2), discretization=DISC)
    assert grp.method == "PLD + group privacy" and grp.curve.bound == "lower"
    assert grp.mu > base.mu and grp.epsilon_for_delta(1e-5) > base.epsilon_for_delta(1e-5)


def test_user_sampling_is_the_same_maths_renamed():
    ex = fp.privacy_report(fp.dpsgd(1.0, 0.02, 50), discretization=DISC)
    us = fp.privacy_report(fp.dpsgd(1.0, 0.02, 50, unit="user"), discretization=DISC)
    assert us.mu == ex.mu and us.epsilons == ex.epsilons
    assert us.setting["unit"] == "user" and "user-level" in us.statement() and "one user" in us.statement()
    assert "user-level" in us.mechanism.label()


@pytest.mark.parametrize("phases, loader_mu2", [
    # the noise drops inside a pass of 10 steps: the loader runs on, an example takes its one
    # step of pass 0 at sigma 1 and one of pass 1 (1 + 1); per phase it read 1/4 + 1 (too small)
    ([(2.0, 5), (1.0, 10)], 2.0),
    # the noise rises inside a pass: the per-phase count is the larger (1 + 1/4)
    ([(1.0, 5), (2.0, 10)], 1.25),
    # 100 examples in batches of 30: passes of 3 or 4 steps; per phase 1/4 + 2 is the larger
    ([(2.0, 3), (1.0, 5)], 2.25),
])
def test_shuffled_schedule_counts_passes_that_span_phases(phases, loader_mu2):
    """mu of a shuffled schedule is at least the worst case of a loader that runs on across
    phase boundaries (each pass: one step at its smallest sigma), and at least the per-phase
    count of fresh passes (brute force over the pass tilings below)."""

    from fdpkit.mechanisms import dpsgd_schedule

    batch = 10 if len(phases) == 2 and phases[1][1] == 10 else 30
    m = dpsgd_schedule([{"noise_multiplier": s, "batch_size": batch, "steps": t} for s, t in phases],
                       dataset_size=100, sampling="shuffled", relation="zero-out")
    sigmas = [s for s, t in phases for _ in range(t)]
    worst = 0.0
    for length in {100 // batch, -(-100 // batch)}:
        passes = [sigmas[i:i + length] for i in range(0, len(sigmas), length)]
        worst = max(worst, sum(1 / min(p) ** 2 for p in passes))
    per_phase = sum(ph.participations / ph.noise_multiplier ** 2 for ph in m.phases)
    mu = fp.account(m).curve.mu
    assert mu ** 2 == pytest.approx(max(worst, per_phase), rel=1e-12) == pytest.approx(loader_mu2, rel=1e-12)


def test_shuffled_schedule_statement_says_which_count_gave_mu():
    """The statement explains mu = sqrt(P) Delta / sigma per phase; where the passes spanning
    phases give the larger mu it says so, with both numbers (it read "each example in at most
    1 of them" beside a mu those counts do not give)."""
    from fdpkit.mechanisms import dpsgd_schedule

    m = dpsgd_schedule([{"noise_multiplier": 2.0, "batch_size": 10, "steps": 5},
                        {"noise_multiplier": 1.0, "batch_size": 10, "steps": 10}],
                       dataset_size=100, sampling="shuffled", relation="zero-out")
    text = fp.privacy_report(m).statement()
    # √2 = 1.41421 and 1.11803: μ values, printed rounded up
    assert "a pass over the data may span two phases" in text and "1.415 against 1.119" in text
    aligned = dpsgd_schedule([{"noise_multiplier": 2.0, "batch_size": 10, "epochs": 1},
                              {"noise_multiplier": 1.0, "batch_size": 10, "epochs": 1}],
                             dataset_size=100, sampling="shuffled", relation="zero-out")
    assert "span two phases" not in fp.privacy_report(aligned).statement()


def _worst_loader(phases, n, b):
    """Brute force: every pattern of run-on / fresh pass at each boundary, for each pass length."""
    import itertools
    import math

    best = 0.0
    for length in {n // b, -(-n // b)}:
        for pattern in itertools.product((False, True), repeat=len(phases) - 1):
            total, pos, low = 0.0, 0, math.inf
            for i, (sigma, steps) in enumerate(phases):
                if i and not pattern[i - 1] and pos:
                    total, pos, low = total + 1 / low ** 2, 0, math.inf
                for _ in range(steps):
                    low, pos = min(low, sigma), pos + 1
                    if pos == length:
                        total, pos, low = total + 1 / low ** 2, 0, math.inf
            best = max(best, total + (1 / low ** 2 if pos else 0.0))
    return best


@pytest.mark.parametrize("phases, batch", [([(1.0, 5), (2.0, 5), (1.0, 10)], 10),
                                           ([(2.0, 3), (1.0, 5), (3.0, 7), (0.5, 2)], 30),
                                           ([(1.0, 10), (2.0, 10), (1.0, 10)], 10)])
def test_shuffled_schedule_of_three_phases_bounds_every_loader_pattern(phases, batch):
    """With three or more phases a loader may start a fresh pass at one boundary and run on at
    another: sigma 1, 2, 1 for 5, 5, 10 steps gives mu^2 = 3 that way, above both pure readings
    (2.25 and 2). mu^2 is at least the brute-force worst case over all patterns, and exact when
    the phases are whole passes."""
    from fdpkit.mechanisms import dpsgd_schedule

    m = dpsgd_schedule([{"noise_multiplier": s, "batch_size": batch, "steps": t} for s, t in phases],
                       dataset_size=100, sampling="shuffled", relation="zero-out")
    mu2, worst = fp.account(m).curve.mu ** 2, _worst_loader(phases, 100, batch)
    assert mu2 >= worst * (1 - 1e-12)
    if all(t % (100 // batch) == 0 for _, t in phases) and 100 % batch == 0:
        assert mu2 == pytest.approx(worst, rel=1e-12)
