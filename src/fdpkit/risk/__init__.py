"""Attack-risk readings of trade-off curves and privacy-first inverses."""

from fdpkit.risk.bayes import advantage, bayes_risk
from fdpkit.risk.attack import attack_power, multiplicative_advantage, posterior, precision_at_recall
from fdpkit.risk.disclosure import FAILURE_MODES, failure_mode, relative_risk
from fdpkit.risk.grade import Grade, grade, grade_for_tpr
from fdpkit.risk.privacy_first import (
    laplace_epsilon_for_attack_power,
    laplace_epsilon_for_relative_risk,
    mu_for_attack_power,
    mu_for_relative_risk,
    pure_epsilon_for_attack_power,
)

__all__ = [
    "FAILURE_MODES",
    "Grade",
    "grade",
    "grade_for_tpr",
    "advantage",
    "attack_power",
    "bayes_risk",
    "failure_mode",
    "laplace_epsilon_for_attack_power",
    "laplace_epsilon_for_relative_risk",
    "multiplicative_advantage",
    "mu_for_attack_power",
    "mu_for_relative_risk",
    "posterior",
    "precision_at_recall",
    "pure_epsilon_for_attack_power",
    "relative_risk",
]
