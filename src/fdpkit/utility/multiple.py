"""Multiple testing in power planning: the per-test level to plan with when several tests
are run, and the per-test share of the privacy budget.

- Bonferroni: level / m controls the family-wise error rate.
- Benjamini-Hochberg at FDR level q: a true effect ranked among the k expected discoveries
  is rejected at level q k / m; planning with k = the expected number of true effects
  (``n_true``, default 1, the most conservative) gives the per-test level q k / m.

The k tests are assumed to be about the same people (the worst case), so their releases
compose: a total budget mu (Gaussian DP) is split as mu / sqrt(k) per test, a total pure
epsilon (Laplace) as epsilon / k per test (:func:`split_mu`, :func:`split_epsilon`).
"""

from __future__ import annotations

import math

from fdpkit._deprecation import deprecated_alias, renamed_keywords
from fdpkit._numerics import check_choice, check_real, check_scalar
from fdpkit.errors import ParameterError

METHODS = ("bonferroni", "bh")
#: Most tests planned at once (keeps level / tests a normal float).
MAX_TESTS = 10**15


@renamed_keywords(alpha="level", n_tests="tests", method="correction")
def adjusted_level(level: float, tests: int, correction: str = "bonferroni", n_true: int | None = None) -> float:
    """Per-test level for planning ``tests`` tests at overall level ``level``.

    Parameters
    ----------
    level : float
        The overall significance level, in (0, 1): the family-wise error rate (Bonferroni)
        or the false discovery rate (Benjamini-Hochberg).
    tests : int
        How many tests are planned together (the keyword was ``n_tests=`` before 0.x; it
        still works, with a DeprecationWarning).
    correction : {"bonferroni", "bh"}
        Bonferroni, level / tests; or Benjamini-Hochberg planning, level k / tests (the
        keyword was ``method=``). The same names as :class:`fdpkit.ZTestSpec`'s ``tests``
        and ``correction``, the CLI's ``--tests`` and the web Plan page's fields.
    n_true : int, optional
        With ``"bh"``: the expected number k of true effects, in [1, tests] (default 1,
        the most conservative).

    Returns
    -------
    float
        The level each test is planned at.

    Examples
    --------
    >>> adjusted_level(0.05, 10), adjusted_level(0.05, 10, "bh", n_true=4)
    (0.005, 0.02)
    >>> adjusted_level(0.05, tests=10, correction="bh")
    0.005
    """
    a = check_scalar("level", level)
    if not 0 < a < 1:
        raise ParameterError(f"level must be in (0, 1), got {level!r}", "level")
    if isinstance(tests, bool) or not (isinstance(tests, int) and 1 <= tests <= MAX_TESTS):
        raise ParameterError(f"tests must be a positive integer up to {MAX_TESTS:g}, got {tests!r}", "tests")
    check_choice("correction", correction, METHODS)
    if correction == "bonferroni":
        return a / tests
    k = 1 if n_true is None else n_true
    if not (isinstance(k, int) and 1 <= k <= tests):
        raise ParameterError(f"n_true must be an integer in [1, tests], got {n_true!r}", "n_true")
    return a * k / tests


adjusted_alpha = deprecated_alias(adjusted_level, "fdpkit.adjusted_alpha", "fdpkit.adjusted_level")
"""Deprecated alias of :func:`adjusted_level` (renamed in 0.x, issue 23: alpha is the FPR; a
test's significance level is ``level``). Raises a :class:`DeprecationWarning`."""


# ----------------------------------------------------------------------------- privacy budget


def _tests(tests: int) -> int:
    if isinstance(tests, bool) or not (isinstance(tests, int) and 1 <= tests <= MAX_TESTS):
        raise ParameterError(f"tests must be a positive integer up to {MAX_TESTS:g}, got {tests!r}", "tests")
    return tests


def split_mu(mu: float, tests: int) -> float:
    """Equal per-test GDP parameter when ``tests`` releases about the same people share a
    total budget ``mu``: mu_i = mu / sqrt(k).

    The k-fold composition of mu_i-GDP mechanisms is exactly sqrt(sum mu_i^2)-GDP (Dong,
    Roth & Su 2022, Corollary 3.3), so equal shares give back mu. Inverse:
    :func:`composed_mu`.

    >>> round(split_mu(1.0, 4), 12), round(composed_mu(0.5, 4), 12)
    (0.5, 1.0)
    """
    m = check_real("mu", mu, low=0.0, low_open=True, allow_inf=True, scalar=True)
    return m / math.sqrt(_tests(tests))


def composed_mu(mu_per_test: float, tests: int) -> float:
    """Total GDP parameter of ``tests`` releases at ``mu_per_test`` each: sqrt(k) mu_i
    (Dong, Roth & Su 2022, Corollary 3.3). Inverse of :func:`split_mu`."""
    m = check_real("mu_per_test", mu_per_test, low=0.0, low_open=True, allow_inf=True, scalar=True)
    return m * math.sqrt(_tests(tests))


def split_epsilon(epsilon: float, tests: int) -> float:
    """Equal per-test pure-DP epsilon when ``tests`` releases share a total ``epsilon``:
    eps_i = eps / k (basic composition of pure eps-DP, Dwork & Roth 2014, Theorem 3.16;
    with delta = 0 it is the right total for a worst-case eps-DP guarantee). Inverse:
    :func:`composed_epsilon`.

    >>> split_epsilon(1.0, 4), composed_epsilon(0.25, 4)
    (0.25, 1.0)
    """
    e = check_real("epsilon", epsilon, low=0.0, low_open=True, allow_inf=True, scalar=True)
    return e / _tests(tests)


def composed_epsilon(epsilon_per_test: float, tests: int) -> float:
    """Total pure-DP epsilon of ``tests`` releases at ``epsilon_per_test`` each: k eps_i
    (basic composition). Inverse of :func:`split_epsilon`."""
    e = check_real("epsilon_per_test", epsilon_per_test, low=0.0, low_open=True, allow_inf=True, scalar=True)
    return e * _tests(tests)
