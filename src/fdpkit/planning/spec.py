"""The planned analysis a data holder wants to keep useful.

One-sample or two-sample Z-tests of a mean, a proportion or a count (de Fondeville Sec. 4,
Eq. 9), one- or two-sided, with a multiple-testing correction of the level. The released
statistic gets DP noise calibrated to its sensitivity:

- ``"mean"`` of n values in a range of width R: sensitivity R / n;
- ``"proportion"`` of n yes/no answers: sensitivity 1 / n (a mean with R = 1);
- ``"count"`` of yes answers among n: sensitivity 1. A count is n times the proportion and
  its noise is n times larger, so both tests have the same power; only the noise scale that
  is added differs.

Two samples (``groups=2``) of n people each are released separately (each person is in one
group, so the pair is as private as one release); the difference then has twice the
variance of one group's statistic, which is the one-sample test at effect / sqrt(2). With
Laplace noise the difference carries two Laplace noises; its power is computed exactly by
:func:`fdpkit.utility.two_sample_power_laplace`.

Several tests (``tests`` = k > 1) about the same people share the privacy budget: the level
is corrected (Bonferroni alpha / k, or BH), and a total budget mu (Gaussian DP) is split as
mu / sqrt(k) per test (GDP composition), a total pure epsilon (Laplace) as epsilon / k
(basic composition); see :func:`fdpkit.utility.split_mu`. Each test's release then gets the
noise of its share: sigma = sensitivity / mu_i, b = sensitivity / eps_i.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from fdpkit.errors import ParameterError
from fdpkit._numerics import check_choice, check_nonnegative, check_real, check_scalar
from fdpkit.utility import (ALTERNATIVES, adjusted_level, composed_epsilon, composed_mu, split_epsilon, split_mu,
                            two_sample_power_laplace, ztest_power, ztest_power_laplace)

STATISTICS = ("mean", "proportion", "count")
CORRECTIONS = ("bonferroni", "bh")


@dataclass(frozen=True)
class ZTestSpec:
    """A Z-test of a mean (or proportion, or count) on n values per group.

    Parameters
    ----------
    effect : float
        Shift to detect, in the unit of one value (for proportions and counts: a difference
        of proportions).
    n : float
        Values per group.
    sd : float
        Measurement sd of one value (for yes/no data at most 0.5, the worst case).
    alpha : float
        Overall (family-wise) significance level of the ``tests`` tests together: what
        ``fdpkit plan --level``, the web Plan page's "Level" field and the first argument of
        :func:`fdpkit.adjusted_level` call ``level``. Each test's level after the correction
        is the attribute :attr:`level` (the same number when ``tests`` is 1).
    data_range : float
        Width of the range of one value (forced to 1 for proportions and counts).
    alternative : {"larger", "smaller", "two-sided"}
    statistic : {"mean", "proportion", "count"}
    groups : {1, 2}
        One-sample test, or a difference of two independent groups of n each.
    tests : int
        Number of tests planned together (multiple testing).
    correction : {"bonferroni", "bh"}
        Per-test level: α / tests, or Benjamini-Hochberg planning with one true effect.

    Notes
    -----
    Why the keyword is still ``alpha`` (the naming grammar says ``level`` for a test's
    significance level): ``ZTestSpec.level`` already names each test's corrected level,
    and a ``level=`` keyword for the family's level would read 0.05 in and 0.0125 out with
    four Bonferroni tests. The two names mean: ``alpha`` the family's level (given),
    ``level`` each test's (derived; what :meth:`power` uses).

    Examples
    --------
    >>> ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01).power(mu=float("inf")) > 0.99
    True
    >>> spec = ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.05, tests=4)
    >>> spec.alpha, spec.level  # the family's level, each test's (Bonferroni: 0.05 / 4)
    (0.05, 0.0125)
    >>> ZTestSpec(effect=0.1, n=500, sd=0.5, statistic="count").sensitivity
    1.0
    """

    effect: float
    n: float
    sd: float
    alpha: float = 0.05
    data_range: float = 1.0
    alternative: str = "larger"
    statistic: str = "mean"
    groups: int = 1
    tests: int = 1
    correction: str = "bonferroni"

    def __post_init__(self) -> None:
        check_choice("alternative", self.alternative, ALTERNATIVES)
        check_choice("statistic", self.statistic, STATISTICS)
        check_choice("correction", self.correction, CORRECTIONS)
        if self.groups not in (1, 2):
            raise ParameterError(f"groups must be 1 or 2, got {self.groups!r}", "groups")
        check_scalar("sd", check_nonnegative("sd", self.sd))  # NaN, bools, strings: refused here
        check_real("effect", self.effect, scalar=True)  # None, "1", 10**400: was a TypeError/OverflowError in _kw
        if self.statistic != "mean" and self.data_range != 1.0:
            raise ParameterError(f"data_range must be 1 for a {self.statistic} (yes/no values), got {self.data_range!r}", "data_range")
        if isinstance(self.tests, bool) or not isinstance(self.tests, int) or self.tests < 1:
            raise ParameterError(f"tests must be a positive integer, got {self.tests!r}", "tests")
        if not 0.0 < check_scalar("alpha", self.alpha) < 1.0:  # the level under its name here, alpha
            raise ParameterError(f"alpha must be in (0, 1), got {self.alpha!r}", "alpha")
        adjusted_level(self.alpha, self.tests, self.correction)
        # validate all numbers once through the power function
        # (sd = 0 has no non-private test: validate with a finite budget instead)
        self.power(mu=math.inf if self.sd > 0 else 1.0)

    @property
    def level(self) -> float:
        """Each test's significance level after the multiple-testing correction of
        ``alpha`` (the family's level) over ``tests``; ``alpha`` itself for one test."""
        return adjusted_level(self.alpha, self.tests, self.correction) if self.tests > 1 else self.alpha

    @property
    def sensitivity(self) -> float:
        """Sensitivity of the released statistic (one group's): R/n, 1/n or 1."""
        if self.statistic == "count":
            return 1.0
        return self.data_range / self.n

    def _kw(self) -> dict:
        return dict(effect=self.effect / math.sqrt(self.groups), n=self.n, sd=self.sd, level=self.level,
                    data_range=self.data_range, alternative=self.alternative)

    def power(self, *, mu: float) -> float:
        """Power with a μ-GDP Gaussian mechanism (μ = ∞: non-private)."""
        return ztest_power(mu=mu, **self._kw())

    def laplace_power(self, *, epsilon: float) -> float:
        """Power with the Laplace mechanism at ε per release: exact for one group
        (normal-Laplace convolution) and for two (normal + Laplace-difference convolution,
        :func:`fdpkit.utility.two_sample_power_laplace`); see :attr:`laplace_method`."""
        if self.groups == 1:
            return ztest_power_laplace(epsilon=epsilon, **self._kw())
        return two_sample_power_laplace(effect=self.effect, n1=self.n, n2=self.n, sd=self.sd, epsilon=epsilon,
                                        level=self.level, data_range=self.data_range, alternative=self.alternative)

    @property
    def laplace_method(self) -> str:
        """How :meth:`laplace_power` is computed, in words."""
        if self.groups == 1:
            return "exact (normal-Laplace convolution, closed form)"
        return "exact (normal + two-Laplace difference; closed form or Gauss-Laguerre quadrature)"

    def mu_per_test(self, mu_total: float) -> float:
        """Each test's share of a total GDP budget: μ / √tests (Dong et al. Cor. 3.3)."""
        return split_mu(mu_total, self.tests)

    def mu_total(self, mu_per_test: float) -> float:
        """Total GDP budget of the tests at ``mu_per_test`` each: √tests μ_i."""
        return composed_mu(mu_per_test, self.tests)

    def epsilon_per_test(self, epsilon_total: float) -> float:
        """Each test's share of a total pure ε: ε / tests (basic composition)."""
        return split_epsilon(epsilon_total, self.tests)

    def epsilon_total(self, epsilon_per_test: float) -> float:
        """Total pure ε of the tests at ``epsilon_per_test`` each: tests × εᵢ."""
        return composed_epsilon(epsilon_per_test, self.tests)

    def sigma(self, mu: float) -> float:
        """Gaussian noise sd giving μ-GDP for one release: sensitivity / μ."""
        return self.sensitivity / mu if mu > 0 else math.inf

    def laplace_scale(self, epsilon: float) -> float:
        """Laplace scale b giving ε-DP for one release: sensitivity / ε."""
        return self.sensitivity / epsilon if epsilon > 0 else math.inf

    def describe(self) -> str:
        """The planned analysis in words."""
        side = {"larger": "one-sided (larger)", "smaller": "one-sided (smaller)", "two-sided": "two-sided"}[self.alternative]
        what = {"mean": "mean", "proportion": "proportion", "count": "count"}[self.statistic]
        sample = "two-sample" if self.groups == 2 else "one-sample"
        multi = f", {self.tests} tests ({self.correction}: level {self.level:.3g} each)" if self.tests > 1 else ""
        size = f"n = {self.n:g} per group" if self.groups == 2 else f"n = {self.n:g}"  # one sample: no groups
        return f"{side} {sample} Z-test of a {what}, {size}, level {self.alpha:g}{multi}"

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        d = asdict(self)
        d["sensitivity"] = self.sensitivity
        d["level_per_test"] = self.level
        d["laplace_power_method"] = self.laplace_method
        return d


def noise_spec(noise_parameter: str, scale: float | None, sensitivity: float | None, tests: int = 1) -> dict | None:
    """The mechanism spec (the ledger's and the report page's JSON format) of planned noise:
    Gaussian noise of sd ``scale`` (``noise_parameter="sigma"``) or Laplace noise of scale
    ``scale`` (``"b"``) on a statistic of ``sensitivity``, once per test; ``tests`` > 1
    tests on the same people compose (``"repeated"``: μ_total = √k μ_i, Dong et al. Cor. 3.3).
    None when nothing is planned (no analysis, or no finite noise).

    >>> noise_spec("sigma", 0.5, 0.01)
    {'kind': 'gaussian', 'sigma': 0.5, 'sensitivity': 0.01}
    """
    if scale is None or sensitivity is None or not (math.isfinite(scale) and scale > 0):
        return None
    kind, key = ("gaussian", "sigma") if noise_parameter == "sigma" else ("laplace", "scale")
    one = {"kind": kind, key: float(scale), "sensitivity": float(sensitivity)}
    return one if int(tests) == 1 else {"kind": "repeated", "inner": one, "times": int(tests)}
