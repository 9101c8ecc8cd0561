"""Audit statistics: coverage of the lower bounds, convergence, violations, closed-form
bands, tails, bad input and invariants."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import fdpkit as fp
from fdpkit.audit import audit_from_counts, simulate_attack
from fdpkit.audit.bounds import clopper_pearson_lower, clopper_pearson_upper
from fdpkit.audit.simulate import MAX_TRIALS

#: Required coverage of a 95% lower bound over seeded repetitions.
COVERAGE_MIN = 0.95
#: Repetitions of the coverage experiment and trials per class in each.
REPETITIONS = 300
COVERAGE_TRIALS = 400
#: Agreement of the Clopper-Pearson bounds with scipy.stats.beta quantiles.
CP_RTOL = 1e-10
#: Largest gap between the true mu and its 95% lower bound at 2e5 trials per class.
CONVERGED_GAP = 0.05


def test_clopper_pearson_matches_beta_quantiles():
    k = np.array([0, 1, 7, 500, 999, 1000])
    n = np.full(6, 1000)
    up, up_c = clopper_pearson_upper(k, n, 0.01)
    lo, lo_c = clopper_pearson_lower(k, n, 0.01)
    for i, (ki, ni) in enumerate(zip(k, n)):
        ref_up = 1.0 if ki == ni else stats.beta.ppf(0.99, ki + 1, ni - ki)
        ref_lo = 0.0 if ki == 0 else stats.beta.ppf(0.01, ki, ni - ki + 1)
        assert up[i] == pytest.approx(ref_up, rel=CP_RTOL)
        assert lo[i] == pytest.approx(ref_lo, rel=CP_RTOL, abs=0)
        assert up_c[i] == pytest.approx(1 - ref_up, rel=1e-8, abs=1e-15)
        assert lo_c[i] == pytest.approx(1 - ref_lo, rel=1e-8, abs=1e-15)
    # complements keep their digits in the tail: no successes out of 1e12
    u, c = clopper_pearson_upper(np.array([0]), np.array([1e12]), 0.05)
    assert u[0] == pytest.approx(-math.log(0.05) / 1e12, rel=1e-6)


def test_clopper_pearson_is_safe_where_scipys_inverse_fails():
    # scipy's betaincinv(1000, 1e9 - 999, level) is 1.9e-6 at every level (a point where the
    # CDF is 1): 1000 of 1e9 gave a TPR lower bound above 1e-6, and identical rates "leaked"
    k, n = np.array([1000.0]), np.array([1e9])
    lo, lo_c = clopper_pearson_lower(k, n, 1e-4)
    up, up_c = clopper_pearson_upper(k, n, 1e-4)
    assert lo[0] < 1e-6 < up[0] and up_c[0] < 1 - 1e-6 < lo_c[0]
    assert stats.beta.cdf(lo[0], 1000, 1e9 - 999) <= 1e-4
    r = audit_from_counts([1000], [1000], 10**9, 10**9, mechanism=fp.Gaussian(20.0))
    assert r.mu_lower == 0.0 and r.epsilon_lower == 0.0 and r.violation is False


def test_counts_match_a_hand_computation():
    # one threshold, K = 1: each bound at level (1 - 0.95)/2
    r = audit_from_counts([900], [100], 1000, 1000, confidence=0.95, delta=1e-5)
    tpr = stats.beta.ppf(0.025, 900, 101)
    fpr = stats.beta.ppf(0.975, 101, 900)
    assert r.mu_lower == pytest.approx(stats.norm.ppf(tpr) - stats.norm.ppf(fpr), rel=1e-9)
    assert r.epsilon_lower == pytest.approx(math.log((tpr - 1e-5) / fpr), rel=1e-9)
    assert r.thresholds_used == 1 and r.level == pytest.approx(0.025)
    assert "Bonferroni" in r.correction and "Clopper-Pearson" in r.correction
    assert r.violation is None


def test_coverage_of_mu_lower_bound_on_gaussian_mechanisms():
    """The 95% lower bound is below the true mu in at least 95% of seeded repetitions."""
    for mu in (0.5, 2.0):
        rng = np.random.default_rng(17)
        members = rng.normal(mu, 1.0, (REPETITIONS, COVERAGE_TRIALS))  # all repetitions at once
        nonmembers = rng.normal(0.0, 1.0, (REPETITIONS, COVERAGE_TRIALS))
        mu_lo = np.array([fp.run_audit(m, n, confidence=0.95).mu_lower for m, n in zip(members, nonmembers)])
        eps_true = fp.GaussianCurve(mu).epsilon_for_delta(1e-5)
        eps_lo = np.array([fp.run_audit(m, n).epsilon_lower for m, n in zip(members[:50], nonmembers[:50])])
        assert np.mean(mu_lo <= mu) >= COVERAGE_MIN
        assert np.mean(eps_lo <= eps_true) >= COVERAGE_MIN
        assert np.all(np.isfinite(mu_lo)) and np.all(mu_lo >= 0)


def test_coverage_of_counts_at_fixed_thresholds():
    mu, k = 1.0, 5
    alphas = np.geomspace(1e-3, 0.3, k)
    tprs = np.asarray(fp.GaussianCurve(mu).tpr(alphas))
    rng = np.random.default_rng(3)
    tp = rng.binomial(2000, tprs, (REPETITIONS, k))
    fpc = rng.binomial(2000, alphas, (REPETITIONS, k))
    mu_lo = np.array([audit_from_counts(t, f, 2000, 2000).mu_lower for t, f in zip(tp, fpc)])
    assert np.mean(mu_lo <= mu) >= COVERAGE_MIN


def test_mu_lower_bound_approaches_true_mu():
    gaps = []
    for trials in (2_000, 20_000, 200_000):
        sim = simulate_attack(fp.Gaussian(1.0), trials=trials, seed=5)
        gaps.append(1.0 - fp.run_audit(sim.member_scores, sim.nonmember_scores).mu_lower)
    assert gaps[0] > gaps[1] > gaps[2] > 0
    assert gaps[2] < CONVERGED_GAP


def test_misaccounted_mechanism_is_a_violation():
    sim = simulate_attack(fp.Gaussian(0.5), trials=5000, seed=11)  # sigma half of what is declared
    bad = fp.run_audit(sim.member_scores, sim.nonmember_scores, mechanism=fp.Gaussian(1.0))
    assert bad.violation is True
    assert bad.verdict.startswith("VIOLATION") and "certified" in bad.verdict
    assert bad.audit_gap < 0 and bad.mu_lower > 1.0
    good = fp.run_audit(sim.member_scores, sim.nonmember_scores, mechanism=fp.Gaussian(0.5))
    assert good.violation is False and "No violation" in good.verdict
    assert 0 < good.audit_gap < 2.0
    # a privacy report or a curve works as the guarantee too
    assert fp.run_audit(sim.member_scores, sim.nonmember_scores,
                    mechanism=fp.privacy_report(fp.Gaussian(1.0))).violation is True
    assert fp.run_audit(sim.member_scores, sim.nonmember_scores, mechanism=fp.GaussianCurve(2.0)).violation is False


def test_misaccounted_dpsgd_is_a_violation():
    steps, q = 30, 0.2
    sim = simulate_attack(fp.dpsgd(1.0, q, steps), trials=4000, seed=2)
    declared = fp.tradeoff_curve(fp.dpsgd(2.0, q, steps), discretization=1e-3)  # twice the noise that ran
    assert sim.audit(mechanism=declared).violation is True
    ran = fp.tradeoff_curve(fp.dpsgd(1.0, q, steps), discretization=1e-3)
    assert sim.audit(mechanism=ran).violation is False


def _two_sided_box_holds(r, curve):
    """Whether the exact curve passes through every two-sided Clopper-Pearson box."""
    p = r.points
    lvl = (1 - r.confidence) / (4 * len(p))
    fpr_up, _ = clopper_pearson_upper(p.false_positives, p.nonmembers, lvl)
    fpr_lo, _ = clopper_pearson_lower(p.false_positives, p.nonmembers, lvl)
    tpr_up, _ = clopper_pearson_upper(p.true_positives, p.members, lvl)
    tpr_lo, _ = clopper_pearson_lower(p.true_positives, p.members, lvl)
    return (np.all(curve.tpr(np.clip(fpr_lo, 0, 1)) <= tpr_up + 1e-12)
            and np.all(curve.tpr(np.clip(fpr_up, 0, 1)) >= tpr_lo - 1e-12))


@pytest.mark.parametrize("mechanism, curve", [
    (fp.Gaussian(0.8), fp.GaussianCurve(1.25)),
    (fp.Laplace(1.0), fp.LaplaceCurve(1.0)),
    (fp.RandomizedResponse(1.5), fp.RandomizedResponseCurve(1.5)),
])
def test_simulated_roc_lies_within_its_bands_of_the_exact_curve(mechanism, curve):
    sim = simulate_attack(mechanism, trials=20_000, seed=7)
    r = fp.run_audit(sim.member_scores, sim.nonmember_scores, mechanism=curve)
    assert r.violation is False
    assert _two_sided_box_holds(r, curve)
    # the point estimates are close to the exact curve where it is not flat
    mid = (r.points.fpr > 0.05) & (r.points.fpr < 0.95)
    assert np.max(np.abs(r.points.tpr[mid] - curve.tpr(r.points.fpr[mid]))) < 0.03


def test_perfect_separation_and_tails():
    r = fp.run_audit(np.ones(1000), np.zeros(1000), delta=0.0)
    assert math.isfinite(r.mu_lower) and r.mu_lower > 3
    assert math.isfinite(r.epsilon_lower) and r.epsilon_lower > 3
    # a tiny published FPR keeps its digits: 0 of 1e12 non-members flagged, all members caught
    t = audit_from_counts([10**6], [0], 10**6, 10**12)
    assert math.isfinite(t.mu_lower) and t.mu_lower > 10
    assert t.epsilon_lower > 20
    # nothing to learn: member TPR equal to FPR gives a bound of (about) zero
    z = audit_from_counts([100], [100], 1000, 1000)
    assert z.mu_lower == 0.0 and z.epsilon_lower == 0.0


def test_roc_at_every_threshold():
    r = fp.run_audit([3.0, 2.0, 1.0], [2.0, 0.0, -1.0])
    assert r.roc_fpr[0] == 0 and r.roc_tpr[-1] == 1 and r.roc_fpr[-1] == 1
    assert np.all(np.diff(r.roc_fpr) >= 0) and np.all(np.diff(r.roc_tpr) >= 0)
    assert len(r.roc_fpr) == 6  # five distinct scores and -inf
    d = r.to_dict()
    assert d["bounds"]["correction"] == "Bonferroni" and d["violation"] is None
    assert d["mu_lower"] == r.mu_lower


@pytest.mark.parametrize("call, name", [
    (lambda: fp.run_audit([], [1.0]), "member_scores"),
    (lambda: fp.run_audit([1.0], []), "nonmember_scores"),
    (lambda: fp.run_audit([1.0, 1.0], [1.0]), "member_scores"),
    (lambda: fp.run_audit([1.0, np.nan], [0.0]), "member_scores"),
    (lambda: fp.run_audit([1.0], [np.nan]), "nonmember_scores"),
    (lambda: fp.run_audit([[1.0]], [0.0]), "member_scores"),
    (lambda: fp.run_audit([1.0], [0.0], confidence=1.0), "confidence"),
    (lambda: fp.run_audit([1.0], [0.0], confidence=0.0), "confidence"),
    (lambda: fp.run_audit([1.0], [0.0], confidence=np.nan), "confidence"),
    (lambda: fp.run_audit([1.0], [0.0], delta=1.0), "delta"),
    (lambda: fp.run_audit([1.0], [0.0], mechanism="gauss"), "mechanism"),
    (lambda: audit_from_counts([1, 2], [1], 10, 10), "false_positives"),
    (lambda: audit_from_counts([1, 2], [1, 1], [10, 10, 10], 10), "members"),
    (lambda: audit_from_counts([11], [1], 10, 10), "true_positives"),
    (lambda: audit_from_counts([1], [11], 10, 10), "false_positives"),
    (lambda: audit_from_counts([1.5], [1], 10, 10), "true_positives"),
    (lambda: audit_from_counts([1], [-1], 10, 10), "false_positives"),
    (lambda: audit_from_counts([1], [1], 0, 10), "members"),
    (lambda: audit_from_counts([1], [1], 10, 10, confidence=1.5), "confidence"),
    (lambda: audit_from_counts([], [], 10, 10), "true_positives"),
    (lambda: simulate_attack(fp.Gaussian(1.0), trials=0, seed=1), "trials"),
    (lambda: simulate_attack(fp.Gaussian(1.0), trials=10, seed=-1), "seed"),
    (lambda: simulate_attack(fp.PureDP(1.0), trials=10, seed=1), "mechanism"),
    (lambda: simulate_attack("gaussian", trials=10, seed=1), "mechanism"),
    # documented caps (issue 14): memory-bounded, refused naming the public argument
    (lambda: fp.run_audit([1.0, 2.0], [0.0, 1.0], thresholds_per_side=2**31), "thresholds_per_side"),
    (lambda: fp.run_audit([1.0, 2.0], [0.0, 1.0], thresholds_per_side=float("inf")), "thresholds_per_side"),
    (lambda: audit_from_counts([1], [1], 10**30, 10), "members"),
    (lambda: audit_from_counts([1], [1], 10, 2**53 + 2), "nonmembers"),
    (lambda: simulate_attack(fp.Gaussian(1.0), trials=float("inf"), seed=1), "trials"),
    (lambda: simulate_attack(fp.Gaussian(1.0), trials=10**40, seed=1), "trials"),
    (lambda: simulate_attack(fp.Gaussian(1.0), trials=MAX_TRIALS + 1, seed=1), "trials"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_csv_row_limits_count_data_rows_not_the_header():
    # "score" plus max_rows scores was refused as "more than max_rows rows" (the header counted)
    from fdpkit.audit import read_counts_csv, read_scores_csv

    assert read_scores_csv("score\n1\n2\n3\n", max_rows=3).tolist() == [1.0, 2.0, 3.0]
    assert read_scores_csv("x,score\n0,1\n# note\n\n0,2\n0,3\n", max_rows=3).tolist() == [1.0, 2.0, 3.0]
    assert read_scores_csv("1\n2\n3\n", max_rows=3).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="members has more than 3 scores"):
        read_scores_csv("score\n1\n2\n3\n4\n", "members", max_rows=3)
    counts = "tp,fp,members,nonmembers\n" + "9,1,10,10\n" * 2
    assert read_counts_csv(counts, max_rows=2)["true_positives"].tolist() == [9.0, 9.0]
    with pytest.raises(ValueError, match="counts has more than 1 rows of counts"):
        read_counts_csv(counts, max_rows=1)


@pytest.mark.parametrize("read, text, match", [
    # two columns for one input: the first was read and the other ignored without a word
    ("scores", "score,score\n0.1,0.9\n", "2 columns named score on line 1"),
    ("scores", "id,Score,scores\n1,0.1,0.9\n", "2 columns named score on line 1 \\(Score, scores\\)"),
    ("counts", "tp,true_positives,fp,members,nonmembers\n9,1,1,10,10\n", "2 columns for true_positives"),
    ("counts", "tp,fp,members,nonmembers,negatives\n9,1,10,10,99\n", "2 columns for nonmembers"),
    # decimal commas: "1\n0,5\n0,7" was read as the scores 1, 0, 0
    ("scores", "1\n0,5\n0,7\n", "line 2 has 2 fields, the first line 1 \\(a decimal comma"),
    # a row with a field more than the header read another column (2 instead of 0.7)
    ("scores", "id,score\n1,0.5\n2,3,0.7\n", "line 3 has 3 fields, the first line 2"),
    ("counts", "tp,fp,members,nonmembers\n9,1,10,10,77\n", "line 2 has 5 fields, the first line 4"),
])
def test_csv_that_would_be_misread_is_refused(read, text, match):
    from fdpkit.audit import read_counts_csv, read_scores_csv

    with pytest.raises(ValueError, match=match):
        (read_scores_csv if read == "scores" else read_counts_csv)(text)


@pytest.mark.parametrize("call, name, text", [
    # run_audit took +-inf scores, which the CSV and JSON routes refuse
    (lambda: fp.run_audit([1.0, np.inf], [0.0, 1.0]), "member_scores", "member_scores must be finite, got inf"),
    (lambda: fp.run_audit([1.0, 2.0], [-np.inf, 1.0]), "nonmember_scores", "must be finite, got -inf (at index 0)"),
    (lambda: fp.run_audit([1.0, 2.0], [0.0, 1.0], confidence=1.0), "confidence", "confidence must be in (0, 1)"),
    # an integer too large for a float was shown as "got inf"
    (lambda: audit_from_counts(10**400, 1, 10, 10), "true_positives",
     "true_positives must be at most 9,007,199,254,740,992 (2**53), got an integer with 401 digits (at index 0)"),
    (lambda: audit_from_counts([1, -10**400], [1, 1], 10, 10), "true_positives",
     "true_positives must be whole numbers >= 0, got a negative integer with 401 digits (at index 1)"),
    (lambda: audit_from_counts([1], [1], 10**5000, 10), "members", "got an integer with 5001 digits"),
    (lambda: audit_from_counts([np.inf], [1], 10, 10), "true_positives", "got inf (at index 0)"),
    # 10**6 published counts were taken (the cap was the 10**7 array cap) and bounded for
    # over a minute of CPU (about 50 us per threshold); refused before any bound now
    (lambda: audit_from_counts(np.zeros(20_001), np.zeros(20_001), 10, 10), "true_positives",
     "true_positives must hold at most 20,000 thresholds (one count each), got 20,001"),
    (lambda: fp.run_audit([1.0, 2.0], [0.0, 1.0], thresholds_per_side=10_001), "thresholds_per_side", "10001"),
])
def test_bad_scores_and_counts_are_parameter_errors(call, name, text):
    with pytest.raises(fp.ParameterError) as info:
        call()
    assert info.value.parameter == name and text in str(info.value), str(info.value)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10**6), m=st.integers(1, 10**6), fpr=st.floats(0, 1), tpr=st.floats(0, 1),
       conf=st.floats(0.5, 0.999))
def test_bounds_are_finite_and_monotone_in_confidence(n, m, fpr, tpr, conf):
    fpc, tpc = round(fpr * n), round(tpr * m)
    r = audit_from_counts([tpc], [fpc], m, n, confidence=conf)
    looser = audit_from_counts([tpc], [fpc], m, n, confidence=0.5 * conf)
    for v in (r.mu_lower, r.epsilon_lower):
        assert math.isfinite(v) and v >= 0
    assert r.mu_lower <= looser.mu_lower + 1e-12
    assert r.epsilon_lower <= looser.epsilon_lower + 1e-12
    if 0 < fpc < n and 0 < tpc < m:  # never above the point estimate
        assert r.mu_lower <= stats.norm.ppf(tpc / m) - stats.norm.ppf(fpc / n) + 1e-9 or r.mu_lower == 0


@settings(max_examples=60, deadline=None)
@given(m=st.lists(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 1e308]), min_size=1, max_size=40),
       n=st.lists(st.floats(-3, 3), min_size=1, max_size=40))
def test_score_audits_never_return_nan(m, n):
    if len(set(m) | set(n)) == 1:
        with pytest.raises(ValueError, match="constant"):
            fp.run_audit(m, n)
        return
    r = fp.run_audit(m, n)
    assert math.isfinite(r.mu_lower) and r.mu_lower >= 0
    assert math.isfinite(r.epsilon_lower) and r.epsilon_lower >= 0
    assert r.violation is None
    assert np.all(np.diff(r.roc_fpr) >= 0) and np.all(np.diff(r.roc_tpr) >= 0)
    assert r.roc_fpr[-1] == 1 and r.roc_tpr[-1] == 1
    assert np.all(r.points.fpr_upper >= r.points.fpr) and np.all(r.points.tpr_lower <= r.points.tpr)


def test_names_used_by_external_checks():
    import inspect

    sig = inspect.signature(fp.run_audit)
    params = sig.parameters
    assert list(params)[:2] == ["member_scores", "nonmember_scores"]
    for name, default in (("confidence", 0.95), ("delta", 1e-5), ("mechanism", None)):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY and params[name].default == default
    r = fp.run_audit([2.0, 3.0, 1.5], [0.0, 1.0, -1.0], mechanism={"kind": "gaussian", "sigma": 1.0})
    assert isinstance(r.mu_lower, float) and isinstance(r.epsilon_lower, float) and r.violation is False
    assert fp.run_audit([2.0, 3.0], [0.0, 1.0]).violation is None
    sim = fp.simulate_attack(fp.Gaussian(1.0), trials=10, seed=0)
    assert sim.member_scores.shape == sim.nonmember_scores.shape == (10,)


@pytest.mark.parametrize("tp, fpc", [([0], [10]), ([0, 0], [0, 100]), ([100], [0])])
def test_count_audits_have_no_nan_field(tp, fpc):
    """Counts carry no score threshold: None (never NaN) in the result, its best threshold
    and its dict; bounds are 0 when no threshold is informative."""
    r = audit_from_counts(tp, fpc, 100, 100)
    assert r.points.threshold is None and r.best()["threshold"] is None
    assert all(t is None for t in r.to_dict()["thresholds"]["threshold"])
    assert "nan" not in json.dumps(r.to_dict()).lower()
    assert math.isfinite(r.mu_lower) and r.mu_lower >= 0
    assert math.isfinite(r.epsilon_lower) and r.epsilon_lower >= 0
    if tp == [0] or tp == [0, 0]:
        assert r.mu_lower == 0 and r.epsilon_lower == 0
