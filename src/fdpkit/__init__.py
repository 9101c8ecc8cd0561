"""fdpkit: honest, tight, readable privacy guarantees.

Trade-off curves (f-DP), tight pessimistic mu-GDP with its regret, conversions between
epsilon, delta and mu, attack-risk readings and utility planning.

Glossary (used everywhere in fdpkit, never swapped):

- alpha: false-positive rate (type I error) of a membership-inference test.
- beta: false-negative rate (type II error); TPR = 1 - beta.
- f(alpha): the trade-off curve, the smallest beta any test reaches at FPR alpha.
- mu: Gaussian DP parameter, G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu).
"""

from importlib.metadata import PackageNotFoundError, version

try:  # pragma: no cover - trivial
    __version__ = version("fdpkit")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0.0.0"

# --- curves (core) ---------------------------------------------------------------
from fdpkit.curves import (  # noqa: E402
    CurveGrid,
    EpsDeltaCurve,
    GaussianCurve,
    LaplaceCurve,
    PiecewiseLinearCurve,
    RDPCurve,
    RandomizedResponseCurve,
    TradeOffCurve,
    UniformSamplingCurve,
    ZCDPCurve,
    envelope,
    group_curve,
    worst_case,
)

# --- fit: tight mu, regret ---------------------------------------------------------
from fdpkit.fit import (  # noqa: E402
    GDPFit,
    advantage,
    bayes_risk,
    fit_gdp,
    regret,
    symmetric_regret,
)

# --- convert ------------------------------------------------------------------------
from fdpkit.convert import (  # noqa: E402
    Table,
    classic_epsilon_for_delta_from_rho,
    delta_for_epsilon_from_rdp,
    delta_for_epsilon_from_rho,
    epsilon_for_delta_from_rdp,
    epsilon_for_delta_from_rho,
    gaussian_mu_from_rho,
    mu_bound_from_rho,
    profile_regret,
    rho_from_gaussian_mu,
    delta_for_epsilon,
    epsilon_for_delta,
    epsilon_for_delta_table,
    mu_for_epsilon_delta,
    mu_for_epsilon_delta_table,
    mu_from_pure_epsilon,
    mu_rule_of_thumb,
    multiplicative_advantage_table,
    precision_at_recall_table,
    recommend_epsilon,
    recommend_mu,
    seed_tables,
)

# --- risk ---------------------------------------------------------------------------
from fdpkit.risk import (  # noqa: E402
    attack_power,
    failure_mode,
    laplace_epsilon_for_attack_power,
    laplace_epsilon_for_relative_risk,
    multiplicative_advantage,
    mu_for_attack_power,
    mu_for_relative_risk,
    posterior,
    precision_at_recall,
    relative_risk,
)
from fdpkit.risk.grade import Grade, grade  # noqa: E402
from fdpkit.risk.reading import RiskReading, read_guarantee  # noqa: E402
from fdpkit.plausibility import parse_fraction, plausibility_warnings  # noqa: E402

# --- mechanisms / accounting / report / calibration ------------------------------------
from fdpkit.accounting import RhoFit, account, compose_curves, tight_rho, tradeoff_curve  # noqa: E402
from fdpkit.calibrate import CalibrationResult, calibrate_dpsgd  # noqa: E402
from fdpkit.mechanisms import (  # noqa: E402
    DPSGD,
    ApproxDP,
    Composed,
    CurveMechanism,
    Gaussian,
    Laplace,
    Mechanism,
    PureDP,
    RDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
    ZCDP,
    UniformSampling,
    dpsgd,
    dpsgd_from_opacus_history,
    dpsgd_schedule,
    from_dp_event,
    mechanism_from_dict,
    mechanism_from_json,
)
from fdpkit.privacy import PrivacyReport, privacy_report  # noqa: E402

# --- audits (the function fdpkit.audit shadows the package name on purpose: use
# ``from fdpkit.audit import ...`` for the package's other names) -------------------------
from fdpkit.audit import AuditResult, OneRunAudit, SimulatedAttack, audit_from_counts, audit_one_run, simulate_attack  # noqa: E402
from fdpkit.audit import audit  # noqa: E402

# --- utility / planning ---------------------------------------------------------------
from fdpkit.planning import ZTestSpec, privacy_first, utility_first  # noqa: E402
from fdpkit.utility import (  # noqa: E402
    adjusted_alpha,
    mc_regression_power,
    mc_ttest_power,
    mu_min_for_power_loss,
    solve_ztest,
    two_proportion_power,
    two_sample_power,
    two_sample_power_laplace,
    ztest_power,
    ztest_power_laplace,
)

# --- sweeps ----------------------------------------------------------------------------
from fdpkit.sweep import sweep  # noqa: E402  (the function; the package is fdpkit.sweep)

__all__ = [
    "__version__",
    # sweeps
    "sweep",
    # audits
    "AuditResult",
    "SimulatedAttack",
    "audit",
    "audit_from_counts",
    "audit_one_run",
    "OneRunAudit",
    "simulate_attack",
    # utility / planning
    "ZTestSpec",
    "adjusted_alpha",
    "mc_regression_power",
    "mc_ttest_power",
    "mu_min_for_power_loss",
    "privacy_first",
    "solve_ztest",
    "two_proportion_power",
    "two_sample_power",
    "two_sample_power_laplace",
    "utility_first",
    "ztest_power",
    "ztest_power_laplace",
    # mechanisms / accounting / report / calibration
    "ApproxDP",
    "CalibrationResult",
    "DPSGD",
    "Composed",
    "CurveMechanism",
    "Gaussian",
    "Laplace",
    "Mechanism",
    "PrivacyReport",
    "PureDP",
    "RDP",
    "RandomizedResponse",
    "Repeated",
    "Subsampled",
    "ZCDP",
    "RhoFit",
    "account",
    "tight_rho",
    "UniformSampling",
    "compose_curves",
    "calibrate_dpsgd",
    "dpsgd",
    "dpsgd_from_opacus_history",
    "from_dp_event",
    "dpsgd_schedule",
    "mechanism_from_dict",
    "mechanism_from_json",
    "privacy_report",
    "tradeoff_curve",
    # convert
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
    "epsilon_for_delta",
    "epsilon_for_delta_table",
    "mu_for_epsilon_delta",
    "mu_for_epsilon_delta_table",
    "mu_from_pure_epsilon",
    "mu_rule_of_thumb",
    "multiplicative_advantage_table",
    "precision_at_recall_table",
    "recommend_epsilon",
    "recommend_mu",
    "seed_tables",
    # risk
    "Grade",
    "RiskReading",
    "grade",
    "parse_fraction",
    "plausibility_warnings",
    "read_guarantee",
    "attack_power",
    "failure_mode",
    "laplace_epsilon_for_attack_power",
    "laplace_epsilon_for_relative_risk",
    "multiplicative_advantage",
    "mu_for_attack_power",
    "mu_for_relative_risk",
    "posterior",
    "precision_at_recall",
    "relative_risk",
    # curves and fit
    "CurveGrid",
    "EpsDeltaCurve",
    "GaussianCurve",
    "LaplaceCurve",
    "PiecewiseLinearCurve",
    "RDPCurve",
    "RandomizedResponseCurve",
    "TradeOffCurve",
    "UniformSamplingCurve",
    "ZCDPCurve",
    "envelope",
    "group_curve",
    "worst_case",
    "GDPFit",
    "advantage",
    "bayes_risk",
    "fit_gdp",
    "regret",
    "symmetric_regret",
]
