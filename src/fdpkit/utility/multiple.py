"""Multiple testing in power planning: the per-test level to plan with when several tests
are run.

- Bonferroni: alpha / m controls the family-wise error rate.
- Benjamini-Hochberg at FDR level q: a true effect ranked among the k expected discoveries
  is rejected at level q k / m; planning with k = the expected number of true effects
  (``n_true``, default 1, the most conservative) gives the per-test level q k / m.
"""

from __future__ import annotations

from fdpkit._numerics import check_choice, check_scalar

METHODS = ("bonferroni", "bh")
#: Most tests planned at once (keeps alpha / n_tests a normal float).
MAX_TESTS = 10**15


def adjusted_alpha(alpha: float, n_tests: int, method: str = "bonferroni", n_true: int | None = None) -> float:
    """Per-test level for planning ``n_tests`` tests at overall level ``alpha``.

    >>> adjusted_alpha(0.05, 10), adjusted_alpha(0.05, 10, "bh", n_true=4)
    (0.005, 0.02)
    """
    a = check_scalar("alpha", alpha)
    if not 0 < a < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not (isinstance(n_tests, int) and 1 <= n_tests <= MAX_TESTS):
        raise ValueError(f"n_tests must be a positive integer up to {MAX_TESTS:g}, got {n_tests!r}")
    check_choice("method", method, METHODS)
    if method == "bonferroni":
        return a / n_tests
    k = 1 if n_true is None else n_true
    if not (isinstance(k, int) and 1 <= k <= n_tests):
        raise ValueError(f"n_true must be an integer in [1, n_tests], got {n_true!r}")
    return a * k / n_tests
