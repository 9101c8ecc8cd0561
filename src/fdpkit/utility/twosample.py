"""Two-sample comparisons under DP noise: difference of means and of proportions.

Each group's statistic is released separately with a mu-GDP Gaussian mechanism (the groups
hold different people, so each person is covered by one release). Wald tests on the
difference, with the DP noise variance added to the sampling variance:

- means: Var = sd^2/n1 + sd^2/n2 + (R/n1)^2/mu^2 + (R/n2)^2/mu^2;
- proportions (unpooled): Var = p1(1-p1)/n1 + p2(1-p2)/n2 + (1/n1)^2/mu^2 + (1/n2)^2/mu^2.
"""

from __future__ import annotations

import math

from fdpkit._numerics import check_real, check_choice, check_probability, check_scalar
from fdpkit.utility.ztest import ALTERNATIVES, _level, _power_from_z, noise_sd, released_sd


def two_sample_power(*, effect: float, n1: float, n2: float, sd: float, mu: float, alpha: float = 0.05,
                     data_range: float = 1.0, alternative: str = "larger") -> float:
    """Power of the two-sample Z-test for a difference of means released under mu-GDP.

    >>> round(two_sample_power(effect=0.1, n1=200, n2=200, sd=0.25, mu=1.0), 3)
    0.986
    """
    a = _level(alpha)
    check_choice("alternative", alternative, ALTERNATIVES)
    e = check_scalar("effect", effect)
    s = math.hypot(released_sd(n=n1, sd=sd, mu=mu, data_range=data_range),
                   released_sd(n=n2, sd=sd, mu=mu, data_range=data_range))
    if s == 0.0:
        raise ValueError("sd must be > 0 when mu is inf")
    return _power_from_z(e / s, a, alternative)


def two_proportion_power(*, p1: float, p2: float, n1: float, n2: float, mu: float, alpha: float = 0.05,
                         alternative: str = "larger") -> float:
    """Power of the two-sample test for proportions p1 > p2, each released under mu-GDP.

    >>> round(two_proportion_power(p1=0.3, p2=0.2, n1=500, n2=500, mu=0.5), 3)
    0.975
    """
    a = _level(alpha)
    check_choice("alternative", alternative, ALTERNATIVES)
    q1 = float(check_probability("p1", p1))
    q2 = float(check_probability("p2", p2))
    n1 = check_real("n1", n1, low=0.0, low_open=True, scalar=True)
    n2 = check_real("n2", n2, low=0.0, low_open=True, scalar=True)
    var = sum(
        q * (1 - q) / n + noise_sd(n=n, data_range=1.0, mu=mu) ** 2
        for q, n in ((q1, n1), (q2, n2))
    )
    if var == 0.0:
        raise ValueError("the difference has zero variance: p1 and p2 in {0, 1} with mu = inf")
    return _power_from_z((q1 - q2) / math.sqrt(var), a, alternative)
