r"""The accountant: :func:`account`, fdpkit's one entry point from a mechanism to its certified
trade-off curve and privacy profile.

Order of the routes: Rényi guarantees (zCDP/RDP inside the mechanism) -> :mod:`.rdp`;
DP-SGD with shuffled or full batches and every other mechanism with a closed form ->
:mod:`.closed_form` (exact); the rest -> a pessimistic privacy loss distribution
(:mod:`.pld`, composed by :mod:`.tilted`) read as a curve by :mod:`.pld_curve`, after the
cost model (:mod:`.cost`) has refused what would exhaust the machine.

DP-SGD as it ran -> a certified trade-off curve, for every sampling scheme fdpkit knows
--------------------------------------------------------------------------------------

One step adds N(0, sigma^2 C^2 I) to the sum of clipped gradients (clipping norm C). Per
scheme and neighbouring relation (see :mod:`fdpkit.mechanisms.training`):

- **Poisson** (each example in a batch independently with probability q): dp_accounting's
  PLD of the Poisson subsampled Gaussian, add/remove (zero-out is the same PLD,
  dp_accounting's REPLACE_SPECIAL) or replace-one (REPLACE_ONE), composed over the steps.
- **Truncated Poisson** (Poisson batches cut to ``max_batch_size``): dp_accounting 0.6.0's
  ``from_truncated_subsampled_gaussian_mechanism`` (a mixture of the sampled Gaussian and a
  replace-one sampled Gaussian of sensitivity 2 on the truncation event). Not tightened:
  an audit (issue 29) found it 3-10x above a simple attainable instance when the cap
  equals the expected batch size; it is sound, and may be that loose.
- **Fixed-size batches without replacement, zero-out**: the exact single step
  (:mod:`fdpkit.accounting.without_replacement`). Coupling the batch as U + {i} or U + {j}
  and joint convexity of the hockey-stick divergence bound every step by the family
  (1 - q) N(h) + q N(g) against (1 - q) N(h) + q N(0), |g|, |h| <= C, all of it attainable;
  by the Neyman-Pearson lemma for Gaussian shifts its worst member is h = -g (collinear:
  P_2 = (1 - q) N(0) + q N(2C) against P_1 = (1 - q) N(0) + q N(C)) for eps >= 0 and the
  Poisson pair N(0) vs P_1 below. That profile is one curve per ordering of the pair, so
  its two PLD directions are composed separately. Poisson's add/remove pair would be
  optimistic: whether the example is in a fixed-size batch changes how many others are,
  and their gradients can reveal it (``tests/dpsgd/test_dpsgd_fixed_size_instance.py``).
- **Fixed-size batches without replacement, replace-one**: Dong, Roth & Su 2022, Thm. 4.2:
  if a step on a fixed batch is f-DP for batches differing in one element, the step on a
  batch of m of n examples drawn without replacement is C_q(f)-DP with q = m/n and

      C_q(f) = min{f_q, f_q^{-1}}**,   f_q = q f + (1 - q) Id,                      (4.2)

  here f = G_{2/sigma} (one clipped gradient replaced by another: up to 2C). This is the
  tight single step (its family contains N(0) vs P_2 in both orders), and it stays
  symmetrised per step (both orientations occur for one ordered pair: Lebeda et al. 2024).
  C_q(f) is exactly the symmetric curve of the Poisson *add/remove* sampled Gaussian of
  sensitivity 2: its two PLD directions are T(P, (1-q)P + qQ) = f_q and its inverse, and
  fdpkit's curve of a PLD is the convex hull of the minimum of the directions' symmetric
  curves, whose privacy profile is the larger of theirs (the conjugate of min{f, g}** is
  max{f*, g*}). So fdpkit builds that one-step curve (a certified lower bound at the
  discretization), turns it back into a pessimistic PLD of the *curve*
  (:func:`fdpkit.accounting.from_curve.pld_from_curve`, connect-the-dots on its privacy
  profile), and composes that PLD over the steps: the curve certified for C_q(f)^{(x)T}
  (Dong et al. Thm. 3.2).

Every phase's single step is composed over its steps (and the phases with each other) in
one pass of :func:`fdpkit.accounting.pld.compose_arrays`, the round-off-bounded composition
of :mod:`fdpkit.accounting.tilted` that :func:`fdpkit.accounting.pld.build_pld` uses.
- **Shuffled fixed-size batches** (each example once per pass): no amplification is
  claimed. An example enters P steps, each a Gaussian of sensitivity Delta, the others do
  not depend on it (for replace-one / zero-out the partition into batches is the same on
  both datasets), so the run is exactly mu-GDP with mu = sqrt(sum_phases P / sigma^2) x
  Delta (Dong et al. Cor. 3.3). Poisson accounting of the same setting is *not* a
  guarantee for shuffled batches (Chua et al., ICML 2024; Annamalai et al. 2024); reports
  show it beside, labelled so.

**Privacy unit.** ``unit="user"`` without ``examples_per_user``: users are sampled, so the
maths is the same with users as units. With ``examples_per_user = k``: group privacy, Dong,
Roth & Su Thm. 2.14: an f-DP mechanism is 1 - (1 - f)^{o k}-DP for datasets differing in k
examples; exactly G_{k mu} for Gaussian DP, a sound lower bound on a certified curve
(:func:`fdpkit.group_curve`).
"""

