"""Issue 11, item 4: the PLD route is sound and tight at any step count.

Layer 1/2: ``accounting.tilted`` against exact compositions (direct convolution of
non-negative arrays in extended precision: every output a sum of non-negative products,
so its relative error is below T n u_longdouble, far under the slack used here), over a
grid of single steps and step counts; the repair of PMFs with total mass above 1.
Layer 3: the issue's counterexamples (randomized response composed 1000 times, RR + a
Gaussian, the curve collapse, mu at 10^6 steps against the extended-precision value at
the same discretization).
"""

import math

import numpy as np
import pytest
from scipy import optimize, stats

import fdpkit as fp
from fdpkit.accounting import tilted
from fdpkit.accounting._pld_adapter import PmfArrays, pld_from_arrays, pmf_arrays
from fdpkit.accounting.pld_curve import curve_from_pld
from fdpkit.accounting.pld import build_pld
from fdpkit.mechanisms import Composed, Gaussian, Laplace, RandomizedResponse, Repeated, Subsampled, dpsgd

#: Relative slack for the extended-precision reference's own rounding.
EXACT_SLACK = 1e-12
#: Tail sums (where the exact one is >= TAIL_MIN) within this relative amount of exact.
TIGHT_REL = 5e-3
TAIL_MIN = 1e-12
#: Epsilons on which the profiles are compared.
EPS_GRID = np.linspace(0.0, 6.0, 25)
#: mu at 10^6 steps within this relative amount of the extended-precision composition.
MU_TIGHT = 0.05
#: randomized response composed 1000 times: eps(1e-9) within this relative amount of exact.
RR_EPS_REL = 1e-5
#: Total mass of a composed PMF above 1 allowed by rounding: its masses are the rounded
#: differences U(L) - U(L + d) of tails U <= 1 (Eq. 7), each within a relative u of the
#: exact difference, so the total is at most (1 + u)(1 - m) + m, and adding m to its fsum
#: rounds once more: below 1 + 2u = 1 + eps.
COMPOSED_MASS_SLACK = 2 * np.finfo(float).eps


