"""Utility: statistical power of analyses under DP noise, and planning solvers."""

from fdpkit.utility.montecarlo import MonteCarloPower, mc_regression_power, mc_ttest_power
from fdpkit.utility.multiple import adjusted_alpha, adjusted_level, composed_epsilon, composed_mu, split_epsilon, split_mu
from fdpkit.utility.solve import PowerSolution, mu_min_for_power_loss, solve_ztest
from fdpkit.utility.twosample import two_proportion_power, two_sample_power, two_sample_power_laplace
from fdpkit.utility.ztest import ALTERNATIVES, released_sd, ztest_power, ztest_power_laplace

__all__ = [
    "ALTERNATIVES", "MonteCarloPower", "composed_epsilon", "composed_mu", "split_epsilon", "split_mu", "PowerSolution", "adjusted_alpha", "adjusted_level", "mc_regression_power",
    "mc_ttest_power", "mu_min_for_power_loss", "released_sd", "solve_ztest", "two_proportion_power",
    "two_sample_power", "two_sample_power_laplace", "ztest_power", "ztest_power_laplace",
]