from __future__ import annotations

from typing import Any

from fdpkit.accounting.closed_form import closed_form_curve, shuffled_mu
from fdpkit.accounting.cost import check_leaf_grids, check_machine_memory, estimate_cost
from fdpkit.accounting.pld import build_pld, dpsgd_pld
from fdpkit.accounting.pld_curve import curve_from_pld
from fdpkit.accounting.profile import PldProfile
from fdpkit.accounting.rdp import contains_renyi, renyi_accounting
from fdpkit.accounting.result import DISCRETIZATION_DEFAULT, Accounting, check_discretization
from fdpkit.curves import GaussianCurve, TradeOffCurve, group_curve
from fdpkit.mechanisms import DPSGD, Mechanism, Phase, training_run


def check_fits_memory(mechanism: Mechanism, discretization: float) -> None:
    """Refuse, before any work, a mechanism whose accounting at ``discretization`` would not
    fit this process's memory: what :func:`account` checks when no budget is given (a single
    step's privacy-loss grid, then the composition's peak memory), with the same
    :class:`~fdpkit.accounting.cost.BudgetExceeded` (a ParameterError naming the parameter to
    change). Mechanisms :func:`account` answers without a PLD (closed forms, Rényi guarantees,
    shuffled DP-SGD) always pass. A sweep checks every setting with it before running any
    (:func:`fdpkit.sweep.run_sweep`)."""
    d = check_discretization(discretization)
    run = training_run(mechanism)
    if run is not None:
        if closed_form_curve(run) is not None or run.sampling == "shuffled":
            return
        # dpsgd(0.5, 0.5, 10**6) under an 8 GB ulimit ended in a bare MemoryError: its
        # composed grid of 7.7e8 points needs about 49 GB
        mechanism = run
    elif contains_renyi(mechanism) or closed_form_curve(mechanism) is not None:
        return
    _check_memory(mechanism, d)


def _check_memory(mechanism: Mechanism, d: float) -> None:
    """:func:`check_fits_memory` for a mechanism :func:`account` composes (it has already
    answered closed forms, Rényi guarantees and shuffled runs): a single step's grid, then the
    composition's peak memory."""
    check_leaf_grids(mechanism, d)
    check_machine_memory(mechanism, d)


