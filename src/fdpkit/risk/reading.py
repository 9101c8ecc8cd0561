"""One guarantee read as attack risk, for people: the numbers, a graded verdict, plain
sentences and plausibility warnings (Kulynych & Honkela Sec. 3; de Fondeville Sec. 3).

The guarantee is one of ``"mu"`` (mu-GDP), ``"epsilon"`` (pure eps-DP) or
``"epsilon_delta"`` ((eps, delta)-DP). Fields that do not belong to the chosen kind are
refused, naming them, rather than silently ignored or reinterpreted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fdpkit._numerics import check_probability, check_scalar, json_safe
from fdpkit.curves import EpsDeltaCurve, GaussianCurve, TradeOffCurve
from fdpkit.fit import advantage
from fdpkit.plausibility import plausibility_warnings
from fdpkit.risk.attack import attack_power, multiplicative_advantage, posterior
from fdpkit.risk.disclosure import failure_mode, relative_risk
from fdpkit.risk.grade import SCALE_NOTE, WORST_CASE_NOTE, Grade, grade

GUARANTEES = ("mu", "epsilon", "epsilon_delta", "zcdp")
#: Which of mu, epsilon, delta, rho each kind of guarantee uses.
FIELDS_OF = {"mu": ("mu",), "epsilon": ("epsilon",), "epsilon_delta": ("epsilon", "delta"), "zcdp": ("rho",)}
_KIND = {"mu": "a mu-GDP", "epsilon": "a pure epsilon-DP", "epsilon_delta": "an (epsilon, delta)-DP",
         "zcdp": "a rho-zCDP"}
_HINT = {"mu": "give only mu, or choose guarantee 'epsilon' or 'epsilon_delta'",
         "epsilon": "give only epsilon, or choose guarantee 'epsilon_delta' or 'mu'",
         "epsilon_delta": "give only epsilon and delta, or choose guarantee 'mu'",
         "zcdp": "give only rho, or choose another guarantee"}
#: delta used when an (eps, delta) guarantee is read without a delta.
DEFAULT_DELTA = 1e-5
MODES = {
    "none": "No blatant disclosure and bounded relative risk: a positive attack can raise an attacker's "
            "belief by at most a fixed factor.",
    "graceful": "No output reveals membership with certainty, but a lucky attacker can become very "
                "confident. Judge the risk at a realistic false-positive rate.",
    "catastrophic": "Some outputs may reveal membership with certainty (blatant disclosure, with "
                    "probability up to δ).",
}


def check_guarantee_fields(guarantee: str, *, mu: float | None = None, epsilon: float | None = None,
                           delta: float | None = None, rho: float | None = None) -> None:
    """Refuse fields that contradict the chosen kind of guarantee (a ValueError naming them).

    >>> check_guarantee_fields("mu", mu=1.0, epsilon=1.0)
    Traceback (most recent call last):
    ValueError: epsilon does not apply to a mu-GDP guarantee (guarantee='mu'); give only mu, or choose guarantee 'epsilon' or 'epsilon_delta'
    """
    if guarantee not in GUARANTEES:
        raise ValueError(f"guarantee must be one of {', '.join(GUARANTEES)}, got {guarantee!r}")
    given = {"mu": mu, "epsilon": epsilon, "delta": delta, "rho": rho}
    extra = [k for k, v in given.items() if v is not None and k not in FIELDS_OF[guarantee]]
    if guarantee == "epsilon" and extra == ["delta"] and delta == 0:
        extra = []  # delta = 0 is pure epsilon-DP
    if extra:
        names = " and ".join(extra)
        kind, hint = _KIND[guarantee], _HINT[guarantee]
        raise ValueError(f"{names} {'does' if len(extra) == 1 else 'do'} not apply to {kind} guarantee "
                         f"(guarantee={guarantee!r}); {hint}")
    missing = [k for k in FIELDS_OF[guarantee] if given[k] is None and k != "delta"]
    if missing:
        raise ValueError(f"{missing[0]} is required for guarantee={guarantee!r}")


def guarantee_curve(guarantee: str, *, mu: float | None = None, epsilon: float | None = None,
                    delta: float | None = None, rho: float | None = None) -> tuple[TradeOffCurve, str]:
    """The trade-off curve of a guarantee (exact, or a sound lower bound for zCDP) and its name."""
    check_guarantee_fields(guarantee, mu=mu, epsilon=epsilon, delta=delta, rho=rho)
    if guarantee == "zcdp":
        from fdpkit.accounting import tradeoff_curve
        from fdpkit.mechanisms import ZCDP

        return tradeoff_curve(ZCDP(rho)), f"ρ = {rho:g} zCDP"
    if guarantee == "mu":
        return GaussianCurve(mu), f"μ = {mu:g} Gaussian DP"
    d = 0.0 if guarantee == "epsilon" else (DEFAULT_DELTA if delta is None else delta)
    name = f"pure ε = {epsilon:g} DP" if d == 0 else f"(ε = {epsilon:g}, δ = {d:g})-DP"
    return EpsDeltaCurve(epsilon, d), name


@dataclass(frozen=True)
class RiskReading:
    """Attack risk of a guarantee at one FPR and prior, with its grade (see module docs)."""

    guarantee: str
    kind: str
    fpr: float
    prior: float
    attack_power: float
    posterior: float
    relative_risk_at_fpr: float
    relative_risk: float
    advantage: float
    failure_mode: str
    grade: Grade
    plain_language: tuple[str, ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    curve: TradeOffCurve | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        d = {k: getattr(self, k) for k in ("guarantee", "kind", "fpr", "prior", "attack_power", "posterior",
                                           "relative_risk_at_fpr", "relative_risk", "advantage", "failure_mode")}
        d["grade"] = self.grade.to_dict()
        d["plain_language"] = list(self.plain_language)
        d["notes"] = list(self.notes)
        d["warnings"] = list(self.warnings)
        return json_safe(d)


def read_guarantee(guarantee: str = "mu", *, mu: float | None = None, epsilon: float | None = None,
                   delta: float | None = None, prior: float = 0.01, fpr: float = 1e-3,
                   n: float | None = None, rho: float | None = None) -> RiskReading:
    """Read a guarantee as attack risk with a graded verdict.

    Parameters
    ----------
    guarantee : {"mu", "epsilon", "epsilon_delta", "zcdp"}
    mu, epsilon, delta, rho : float, optional
        Only the fields of the chosen kind (others raise ``ValueError`` naming them).
    prior : float
        Attacker's prior probability of membership, in [0, 1].
    fpr : float
        The attack's false-positive rate, in (0, 1).
    n : float, optional
        Number of people in the data (for the delta >= 1/n warning).

    Examples
    --------
    >>> r = read_guarantee("epsilon", epsilon=10.0)
    >>> r.grade.label, r.notes[0].startswith("This is the worst case")
    ('no meaningful protection', True)
    """
    curve, name = guarantee_curve(guarantee, mu=mu, epsilon=epsilon, delta=delta, rho=rho)
    p = check_scalar("prior", check_probability("prior", prior))
    a = check_scalar("fpr", check_probability("fpr", fpr, open_low=True, open_high=True))
    tpr = float(attack_power(curve, a))
    post = float(posterior(curve, p, a))
    mode = failure_mode(curve)
    g = grade(curve)
    plain = (
        f"Among attacks that wrongly flag at most {a:.2%} of non-members, the best one correctly flags at "
        f"most {tpr:.2%} of members ({float(multiplicative_advantage(curve, a)):.3g} times the "
        "false-positive rate).",
        f"If an attacker starts {p:.1%} sure that a person is in the data, a positive attack can raise "
        f"that to at most {post:.1%}.",
        MODES[mode],
    )
    notes = [SCALE_NOTE]
    if guarantee != "mu":
        notes.insert(0, WORST_CASE_NOTE)
    warnings = plausibility_warnings(mu=mu, epsilon=epsilon, delta=delta if guarantee == "epsilon_delta" else None,
                                     prior=p, n=n)
    return RiskReading(name, guarantee, a, p, tpr, post, float(relative_risk(curve, fpr_min=a)),
                       float(relative_risk(curve)), float(advantage(curve)), mode, g, plain,
                       tuple(notes), tuple(warnings), curve)


__all__ = ["DEFAULT_DELTA", "GUARANTEES", "RiskReading", "check_guarantee_fields", "guarantee_curve",
           "read_guarantee"]