def _exact_compose(a: PmfArrays, times: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(losses, masses, infinity mass) of the ``times``-fold composition of the repaired
    PMF by direct longdouble convolution (repeated squaring)."""
    a = tilted.repair(a)
    p = np.asarray(a.probs, dtype=np.longdouble)
    lo = int(round(a.losses[0] / a.discretization))
    result, r_lo, base, b_lo, t = None, 0, p, lo, times
    while t:
        if t & 1:
            if result is None:
                result, r_lo = base.copy(), b_lo
            else:
                result, r_lo = np.convolve(result, base), r_lo + b_lo
        t >>= 1
        if t:
            base, b_lo = np.convolve(base, base), 2 * b_lo
    losses = (r_lo + np.arange(len(result))) * a.discretization
    # 1 - (1 - m)^T without the cancellation of 1 - m for tiny m (a single step's round-off
    # envelope puts m ~ 1e-14 on +inf; 1 - m would carry a relative error of 1e-3 of m)
    inf = -math.expm1(times * math.log1p(-a.infinity_mass))
    return losses, result, inf


def _tails(losses, probs, inf):
    """U(L) = P[Y >= L] including +inf, and the null tail, at every grid loss."""
    probs = np.asarray(probs, dtype=np.longdouble)
    u = inf + np.cumsum(probs[::-1])[::-1]
    q = np.cumsum((np.exp(-np.asarray(losses, dtype=np.longdouble)) * probs)[::-1])[::-1]
    return u, q


def assert_tails_bound_exact(ours: PmfArrays, a: PmfArrays, times: int, *, points: int,
                             tight: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """Check a composed PMF against the exact ``times``-fold composition of ``a``: a probability
    distribution (mass <= 1, masses >= 0) whose upper tail U is never below the exact one on
    ``points`` non-negative losses (all that the curve and profile use), and within
    TIGHT_REL of it where that is >= TAIL_MIN if ``tight``. Returns the exact composition."""
    assert ours.infinity_mass + math.fsum(ours.probs) <= 1.0 + COMPOSED_MASS_SLACK
    assert np.all(ours.probs >= 0)
    losses, exact, inf = _exact_compose(a, times)
    u_ex, _ = _tails(losses, exact, inf)
    u_our, _ = _tails(ours.losses, ours.probs, ours.infinity_mass)
    for loss in np.linspace(0.0, float(losses[-1]), points):
        i = int(np.searchsorted(losses, loss - 1e-9))
        j = int(np.searchsorted(ours.losses, loss - 1e-9))
        exact_u = float(u_ex[i]) if i < len(u_ex) else inf
        our_u = float(u_our[j]) if j < len(u_our) else ours.infinity_mass
        assert our_u >= exact_u * (1 - EXACT_SLACK), (loss, our_u, exact_u)
        if tight and exact_u >= TAIL_MIN:
            assert our_u <= exact_u * (1 + TIGHT_REL) + 1e-300, (loss, our_u, exact_u)
    return losses, exact, inf


def _delta(losses, probs, inf, eps):
    probs = np.asarray(probs, dtype=np.longdouble)
    above = losses > eps
    return float(inf + np.sum(probs[above] * -np.expm1(eps - np.asarray(losses[above], dtype=np.longdouble))))


SINGLE_STEPS = [
    (Subsampled(Gaussian(2.0), 0.3), 1e-2),
    (Subsampled(Gaussian(1.5), 0.05), 1e-2),
    (Subsampled(Laplace(1.0), 0.1), 1e-2),
    (Laplace(2.0), 1e-2),
    (RandomizedResponse(0.5), 1e-2),
]


@pytest.mark.parametrize("mech,disc", SINGLE_STEPS, ids=lambda v: getattr(v, "label", lambda: str(v))())
@pytest.mark.parametrize("times", [2, 17, 33])  # 2^k + 1: cheap exact references
def test_composition_bounds_the_exact_composition(mech, disc, times):
    remove, add = pmf_arrays(build_pld(mech, disc))
    for a in (remove, add):
        if a is None:
            continue
        ours = tilted.compose([(a, times)])
        losses, exact, inf = assert_tails_bound_exact(ours, a, times, points=60, tight=True)
        for eps in EPS_GRID:
            d_ex = _delta(losses, exact, inf, eps)
            d_our = _delta(ours.losses, ours.probs, ours.infinity_mass, eps)
            assert d_our >= d_ex * (1 - EXACT_SLACK), (eps, d_our, d_ex)
            if d_ex >= TAIL_MIN:
                assert d_our <= d_ex * (1 + TIGHT_REL), (eps, d_our, d_ex)


def test_mixed_composition_bounds_the_exact_one():
    a = pmf_arrays(build_pld(Subsampled(Gaussian(2.0), 0.3), 1e-2))[0]
    b = pmf_arrays(build_pld(Laplace(2.0), 1e-2))[0]
    ours = tilted.compose([(a, 5), (b, 3)])
    la, pa, ia = _exact_compose(a, 5)
    lb, pb, ib = _exact_compose(b, 3)
    probs = np.convolve(pa, pb)
    losses = la[0] + lb[0] + np.arange(len(probs)) * 1e-2
    inf = -math.expm1(math.log1p(-ia) + math.log1p(-ib))
    for eps in EPS_GRID:
        d_ex = _delta(losses, probs, inf, eps)
        d_our = _delta(ours.losses, ours.probs, ours.infinity_mass, eps)
        assert d_our >= d_ex * (1 - EXACT_SLACK)
        if d_ex >= TAIL_MIN:
            assert d_our <= d_ex * (1 + TIGHT_REL)


def test_repair_caps_the_mass_and_is_pessimistic():
    a = pmf_arrays(build_pld(Subsampled(Gaussian(2.0), 0.3), 1e-2))[0]
    junk = a.probs.copy()
    junk[:5] += 1e-3  # mass above 1 at the lowest losses, like clipped round-off
    bad = PmfArrays(a.losses, junk, a.infinity_mass, a.discretization)
    fixed = tilted.repair(bad)
    assert fixed.infinity_mass + math.fsum(fixed.probs) <= 1.0
    # TPR vertices from the top are unchanged wherever they were <= 1
    t_bad = bad.infinity_mass + np.cumsum(bad.probs[::-1])
    t_fix = fixed.infinity_mass + np.cumsum(fixed.probs[::-1])
    keep = t_bad <= 1.0
    np.testing.assert_array_equal(t_fix[keep], t_bad[keep])
    # composing 10^5 times keeps the total at most 1 (dp_accounting's would be (1 + 5e-3)^T)
    out = tilted.compose([(bad, 100_000)])
    assert out.infinity_mass + math.fsum(out.probs) <= 1.0 + COMPOSED_MASS_SLACK


def test_repair_keeps_the_mass_at_most_one_by_construction():
    """Issue 22: the mass bound is checked exactly (math.fsum), not read off a rounded
    running sum. On these seeded inputs the earlier repair (np.cumsum alone) left
    inf + fsum(probs) above 1 in about 40 % of the cases, on any CPU."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(2, 3000))
        q = rng.random(n) ** int(rng.integers(1, 30))
        q *= (1.0 + float(rng.choice([1e-16, 1e-12, 1e-6, 1e-3]))) / q.sum()
        inf = float(rng.choice([0.0, 1e-24, 1e-3, 0.3, 0.7]))
        fixed = tilted.repair(PmfArrays(np.arange(n) * 1e-2, q, inf, 1e-2))
        assert fixed.infinity_mass + math.fsum(fixed.probs) <= 1.0
        assert math.fsum([fixed.infinity_mass, -1.0, *fixed.probs]) <= 0.0  # exactly
        assert np.all(fixed.probs >= 0) and np.all(fixed.probs <= q)  # only ever removed
        # what is removed is at the lowest losses: the kept top is unchanged
        changed = np.flatnonzero(fixed.probs != q)
        if changed.size:
            assert np.all(fixed.probs[: changed[-1]] == 0.0)


def _rr_eps_exact(eps0: float, n: int, delta: float) -> float:
    """eps(delta) of n-fold randomized response eps0 (losses eps0 (2k - n), binomial)."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    ks = np.arange(n + 1)
    logw = np.array([math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) for k in ks])
    logw = logw + ks * math.log(p) + (n - ks) * math.log1p(-p)
    losses = eps0 * (2 * ks - n)

    def d(e):
        above = losses > e
        return float(np.sum(np.exp(logw[above]) * -np.expm1(e - losses[above]))) - delta

    return optimize.brentq(d, 0.0, eps0 * n, xtol=1e-12, rtol=1e-14)


def test_randomized_response_epsilon_is_never_optimistic():
    exact = _rr_eps_exact(0.1, 1000, 1e-9)
    assert exact == pytest.approx(23.2757399, abs=1e-6)
    ours = fp.account(Repeated(RandomizedResponse(0.1), 1000)).epsilon_for_delta(1e-9)
    assert exact <= ours <= exact * (1 + RR_EPS_REL)


def test_rr_plus_gaussian_tpr_is_never_optimistic():
    eps0, mu, alpha = 1.0, 1.0, 1e-12
    p = math.exp(eps0) / (1 + math.exp(eps0))
    # Neyman-Pearson: reject when eps0 * s + Gaussian loss > t (s = +-1)
    def log_alpha(t):  # null: RR sign + with prob 1 - p; Gaussian loss ~ N(-mu^2/2, mu^2)
        z = [(t - eps0 + mu * mu / 2) / mu, (t + eps0 + mu * mu / 2) / mu]
        return np.logaddexp(math.log1p(-p) + stats.norm.logsf(z[0]), math.log(p) + stats.norm.logsf(z[1]))

    t = optimize.brentq(lambda t: log_alpha(t) - math.log(alpha), -50, 200, xtol=1e-13)
    exact = p * stats.norm.sf((t - eps0 - mu * mu / 2) / mu) + (1 - p) * stats.norm.sf((t + eps0 - mu * mu / 2) / mu)
    curve = fp.account(Composed([RandomizedResponse(eps0), Gaussian(1.0 / mu)]), discretization=1e-3).curve
    ours = float(curve.tpr(alpha))
    assert exact <= ours <= exact * 1.05


def test_no_collapse_and_graceful_at_large_step_counts():
    acc = fp.account(dpsgd(0.8, 0.01, 100_000), discretization=1e-3)
    for a in pmf_arrays(acc.pld):
        if a is not None:
            assert a.infinity_mass + math.fsum(a.probs) <= 1.0 + COMPOSED_MASS_SLACK
    fit = fp.fit_gdp(acc.curve)
    assert math.isfinite(fit.mu) and 5.5 < fit.mu < 6.3
    assert acc.curve.tpr(0.0) < 1e-12  # a Gaussian-noise mechanism never fails catastrophically


def test_mu_at_a_million_steps_is_within_five_percent_of_round_off_free():
    disc, mech = 1e-3, dpsgd(0.8, 1e-5, 10**6)
    ours = fp.fit_gdp(fp.account(mech, discretization=disc).curve).mu
    single = pmf_arrays(build_pld(Subsampled(Gaussian(0.8), 1e-5), disc))
    ref = [tilted.compose([(a, 10**6)], dtype=np.longdouble) for a in single]
    mu_ref = fp.fit_gdp(curve_from_pld(pld_from_arrays(*ref))).mu
    assert abs(ours - mu_ref) <= MU_TIGHT * mu_ref


def test_upper_only_output_stops_at_top_and_keeps_the_tail_pessimistic():
    # the composed output ends at plan.top (the mass above it moves to +inf); upper-bound-only
    # passes end their FFT windows there too (the cut-off mass wraps onto unread losses)
    step = pmf_arrays(build_pld(Subsampled(Gaussian(2.0), 0.05), 1e-3))[0]
    pl = tilted.plan([(step, 300)])
    assert not pl.need_low
    assert pl.stop <= max(pl.top, 0)
    full = tilted._windows(pl.cumulants, pl.tilts, step.discretization, pl.lo_sup, pl.hi_sup, pl.top)
    for (lo, hi), (lo0, hi0) in zip(pl.windows, full):
        assert lo == lo0 and hi <= hi0 and (hi == hi0 or hi == max(pl.top, hi0 + lo0, lo0))
    assert pl.windows[-1][1] < full[-1][1]  # this one is shortened (9092 -> 6782 at d = 1e-3)
    out = tilted.compose([(step, 300)])
    assert round(out.losses[-1] / out.discretization) <= pl.top
    assert out.infinity_mass >= 1.0 - (1.0 - step.infinity_mass) ** 300  # never lower


def test_epsilon_safe_start_never_skips_a_firing_index():
    # the per-block bound of the profile's safe start (issue 27) is at most the first index
    # where h_j = ub - lb e^{loss_j} reaches delta, for every delta tried
    from fdpkit.accounting.profile import _Direction

    pld = build_pld(Repeated(Subsampled(Gaussian(1.5), 0.1), 200), 1e-3)
    for a in pmf_arrays(pld):
        if a is None:
            continue
        d = _Direction(a)
        m = d._m
        ub = np.concatenate([[d.m_inf], d.upper_after[:m - 1]])
        lb = np.concatenate([[0.0], d.lower_after[:m - 1]])
        with np.errstate(over="ignore", invalid="ignore"):
            h = ub - lb * np.exp(d.losses[:m])
        for delta in (1e-3, 1e-5, 1e-9, 1e-14):
            fires = np.flatnonzero(h >= delta)
            if fires.size:
                assert d._skip_index(delta) <= fires[0]
