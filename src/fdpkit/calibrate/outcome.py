"""The outcome of :func:`fdpkit.calibrate_dpsgd`: the solved value, the calibrated run and what
it achieves, and the value as a user copies it (rounded towards the safe side)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from fdpkit._numerics import round_safe
from fdpkit.accounting import CostBudget, account
from fdpkit.accounting._resolution import choose_discretization
from fdpkit.calibrate.targets import (POSTERIOR_FPR, REPORT_DELTA, REPORT_FPR, REPORT_PRIOR, metrics_at)
from fdpkit.fit import ALPHA_MIN_DEFAULT
from fdpkit.mechanisms import mechanism_from_dict
from fdpkit.mechanisms.training import DPSGD

#: The side a solved continuous value is rounded towards for print (True: up): more noise, a
#: smaller sample rate. Whole-number unknowns (batch size, steps) are solved on the safe side.
SAFE_ROUNDING = {"noise_multiplier": True, "sample_rate": False}


@dataclass(frozen=True)
class CalibrationResult:
    """Outcome of :func:`calibrate_dpsgd`.

    Attributes
    ----------
    unknown : str
        Which parameter was solved for.
    value : float
        Its value (an int for ``steps`` and ``batch_size``), on the safe side of the target.
    achieved_mu : float
        μ of the calibrated run at the requested discretization.
    converged : bool
        Whether the solver met its tolerance.
    evaluations : int
        Accounting runs at the requested discretization (the expensive ones).
    coarse_evaluations : int
        Accounting runs at the coarse discretization.
    reason : str
        Empty when converged; otherwise why not (or a note such as "even q = 1 ...").
    target : str
        The target, e.g. ``"epsilon <= 3 at delta=1e-05"`` (empty when only accounting).
    achieved : dict
        Every metric of the calibrated run: μ, regret, ε at δ, TPR at FPR,
        advantage, posterior (at the target's δ/FPR/prior where it has them).
    mechanism : DPSGD or None
        The calibrated run.
    """

    unknown: str
    value: float
    achieved_mu: float
    converged: bool
    evaluations: int
    coarse_evaluations: int = 0
    reason: str = ""
    target: str = ""
    achieved: dict = field(default_factory=dict)
    mechanism: DPSGD | None = None
    #: the PLD discretization the returned run was accounted at (None: not recorded)
    discretization: float | None = None
    #: the value the search found, where ``value`` is that value rounded (:meth:`rounded`); else None
    exact_value: float | None = None

    @property
    def noise_multiplier(self) -> float | None:
        """The calibrated mechanism's noise multiplier (None when no mechanism was found)."""
        return None if self.mechanism is None else self.mechanism.noise_multiplier

    def rounded_value(self, digits: int = 4) -> float:
        """The solved value as a user copies it: ``digits`` significant digits, rounded
        towards the safe side (a noise multiplier up, a sample rate down; whole numbers as
        solved), so that the copied value still meets the target.

        Parameters
        ----------
        digits : int, optional
            Significant digits kept (4, as the reports print).

        Returns
        -------
        float
            The rounded value (``value`` itself for whole-number unknowns).
        """
        up = SAFE_ROUNDING.get(self.unknown)
        return self.value if up is None else round_safe(float(self.value), digits, up=up)

    def rounded_mechanism(self, digits: int = 4) -> DPSGD | None:
        """The calibrated run with the solved value as :meth:`rounded_value` prints it: the
        run a user trains after copying the printed number (its report, statement and links
        then quote the same number as the page).

        Parameters
        ----------
        digits : int, optional
            Significant digits kept.

        Returns
        -------
        DPSGD or None
            The run (None when no mechanism was found).
        """
        if self.mechanism is None or self.unknown not in SAFE_ROUNDING:
            return self.mechanism
        spec = {**self.mechanism.to_dict(), self.unknown: self.rounded_value(digits)}
        return mechanism_from_dict(spec)  # type: ignore[return-value]

    def rounded(self, digits: int = 4, *, alpha_min: float = ALPHA_MIN_DEFAULT,
                budget: CostBudget | None = None) -> "CalibrationResult":
        """This result for the run a user trains after copying the printed value: ``value``
        is :meth:`rounded_value`, ``mechanism`` :meth:`rounded_mechanism`, and ``achieved``
        (with ``achieved_mu``) that run's own metrics, re-accounted at the same discretization
        and read at the same δ, FPR and prior; ``exact_value`` keeps the solved value.
        One story: the figures are of the value shown (rounded towards the safe side, they
        stay on the safe side of the target). Whole-number unknowns, results without a
        mechanism and values the rounding leaves unchanged: the result itself.

        Parameters
        ----------
        digits : int, optional
            Significant digits kept (4, as the reports print).
        alpha_min : float, optional
            FPR range of the μ fit (as :func:`fdpkit.calibrate_dpsgd`'s).
        budget : CostBudget or None, optional
            Cost limit of the one accounting run.

        Returns
        -------
        CalibrationResult
        """
        run = self.rounded_mechanism(digits)
        value = self.rounded_value(digits)
        if run is None or self.unknown not in SAFE_ROUNDING or value == self.value:
            return self
        d = self.discretization if self.discretization is not None else choose_discretization(run, budget=budget)[0]
        acc = account(run, discretization=d, budget=budget)
        a = self.achieved
        ach = metrics_at(acc, delta=a.get("delta", REPORT_DELTA), fpr=a.get("fpr", REPORT_FPR),
                         prior=a.get("prior", REPORT_PRIOR), posterior_fpr=a.get("posterior_fpr", POSTERIOR_FPR),
                         alpha_min=alpha_min)
        return replace(self, value=value, achieved_mu=ach["mu"], achieved={**a, **ach}, mechanism=run,
                       discretization=d, exact_value=self.value)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the solved value, the calibrated run's parameters and every achieved
        metric at top level (``noise_multiplier``, ``mu``, ``epsilon`` at ``delta``, ...)."""
        out: dict[str, Any] = {"unknown": self.unknown, "value": self.value, "target": self.target}
        if self.mechanism is not None:
            m = self.mechanism
            ph = m.phases[0]
            out.update(noise_multiplier=ph.noise_multiplier, sample_rate=ph.sample_rate, steps=ph.steps,
                       batch_size=ph.batch_size, dataset_size=m.dataset_size, epochs=ph.epochs,
                       sampling=m.sampling, relation=m.relation, unit=m.unit,
                       examples_per_user=m.examples_per_user, max_batch_size=ph.max_batch_size,
                       drop_last=ph.drop_last)
        out.update(self.achieved)
        out.update(achieved_mu=self.achieved_mu, converged=self.converged, evaluations=self.evaluations,
                   coarse_evaluations=self.coarse_evaluations, reason=self.reason,
                   mechanism=None if self.mechanism is None else self.mechanism.to_dict())
        if self.exact_value is not None:  # a rounded result (:meth:`rounded`) says what it was rounded from
            out["exact_value"] = self.exact_value
        return out