def account(mechanism: Mechanism, *, discretization: float = DISCRETIZATION_DEFAULT,
            budget: Any = None) -> Accounting:
    """Account ``mechanism``: its certified trade-off curve and privacy profile.

    The one entry point of :mod:`fdpkit.accounting` (see the module docs for the routes).
    Closed forms are exact and used wherever one exists, including DP-SGD with shuffled
    batches (μ = Δ √P / σ, no amplification) and with full batches; every
    other mechanism gets a pessimistic PLD curve (``bound="lower"``).

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float
        The PLD's value discretization interval, in [1e-6, 1].
    budget : CostBudget, optional
        Checked against :func:`fdpkit.accounting.estimate_cost` before any work; over it, a
        ``BudgetExceeded`` (a ValueError) names the parameter to change. Without one, a
        single step or a composition larger than this process's memory (the machine's, or
        less under ``ulimit -v`` or a container's limit) is still refused.

    Returns
    -------
    Accounting

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian, Repeated, dpsgd
    >>> acc = account(Repeated(Gaussian(2.0), 4))
    >>> acc.method, acc.curve
    ('closed form', GaussianCurve(mu=1.0))
    >>> account(dpsgd(2.0, batch_size=10, dataset_size=100, steps=4, sampling="shuffled",
    ...               relation="replace-one")).curve
    GaussianCurve(mu=1.0)
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")
    d = check_discretization(discretization)
    run = training_run(mechanism)
    if run is not None:
        if budget is not None:
            estimate_cost(run, d).check(budget)
        elif closed_form_curve(run) is None and run.sampling != "shuffled":
            _check_memory(run, d)
        kept = _take_kept(run, d)
        return kept if kept is not None else account_dpsgd(run, d)
    if contains_renyi(mechanism):  # zCDP / RDP guarantees: accounting/rdp.py
        return renyi_accounting(mechanism)
    exact = closed_form_curve(mechanism)
    if exact is not None:
        return Accounting(mechanism, exact, "closed form", None)
    if budget is not None:
        estimate_cost(mechanism, d).check(budget)
    else:  # closed forms and Rényi guarantees are answered above
        _check_memory(mechanism, d)
    pld = build_pld(mechanism, d)
    profile = PldProfile(pld)
    acc = Accounting(mechanism, curve_from_pld(pld, profile), "PLD", d, pld)
    object.__setattr__(acc, "_profile", profile)
    return acc


def tradeoff_curve(mechanism: Mechanism, *, discretization: float = DISCRETIZATION_DEFAULT,
                   budget: Any = None) -> TradeOffCurve:
    """The trade-off curve of ``mechanism`` (see :func:`account`): exact closed forms where
    they exist (Gaussian compositions, Laplace, randomized response, pure and approximate
    DP, shuffled and full-batch DP-SGD), otherwise the curve certified by the pessimistic
    connect-the-dots PLD (a ``PiecewiseLinearCurve`` with ``bound="lower"``).

    Examples
    --------
    >>> from fdpkit.mechanisms import dpsgd
    >>> c = tradeoff_curve(dpsgd(2.0, 0.01, 100), discretization=1e-3)
    >>> c.bound
    'lower'
    """
    return account(mechanism, discretization=discretization, budget=budget).curve


#: One accounting kept for the next :func:`account` of the same run and grid: the grid that
#: :mod:`fdpkit.accounting._grid_probe` chose, already accounted while choosing it (the report
#: that asked for the choice accounts it next). Taken once; a plain list: one slot.
_KEPT: list[tuple[DPSGD, float, Accounting]] = []


def keep(acc: Accounting) -> None:
    """Keep ``acc`` (a DP-SGD run's accounting) for the next :func:`account` of its run and grid."""
    _KEPT[:] = [(acc.mechanism, float(acc.discretization), acc)]


def _take_kept(run: DPSGD, d: float) -> Accounting | None:
    """The kept accounting of ``run`` at ``d``, taken (once), or None."""
    try:
        m, kd, acc = _KEPT.pop()  # atomic: two threads never take one accounting twice
    except IndexError:
        return None
    return acc if kd == d and m == run else None


def account_dpsgd(m: DPSGD, discretization: float) -> Accounting:
    """Account a DP-SGD run (see the module docs); group privacy applied last. No budget
    or grid check: :func:`account` does those."""
    k = m.examples_per_user or 1
    if m.sampling == "shuffled":
        return Accounting(m, GaussianCurve(k * shuffled_mu(m)), "closed form", None)
    exact = closed_form_curve(m)  # full batches (q = 1) in every phase: G_mu exactly
    if exact is not None:
        return Accounting(m, exact, "closed form", None)
    pld = dpsgd_pld(m.example_level(), discretization)
    profile = PldProfile(pld)
    c = curve_from_pld(pld, profile)
    if k > 1:
        return Accounting(m, group_curve(c, k), "PLD + group privacy", discretization)
    acc = Accounting(m, c, "PLD", discretization, pld)
    object.__setattr__(acc, "_profile", profile)
    return acc


def poisson_twin(m: DPSGD) -> DPSGD:
    """The run ``m`` with Poisson sampling at the same noise, sample rates and steps: what
    :func:`poisson_comparison` accounts (for a shuffled run, not a guarantee)."""
    return DPSGD(tuple(Phase(p.noise_multiplier, p.sample_rate, p.steps) for p in m.phases),
                 "poisson", m.relation, m.dataset_size, m.unit, m.examples_per_user)


def poisson_comparison(m: DPSGD, discretization: float, budget: Any = None) -> Accounting:
    """What Poisson accounting would say for the same noise, batch/dataset sizes and steps:
    **not** a guarantee for shuffled batches (Chua et al. 2024; Annamalai et al. 2024).
    Over ``budget`` (a :class:`~fdpkit.accounting.cost.CostBudget`; None: only a single
    step beyond this machine's memory is refused) a ``BudgetExceeded`` before any work."""
    poisson = poisson_twin(m)
    if budget is not None:
        estimate_cost(poisson, discretization).check(budget)
    # a step beyond this machine's memory is a BudgetExceeded (noise multiplier 1e-3 once
    # allocated 38 GiB here: the shuffled run itself is a closed form and passed every check)
    check_leaf_grids(poisson, discretization)
    if budget is None:
        check_machine_memory(poisson, discretization)
    return account_dpsgd(poisson, discretization)


__all__ = ["account", "account_dpsgd", "poisson_comparison", "poisson_twin", "tradeoff_curve"]
