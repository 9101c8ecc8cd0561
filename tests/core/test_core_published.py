"""Layer 3: published tables (shared/reference/published.json) for the core.

Sources: R fdp gdp(1) documentation grid; Gomez et al. Sec. 6 (randomized response regret);
Gomez et al. Prop. 6.1 (mu implied by pure eps-DP)."""

import numpy as np
import pytest

import fdpkit as fp

REL_TOL = 1e-6


def test_r_fdp_gdp1_grid(published):
    ref = published["gdp1_canonical_grid"]
    grid = fp.GaussianCurve(1.0).grid()
    np.testing.assert_allclose(grid.alpha, ref["alpha"], atol=1e-15)
    np.testing.assert_allclose(grid.beta, ref["beta"], rtol=REL_TOL, atol=1e-15)


def test_randomized_response_mu_and_regret(published):
    rows = published["randomized_response"]["rows"]
    for row in rows:
        fit = fp.fit_gdp(fp.RandomizedResponseCurve(row["eps"]))
        assert fit.mu == pytest.approx(row["mu_star"], rel=REL_TOL)
        assert fit.mu >= row["mu_star"] * (1 - 1e-12)  # never optimistic
        assert fit.regret == pytest.approx(row["regret_exact"], rel=REL_TOL)
        assert fit.alpha_min == 0 and fit.tau == 0
    eps1 = next(r for r in rows if r["eps"] == 1.0)
    assert round(fp.fit_gdp(fp.RandomizedResponseCurve(1.0)).mu, 4) == 1.2320
    assert round(eps1["regret_exact"], 4) == 0.0575


def test_mu_implied_by_pure_dp(published):
    for row in published["pure_epsilon_to_mu"]["rows"]:
        fit = fp.fit_gdp(fp.EpsDeltaCurve(row["eps"]))
        assert fit.mu == pytest.approx(row["mu_pure"], rel=REL_TOL)
