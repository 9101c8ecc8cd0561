"""Conversions between epsilon, delta and mu, and the seed papers' tables."""

from fdpkit.convert.gdp import (
    delta_for_epsilon,
    delta_for_epsilon_from_mu,
    epsilon_for_delta,
    epsilon_for_delta_from_mu,
    mu_for_epsilon_delta,
)
from fdpkit.convert.pure import mu_from_pure_epsilon, mu_rule_of_thumb
from fdpkit.convert.recommend import Recommendation, recommend_epsilon, recommend_mu
from fdpkit.convert.renyi_conversions import (
    classic_epsilon_for_delta_from_rho,
    delta_for_epsilon_from_rdp,
    delta_for_epsilon_from_rho,
    epsilon_for_delta_from_rdp,
    epsilon_for_delta_from_rho,
    gaussian_mu_from_rho,
    mu_bound_from_rho,
    profile_regret,
    rho_from_gaussian_mu,
)
from fdpkit.convert.tables import (
    Table,
    epsilon_for_delta_table,
    mu_for_epsilon_delta_table,
    multiplicative_advantage_table,
    precision_at_recall_table,
    dpsgd_before_after_table,
    seed_tables,
)

__all__ = [
    "Recommendation",
    "Table",
    "classic_epsilon_for_delta_from_rho",
    "delta_for_epsilon_from_rdp",
    "delta_for_epsilon_from_rho",
    "epsilon_for_delta_from_rdp",
    "epsilon_for_delta_from_rho",
    "gaussian_mu_from_rho",
    "mu_bound_from_rho",
    "profile_regret",
    "rho_from_gaussian_mu",
    "delta_for_epsilon",
    "delta_for_epsilon_from_mu",
    "epsilon_for_delta",
    "epsilon_for_delta_from_mu",
    "epsilon_for_delta_table",
    "mu_for_epsilon_delta",
    "mu_for_epsilon_delta_table",
    "mu_from_pure_epsilon",
    "mu_rule_of_thumb",
    "multiplicative_advantage_table",
    "precision_at_recall_table",
    "recommend_epsilon",
    "recommend_mu",
    "dpsgd_before_after_table",
    "seed_tables",
]
