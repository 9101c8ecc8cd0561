"""Rényi conversions: rho <-> mu reading, rho/RDP -> (eps, delta) (optimal, sound), the tight
rho* of Eq. (25) against brute force, and the profile regret of Def. C.3."""

import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdplib

import fdpkit as fp
from fdpkit.accounting.rdp import rdp_epsilons, tight_rho

#: rho* may exceed the brute-force maximum by at most this relative amount (its bracket).
RHO_RTOL = 0.01
#: Agreement of the profile regret (Def. C.3, grid) with the curve regret (Def. 2.6).
PROFILE_REGRET_ATOL = 2e-3
DELTAS = (1e-3, 1e-5, 1e-9, 1e-12)
#: fdpkit's conversions round delta up by a relative 1e-9 (safe side); against dp_accounting's
#: Canonne-Kamath-Steinke conversion they may therefore be above it by at most this much.
CKS_RTOL = 1e-8


@pytest.mark.parametrize("rho", [0.0, 1e-12, 0.02, 0.5, 3.0, 500.0])
def test_rho_mu_round_trip(rho):
    mu = fp.gaussian_mu_from_rho(rho)
    assert fp.rho_from_gaussian_mu(mu) == pytest.approx(rho, rel=1e-14, abs=0)
    assert fp.gaussian_mu_from_rho(fp.rho_from_gaussian_mu(mu)) == pytest.approx(mu, rel=1e-14)


def test_mu_bound_is_above_the_reading():
    for rho in (0.05, 0.5, 2.0):
        assert fp.mu_bound_from_rho(rho) >= fp.gaussian_mu_from_rho(rho)


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
@pytest.mark.parametrize("delta", DELTAS)
def test_rho_to_epsilon_is_sound_and_better_than_known_conversions(rho, delta):
    eps = fp.epsilon_for_delta_from_rho(rho, delta)
    # sound: the Gaussian mechanism with mu = sqrt(2 rho) is rho-zCDP
    assert eps >= fp.epsilon_for_delta_from_mu(math.sqrt(2 * rho), delta) * (1 - 1e-12)
    # better than the classic formula and than dp_accounting's RDP conversion (CKS 2020)
    assert eps <= fp.classic_epsilon_for_delta_from_rho(rho, delta)
    orders = 1 + np.geomspace(1e-3, 5000, 400)
    cks, _ = rdplib.compute_epsilon(orders, rho * orders, delta)
    assert eps <= cks * (1 + CKS_RTOL)
    # inverse pair: delta at that epsilon is at most delta
    assert fp.delta_for_epsilon_from_rho(rho, eps) <= delta * (1 + 1e-9)


@pytest.mark.parametrize("rho", [300.0, 1000.0])
def test_extreme_rho_falls_back_to_closed_forms(rho):
    """Where the curve's lines leave the float range the conversion stays finite, below the
    classic formula and never below the Gaussian that is rho-zCDP."""
    eps = fp.epsilon_for_delta_from_rho(rho, 1e-5)
    assert math.isfinite(eps) and eps <= fp.classic_epsilon_for_delta_from_rho(rho, 1e-5)
    assert eps >= fp.epsilon_for_delta_from_mu(min(math.sqrt(2 * rho), 40.0), 1e-5)
    assert fp.delta_for_epsilon_from_rho(rho, 1.05 * eps) > 0.0


@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_rdp_to_epsilon_sound_and_at_most_dp_accounting(delta):
    orders = [1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64]
    mu = 1.0
    eps_t = [t * mu * mu / 2 for t in orders]
    eps = fp.epsilon_for_delta_from_rdp(orders, eps_t, delta)
    ref, _ = rdplib.compute_epsilon(orders, eps_t, delta)
    assert eps <= ref * (1 + CKS_RTOL)
    assert eps >= fp.epsilon_for_delta_from_mu(mu, delta)  # the Gaussian satisfies the list
    assert fp.delta_for_epsilon_from_rdp(orders, eps_t, eps) <= delta * (1 + 1e-9)


def test_rdp_conversion_of_dpsgd_is_above_the_pld():
    """Through dp_accounting's RDP of DP-SGD, the eps is an upper bound like the PLD's, and
    (the Rényi route being lossy) not below the PLD accountant's eps."""
    m = fp.dpsgd(2.0, 0.05, 100)
    g = fp.accounting.rdp_guarantee(m)
    eps_rdp = fp.epsilon_for_delta_from_rdp(g.orders, g.epsilons, 1e-5)
    eps_pld = fp.account(m, discretization=1e-4).epsilon_for_delta(1e-5)
    assert eps_rdp >= eps_pld * 0.99


