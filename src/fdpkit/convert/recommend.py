"""One recommended conversion per question, its semantics in one sentence, and the other
readings for a details table.

- eps (pure, delta = 0 or absent) -> mu: recommend mu = -2 Phi^{-1}(1/(1 + e^eps)) (Gomez
  et al. Prop. 6.1), the only reading that is a guarantee for every eps-DP mechanism; the
  risk-matching readings of Kulynych & Honkela (Props. 3.1, 3.2) and the rules of thumb are
  alternatives that match one risk of one mechanism, not guarantees.
- (eps, delta) -> mu: recommend the mu whose privacy profile passes through (eps, delta)
  (Gomez et al. Table 3; K&H Eq. 11): exactly the mu of a Gaussian mechanism calibrated to
  (eps, delta). No finite mu covers every (eps, delta)-DP mechanism with delta > 0 (their
  trade-off curve has f(0) = 1 - delta < 1), which the answer says.
- mu -> eps: recommend eps(delta) at the user's delta, else at 1e-5 (K&H Eq. 11 inverted).
"""

from __future__ import annotations

from dataclasses import dataclass

from fdpkit._numerics import check_real, json_safe
from fdpkit.convert.gdp import epsilon_for_delta_from_mu, mu_for_epsilon_delta
from fdpkit.convert.pure import mu_from_pure_epsilon, mu_rule_of_thumb

#: delta used for mu -> eps when none is given.
DEFAULT_DELTA = 1e-5


@dataclass(frozen=True)
class Reading:
    """One conversion: the value, what it means in one sentence, and its source."""

    semantics: str
    value: float
    meaning: str
    source: str

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return json_safe(dict(self.__dict__))


@dataclass(frozen=True)
class Recommendation:
    """The recommended answer to one question and the alternatives."""

    question: str
    quantity: str
    recommended: Reading
    alternatives: tuple[Reading, ...]

    @property
    def value(self) -> float:
        """The recommended value (``recommended.value``)."""
        return self.recommended.value

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"question": self.question, "quantity": self.quantity, "value": json_safe(self.value),
                "recommended": self.recommended.to_dict(),
                "alternatives": [a.to_dict() for a in self.alternatives]}


def recommend_mu(epsilon: float, delta: float | None = None) -> Recommendation:
    """The recommended μ for an ε (pure when ``delta`` is None or 0) or (ε, δ).

    Examples
    --------
    >>> r = recommend_mu(1.0)
    >>> round(r.value, 3), r.recommended.semantics
    (1.232, 'any ε-DP mechanism')
    >>> r = recommend_mu(1.0, 1e-5)
    >>> round(r.value, 4), r.question
    (0.2681, 'μ for (ε = 1, δ = 1e-05)')
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, scalar=True)
    if delta is not None:
        delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True, scalar=True)
    if delta is not None and delta > 0:
        mu = float(mu_for_epsilon_delta(epsilon, delta))
        rec = Reading("Gaussian mechanism with this (ε, δ)", mu,
                      f"A Gaussian mechanism calibrated to (ε, δ) = ({epsilon:g}, {delta:g}) is exactly μ-GDP with this "
                      "μ (same δ at this ε); for other (ε, δ) mechanisms no finite μ is guaranteed, since δ > 0 "
                      "allows blatant disclosure with probability δ.",
                      "Gomez et al. Table 3; Kulynych & Honkela Eq. 11")
        alts = (
            Reading("every (ε, δ)-DP mechanism", float("inf"),
                    "No μ-GDP bound holds for all (ε, δ)-DP mechanisms with δ > 0 (their f(0) = 1 − δ < 1).",
                    "de Fondeville Thm. 1"),
            Reading("ignore δ: any ε-DP mechanism", float(mu_from_pure_epsilon(epsilon)),
                    "What ε alone would give if δ were 0; too optimistic for a mechanism that needs δ.",
                    "Gomez et al. Prop. 6.1"),
        )
        return Recommendation(f"μ for (ε = {epsilon:g}, δ = {delta:g})", "mu", rec, alts)
    mu = float(mu_from_pure_epsilon(epsilon))
    rec = Reading("any ε-DP mechanism", mu,
                  f"Every ε = {epsilon:g} DP mechanism is μ-GDP with this μ: a guarantee for all of them, not an "
                  "approximation (most specific mechanisms, e.g. Laplace, are better).",
                  "Gomez et al. Prop. 6.1")
    alts = [Reading(f"same TPR/FPR at FPR {a:g}", float(mu_from_pure_epsilon(epsilon, fpr=a)),
                    f"Matches the worst-case multiplicative advantage of ε-DP at FPR {a:g} only.",
                    "Kulynych & Honkela Prop. 3.1") for a in (1e-2, 1e-3, 1e-5)]
    alts += [Reading(f"same precision at recall {b:g}", float(mu_from_pure_epsilon(epsilon, recall=b)),
                     f"Matches the worst-case attack precision at recall {b:g} only.",
                     "Kulynych & Honkela Prop. 3.2") for b in (1e-2, 1e-3, 1e-5)]
    alts += [Reading("rule of thumb ε/5", float(mu_rule_of_thumb(epsilon, 5)),
                     "Conservative general-purpose rule; not a guarantee.", "Kulynych & Honkela Sec. 4"),
             Reading("rule of thumb ε/3", float(mu_rule_of_thumb(epsilon, 3)),
                     "When low-probability events can be ignored; not a guarantee.", "Kulynych & Honkela Sec. 4")]
    return Recommendation(f"μ for pure ε = {epsilon:g}", "mu", rec, tuple(alts))


def recommend_epsilon(mu: float, delta: float | None = None) -> Recommendation:
    """The recommended ε of μ-GDP: ε(δ) at the given δ, else at 1e-5.

    Examples
    --------
    >>> r = recommend_epsilon(1.0)
    >>> round(r.value, 3), r.recommended.semantics
    (4.377, 'ε at δ = 1e-05')
    """
    mu = check_real("mu", mu, low=0.0, scalar=True)
    if delta is not None:
        delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True, scalar=True)
    d = DEFAULT_DELTA if delta is None or delta == 0 else delta
    eps = float(epsilon_for_delta_from_mu(mu, d))
    rec = Reading(f"ε at δ = {d:g}", eps,
                  f"μ = {mu:g} GDP alone implies (ε, δ)-DP with this ε at δ = {d:g}: tight for the Gaussian "
                  "mechanism, which attains it; another mechanism with this μ (a DP-SGD run, say) can have a "
                  "smaller ε in its own privacy profile, as its report gives it.", "Kulynych & Honkela Eq. 11")
    alts = tuple(Reading(f"ε at δ = {x:g}", float(epsilon_for_delta_from_mu(mu, x)),
                         f"The same curve read at δ = {x:g}.", "Kulynych & Honkela Eq. 11")
                 for x in (1e-5, 1e-6, 1e-9) if x != d)
    return Recommendation(f"ε for μ = {mu:g}", "epsilon", rec, alts)
