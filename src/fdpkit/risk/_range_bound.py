"""The attack risk a run certifies through a fitted mu with a range (a privacy report's mu,
alpha_min and tau), over every FPR: the curve the Risk readings, their scalar summaries and
their plots all describe once a range is given.

A fit of mu to a numeric trade-off curve f holds on a range (:mod:`fdpkit.fit.mu`): f >= G_mu
for attacks with FPR and FNR >= alpha_min, and f >= G_mu - tau everywhere. Writing
``outside(a)`` for ``a < alpha_min or G_mu(a) < alpha_min`` (the test of
:func:`fdpkit.risk.reading.read_guarantee`), the run certifies

    TPR(a) <= B(a) = min(1, 1 - G_mu(a) + tau [outside(a)]).                        (1)

G_mu is symmetric (G_mu(G_mu(a)) = a), so the range is the interval [alpha_min, a*] with
a* = G_mu(alpha_min), and B has three pieces, each of the form 1 - G_mu(a) + c, concave in a.

Scalar summaries of (1), each a sound upper bound:

- advantage max_a B(a) - a (Gomez et al. Eq. 8). phi(a) = 1 - G_mu(a) - a is concave with its
  top at a0 = Phi(-mu/2), where it is mu-GDP's advantage eta_mu. If a0 lies in the range, the
  pieces outside reach at most phi(alpha_min) + tau (left) and phi(a*) + tau (right), equal by
  symmetry; otherwise a0 itself is outside and the maximum is eta_mu + tau. Either way
  eta_mu <= eta <= eta_mu + tau (both capped at 1).
- relative risk for FPR >= a0 (de Fondeville Def. 7): sup_{a >= a0} B(a) / a. On each piece
  (1 - G_mu(a) + c) / a decreases (a concave function with a non-negative value at 0 over a),
  so the supremum is at a0 or at the start of a later piece (a* from the right). Over all FPR
  it is infinite once tau > 0: B(0+) = tau > 0.
- blatant disclosure: B(0+) = tau, so the certificate allows outputs that reveal membership
  with certainty with probability up to tau (de Fondeville Thm. 1), which mu-GDP alone rules out.
- the smallest FPR at which B reaches a TPR r (for precision at recall r, Kulynych & Honkela
  Def. 3.2): on a piece with offset c, 1 - G_mu(a) + c >= r iff a >= G_mu(min(1, 1 - r + c)); the
  smallest over the pieces is a lower bound on any attack's FPR at recall r, so r / (r + it)
  bounds its precision from above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fdpkit._numerics import norm_cdf
from fdpkit.curves import GaussianCurve


@dataclass(frozen=True)
class RangeBound:
    """The run's certified TPR bound (1) from mu, its range's smallest FPR and FNR ``fpr_min``
    and the slack ``tau`` beyond it (see the module docs). Arguments are checked by the caller
    (:func:`fdpkit.risk.reading.read_guarantee`)."""

    mu: float
    fpr_min: float
    tau: float
    #: as a curve's ``bound``: a lower bound on the trade-off function (an upper bound on TPR)
    bound: str = "lower"

    @property
    def _gdp(self) -> GaussianCurve:
        return GaussianCurve(self.mu)

    @property
    def fpr_max(self) -> float:
        """a* = G_mu(fpr_min): the range's largest FPR (its FNR there is fpr_min)."""
        return float(self._gdp.beta(self.fpr_min))

    def outside(self, fpr: Any) -> Any:
        """Whether each FPR lies outside the range (below fpr_min, or FNR G_mu(FPR) below it)."""
        a = np.asarray(fpr, dtype=float)
        return (a < self.fpr_min) | (np.asarray(self._gdp.beta(a), dtype=float) < self.fpr_min)

    def tpr(self, fpr: Any) -> Any:
        """B(FPR) of (1): the largest TPR the run allows at each FPR.

        >>> b = RangeBound(1.567, 1e-10, 8.159e-07)
        >>> float(b.tpr(1e-12)) > 8.159e-07 > float(GaussianCurve(1.567).tpr(1e-12))
        True
        """
        a = np.asarray(fpr, dtype=float)
        out = np.minimum(1.0, np.asarray(self._gdp.tpr(a), dtype=float) + np.where(self.outside(a), self.tau, 0.0))
        return float(out) if out.ndim == 0 else out

    def posterior(self, prior: float, fpr: Any) -> Any:
        """prior B / ((1 - prior) FPR + prior B) (de Fondeville Eq. 4); at FPR 0 the limit, 1
        once tau > 0 (blatant disclosure allowed)."""
        a = np.asarray(fpr, dtype=float)
        t = np.asarray(self.tpr(np.maximum(a, 0.0)), dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(t > 0, prior * t / ((1.0 - prior) * a + prior * t), 0.0)
        p = np.where((a == 0) & (self.tau > 0) & (prior > 0), 1.0, p)
        return float(p) if p.ndim == 0 else p

    def fpr_for_tpr(self, tpr: Any) -> Any:
        """The smallest FPR at which B reaches each TPR (a lower bound on any attack's FPR)."""
        r = np.asarray(tpr, dtype=float)
        g = self._gdp
        lo, hi = self.fpr_min, self.fpr_max
        slack = np.asarray(g.beta(np.minimum(1.0, 1.0 - r + self.tau)), dtype=float)  # pieces with tau
        inner = np.maximum(lo, np.asarray(g.beta(np.clip(1.0 - r, 0.0, 1.0)), dtype=float))
        best = np.maximum(hi, slack)  # right piece (a*, 1]: B(1) = 1 reaches every r
        best = np.where(inner <= hi, np.minimum(best, inner), best)
        best = np.where(slack < lo, np.minimum(best, slack), best)  # left piece (0, fpr_min)
        return float(best) if best.ndim == 0 else best

    def precision_at_recall(self, recall: Any) -> Any:
        """Largest precision TPR / (TPR + FPR) at TPR = ``recall`` on a balanced population."""
        r = np.asarray(recall, dtype=float)
        out = r / (r + np.asarray(self.fpr_for_tpr(r), dtype=float))
        return float(out) if out.ndim == 0 else out

    def advantage(self, gdp_advantage: float) -> float:
        """max over FPR of B(FPR) - FPR, from mu-GDP's advantage ``gdp_advantage`` (module docs).

        >>> b = RangeBound(1.0, 0.4, 1e-3)   # the range misses a0 = Phi(-1/2) = 0.31
        >>> round(b.advantage(0.382925), 6)
        0.383925
        """
        a0 = float(norm_cdf(-self.mu / 2.0))  # the top of 1 - G_mu(a) - a
        if bool(self.outside(a0)):
            return min(1.0, gdp_advantage + self.tau)
        lo, hi = self.fpr_min, self.fpr_max
        edge = max(float(self._gdp.tpr(lo)) - lo, float(self._gdp.tpr(hi)) - hi)
        return max(gdp_advantage, min(1.0, edge + self.tau))

    def relative_risk(self, fpr_min: float | None = None) -> float:
        """sup over FPR >= ``fpr_min`` of B(FPR) / FPR (all FPR: None), at least 1."""
        if fpr_min is None:
            return math.inf if self.tau > 0 or self.mu > 0 else 1.0  # B(0+) = tau; mu-GDP's slope at 0
        ratios = [float(self.tpr(fpr_min)) / fpr_min]
        if self.fpr_min > fpr_min:  # the range's start: mu-GDP's own TPR there
            ratios.append(float(self._gdp.tpr(self.fpr_min)) / self.fpr_min)
        hi = self.fpr_max
        if hi >= fpr_min:  # the right piece starts just above a*, with tau
            ratios.append(min(1.0, float(self._gdp.tpr(hi)) + self.tau) / hi)
        return max(1.0, *ratios)