@pytest.mark.parametrize("mech", [
    fp.Laplace(1.0), fp.RandomizedResponse(2.0), fp.PureDP(0.5),
    fp.Composed((fp.Laplace(1.0), fp.Gaussian(2.0))), fp.Repeated(fp.Laplace(0.5), 3),
])
def test_tight_rho_matches_brute_force(mech):
    t = 1 + np.geomspace(1e-6, 1e5, 40000)
    brute = float(np.max(rdp_epsilons(mech, t) / t))
    rho = tight_rho(mech).rho
    assert brute <= rho <= brute * (1 + RHO_RTOL)


def test_tight_rho_dpsgd_is_the_unsubsampled_gaussian():
    nm, q, steps = 2.0, 0.05, 100
    fit = tight_rho(fp.dpsgd(nm, q, steps))
    assert fit.rho == pytest.approx(steps / (2 * nm * nm), rel=1e-12)
    ks = np.array([2, 4, 8, 16, 64, 256, 1024])
    brute = float(np.max(rdp_epsilons(fp.dpsgd(nm, q, steps), ks) / ks))
    assert brute <= fit.rho


def test_tight_rho_exact_and_infinite():
    assert tight_rho(fp.ZCDP(0.3)).rho == 0.3
    assert tight_rho(fp.Gaussian(2.0)).rho == 0.125
    assert math.isinf(tight_rho(fp.RDP([2, 4], [0.1, 0.2])).rho)
    assert math.isinf(tight_rho(fp.ApproxDP(1.0, 1e-5)).rho)


def test_profile_regret_matches_curve_regret():
    f = fp.GaussianCurve(1.0).to_piecewise()
    for g in (fp.ZCDPCurve(0.5), fp.EpsDeltaCurve(4.0, 1e-5).to_piecewise(), fp.ZCDPCurve(2.0)):
        assert fp.profile_regret(f, g) == pytest.approx(fp.regret(f, g), abs=PROFILE_REGRET_ATOL)


@pytest.mark.parametrize("call, name", [
    (lambda: fp.gaussian_mu_from_rho(-1), "rho"),
    (lambda: fp.rho_from_gaussian_mu(float("nan")), "mu"),
    (lambda: fp.epsilon_for_delta_from_rho(-0.5, 1e-5), "rho"),
    (lambda: fp.epsilon_for_delta_from_rho(0.5, 2.0), "delta"),
    (lambda: fp.delta_for_epsilon_from_rho(0.5, -1.0), "epsilon"),
    (lambda: fp.epsilon_for_delta_from_rdp([1.0], [0.1], 1e-5), "orders"),
    (lambda: fp.epsilon_for_delta_from_rdp([2.0, 3.0], [0.2, 0.1], 1e-5), "epsilons"),
    (lambda: fp.epsilon_for_delta_from_rdp([2.0, 3.0], [0.2], 1e-5), "same length"),
    (lambda: fp.delta_for_epsilon_from_rdp([2.0], [float("nan")], 1.0), "epsilons"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("q", [0.0, 1e-6, 256 / 60000, 0.05, 0.32768, 0.9, 1.0])
@pytest.mark.parametrize("sigma", [0.0, 0.5, 1.1, 9.4, 1e4])
def test_native_integer_order_rdp_bounds_the_exact_value(q, sigma):
    # the integer orders are computed without importing dp_accounting (start-up time), from
    # the binomial expansion rounded outward (_log_moment_bound): never below the exact RDP
    # (mpmath at 60 digits, whose own error is far below the slack), above it by the slack
    # only; and within dp_accounting's RdpAccountant up to the rounding of both (its log
    # C(alpha, i) as a difference of gammaln values near 6,000 holds about 1e-12 absolutely)
    import mpmath

    from fdpkit.accounting import _rdp_adapter
    from fdpkit.accounting.rdp import RDP_ORDERS_DEFAULT, RHO_ORDERS

    t = np.concatenate([RDP_ORDERS_DEFAULT, RHO_ORDERS])
    ks = np.unique(np.concatenate([np.maximum(np.floor(t), 2.0), np.maximum(np.floor(t), 2.0) + 1.0]))
    ours = _rdp_adapter._native_integer_orders_rdp(q, sigma, ks)
    theirs = _rdp_adapter._dp_accounting_integer_orders_rdp(q, sigma, ks)
    assert np.array_equal(np.isinf(ours), np.isinf(theirs))
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=1e-7, atol=1e-12)
    if 0 < q < 1 and sigma > 0:
        with mpmath.workdps(60):
            mq, ms = mpmath.mpf(q), mpmath.mpf(sigma)
            for k in (2, 3, 17, 256, 1025):
                a = mpmath.fsum(mpmath.binomial(k, i) * (1 - mq) ** (k - i) * mq ** i
                                * mpmath.exp(mpmath.mpf(i * i - i) / (2 * ms ** 2)) for i in range(k + 1))
                exact = mpmath.log(a) / (k - 1)
                got = mpmath.mpf(float(ours[list(ks).index(k)]))
                assert got >= exact, (k, got, exact)
                assert got - exact <= 1e-11 * max(1, abs(exact)) + 1e-14, (k, got, exact)
