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
    RandomizedResponseCurve,
    TradeOffCurve,
    UniformSamplingCurve,
    envelope,
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

__all__ = [
    "__version__",
    "CurveGrid",
    "EpsDeltaCurve",
    "GaussianCurve",
    "LaplaceCurve",
    "PiecewiseLinearCurve",
    "RandomizedResponseCurve",
    "TradeOffCurve",
    "UniformSamplingCurve",
    "envelope",
    "worst_case",
    "GDPFit",
    "advantage",
    "bayes_risk",
    "fit_gdp",
    "regret",
    "symmetric_regret",
]
