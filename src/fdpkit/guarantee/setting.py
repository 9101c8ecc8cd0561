"""What a guarantee is about: sampling scheme, neighbouring relation, privacy unit.

Every report states these (``PrivacyReport.setting``). For DP-SGD they are the fields of
:class:`fdpkit.mechanisms.DPSGD`; for other mechanisms they follow from how fdpkit accounts
them: Poisson subsampling is analysed under add/remove (dp_accounting's default), and a
mechanism without subsampling is private with respect to whichever relation its stated
sensitivity was computed for.
"""

from __future__ import annotations

from typing import Any, Sequence

from fdpkit._numerics import safe_g

from fdpkit.fit import fit_gdp_adapted
from fdpkit.accounting import estimate_cost, poisson_comparison, poisson_twin
from fdpkit.accounting._resolution import choose_discretization
from fdpkit.accounting.cost import BudgetExceeded, CostBudget
from fdpkit.mechanisms import Composed, Mechanism, Subsampled, walk

#: Citations for the gap between shuffled and Poisson accounting.
SHUFFLE_CITATIONS = (
    "Chua et al., How Private are DP-SGD Implementations?, ICML 2024",
    "Annamalai et al., To Shuffle or not to Shuffle: Auditing DP-SGD with Shuffling, 2024",
)
NOT_A_GUARANTEE = "not a guarantee for shuffled batches"
#: The most the Poisson comparison of a shuffled report may cost where the report has no
#: budget of its own: about 10 s of work and 1 GiB of grids. The comparison is not a
#: guarantee (the shuffled run's guarantee is a closed form), so a report never waits
#: minutes or runs out of memory for it: beyond this it is left out, and the report says so.
COMPARISON_BUDGET = CostBudget(max_grid_points=8_000_000, max_work=1e8, max_memory_bytes=1024**3)


def _has_subsampling(m: Mechanism) -> bool:
    return any(isinstance(n, Subsampled) and n.sample_rate < 1.0 for n, _ in walk(m))


def _own_setting(m: Any) -> dict[str, Any] | None:
    """The setting a mechanism states itself (DP-SGD's fields), else None."""
    return m.setting() if isinstance(m, Mechanism) else None


def setting_of(mechanism: Mechanism) -> dict[str, Any]:
    """Sampling scheme, neighbouring relation and privacy unit of ``mechanism``.

    >>> from fdpkit.mechanisms import Gaussian
    >>> setting_of(Gaussian(1.0))["sampling"]
    'none'
    """
    own = _own_setting(mechanism)
    if own is not None:
        return own
    if isinstance(mechanism, Composed) and any(_own_setting(p) is not None for p in mechanism.parts):
        parts = [setting_of(p) for p in mechanism.parts]
        pick = lambda k: ", ".join(sorted({str(p[k]) for p in parts}))  # noqa: E731
        return {"sampling": pick("sampling"), "relation": pick("relation"), "unit": pick("unit"),
                "examples_per_user": None}
    if _has_subsampling(mechanism):
        return {"sampling": "poisson", "relation": "add-remove", "unit": "record", "examples_per_user": None}
    return {"sampling": "none", "relation": "as defined by the stated sensitivity", "unit": "record",
            "examples_per_user": None}


def _is_shuffled(mechanism: Any) -> bool:
    return (_own_setting(mechanism) or {}).get("sampling") == "shuffled"


def _comparison_budget(budget: CostBudget | None) -> CostBudget:
    """The budget the Poisson comparison is held to: the report's, else :data:`COMPARISON_BUDGET`."""
    return COMPARISON_BUDGET if budget is None else budget


def comparison_for(mechanism: Mechanism, discretization: float, deltas: Sequence[float],
                   alpha_min: float, budget: CostBudget | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """For shuffled DP-SGD: what Poisson accounting of the same run would say, labelled as
    not a guarantee, and None; or, where computing it is over ``budget`` (None:
    :data:`COMPARISON_BUDGET`), None and a sentence saying it was left out. (None, None)
    for every other mechanism."""
    if not _is_shuffled(mechanism):
        return None, None
    try:
        acc = poisson_comparison(mechanism, discretization, budget=_comparison_budget(budget))
    except BudgetExceeded:  # the comparison is not a guarantee: left out where it cannot be computed
        # (a user-facing warning, as the comparison's caveat: no "discretization" in it, which
        # would file it among the report's technical notes)
        return None, (f"Shuffled batches: the guarantee claims no amplification by sampling. Poisson accounting "
                      f"of the same run ({NOT_A_GUARANTEE}) is left out of this report: computing it is over "
                      f"the cost budget.")
    # the report's own fit: its FPR range widened where a large mu leaves the default one empty
    mu = fit_gdp_adapted(acc.curve, alpha_min=alpha_min).mu
    eps = [{"delta": d, "epsilon": acc.epsilon_for_delta(d)} for d in deltas]
    caveat = (f"Shuffled batches: the guarantee claims no amplification by sampling. Poisson "
              f"accounting of the same run would give mu = {safe_g(mu, up=True)}, epsilon = {safe_g(eps[0]['epsilon'], up=True)} "
              f"at delta = {eps[0]['delta']:g}: {NOT_A_GUARANTEE} ({'; '.join(SHUFFLE_CITATIONS)}).")
    return {"label": f"Poisson accounting ({NOT_A_GUARANTEE})", "mu": mu, "epsilon_at_delta": eps,
            "citations": list(SHUFFLE_CITATIONS), "caveat": caveat}, None


def comparison_work(mechanism: Mechanism, discretization: float | None,
                    budget: CostBudget | None = None) -> float:
    """The estimated work (:func:`fdpkit.accounting.estimate_cost`) of the Poisson
    comparison that :func:`fdpkit.privacy_report` computes beside the guarantee of
    ``mechanism`` at ``discretization`` (None: the report's rule under ``budget``): 0 for
    every mechanism but shuffled DP-SGD, and 0 where the comparison is over ``budget``
    (None: :data:`COMPARISON_BUDGET`) and so left out. A shuffled run's own guarantee is a
    closed form (cost 0), so this is what its report costs: what a server reads to
    schedule it."""
    if not _is_shuffled(mechanism):
        return 0.0
    if discretization is None:
        # the a-priori grid: a cost, not an accounting (Eq. 5's search tries none costlier)
        discretization = choose_discretization(mechanism, budget=budget, search=False)[0]
    try:
        cost = estimate_cost(poisson_twin(mechanism), discretization)
        cost.check(_comparison_budget(budget))
    except BudgetExceeded:
        return 0.0
    return float(cost.work)
