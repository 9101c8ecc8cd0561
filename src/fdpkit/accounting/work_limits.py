"""Bounds on the work a mechanism asks of an accountant, for services that must refuse work
before doing it (the web server, the ledger): the size of a mechanism tree (leaf mechanisms,
largest repetition count), its smallest noise, a check against configured bounds, and the
cost-model constants of the work beyond accounting (sweep settings, audit scores, simulated
draws). Pure functions of plain values; the web layer only passes its configured limits.

Work units are those of :mod:`fdpkit.accounting.cost` (``WORK_PER_SECOND`` = 1e7 per
CPU-second).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fdpkit.accounting.cost import estimate_cost
from fdpkit.errors import ParameterError
from fdpkit.mechanisms import Gaussian, Laplace, Mechanism, dpsgd, leaves, training_run, walk

#: Work of one setting of a sweep beyond its accounting: the curve, the tight-mu fit, the
#: regret and the metrics read from them (about 0.03 s measured; 0.05 s counted).
SWEEP_WORK_PER_SETTING = 5e5
#: Work of one score in an audit (sorting, ranks, the ROC): 10^6 scores per class take
#: about 0.2 s (``benchmarks/audit.py``); counted 2.5x that.
AUDIT_WORK_PER_SCORE = 5.0
#: Work of one simulated release of one trial (a random draw and its privacy loss).
SIMULATION_WORK_PER_DRAW = 20.0


def tree_size(mechanism: Mechanism) -> tuple[int, int]:
    """(number of leaf mechanisms, largest repetition count) of a mechanism tree: what
    bounds an accountant's work. Nesting multiplies: ``Repeated(Repeated(M, a), b)`` is
    ``a * b`` steps.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism.

    Returns
    -------
    tuple of int
        Leaves and the largest number of compositions of one leaf.

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian, Repeated
    >>> tree_size(Repeated(Repeated(Gaussian(1.0), 10), 20))
    (1, 200)
    """
    parts, times = 0, 0
    for leaf, t in leaves(mechanism):  # the one tree walk (fdpkit.mechanisms.walk / leaves)
        run = training_run(leaf)
        phases = run.phases if run is not None else None
        parts += len(phases) if phases else 1
        times = max(times, t * run.steps if phases else t)
    return parts, times


def _noise(m: Mechanism) -> float:
    """Noise per unit of sensitivity of one node (inf where it adds none itself)."""
    run = training_run(m)
    if run is not None:
        return min(p.noise_multiplier for p in run.phases) / run.sensitivity
    if isinstance(m, Gaussian):
        return m.sigma / m.sensitivity
    if isinstance(m, Laplace):
        return m.scale / m.sensitivity
    return math.inf


def min_noise(mechanism: Mechanism) -> float:
    """The smallest noise (standard deviation or Laplace scale per unit of sensitivity) of
    any leaf of the tree; ``inf`` when no leaf adds Gaussian or Laplace noise.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism.

    Returns
    -------
    float
        The smallest relative noise.

    Examples
    --------
    >>> from fdpkit.mechanisms import Composed, Gaussian, Laplace
    >>> min_noise(Composed((Gaussian(2.0), Laplace(0.5))))
    0.5
    """
    return min(_noise(node) for node, _ in walk(mechanism))


def check_bounds(mechanism: Mechanism, discretization: float, *, max_steps: int, max_parts: int,
                 min_relative_noise: float, min_discretization: float) -> None:
    """Refuse a mechanism beyond a service's bounds, naming the parameter to change.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism to account.
    discretization : float
        The PLD discretization asked for.
    max_steps, max_parts : int
        Most compositions of one leaf, most leaves.
    min_relative_noise : float
        Smallest noise per unit of sensitivity (below it PLD grids explode).
    min_discretization : float
        Finest discretization.

    Raises
    ------
    fdpkit.ParameterError
        ``noise`` (parameter ``noise_multiplier``), ``steps``, ``parts`` or ``discretization``
        beyond the bounds.

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian
    >>> check_bounds(Gaussian(0.01), 1e-4, max_steps=10, max_parts=5, min_relative_noise=0.1,
    ...              min_discretization=1e-5)
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: noise (sd or scale per unit of sensitivity) must be at least 0.1 on this server, got 0.01
    """
    noise = min_noise(mechanism)
    if noise < min_relative_noise:
        raise ParameterError(f"noise (sd or scale per unit of sensitivity) must be at least {min_relative_noise:g} "
                             f"on this server, got {noise:g}", "noise_multiplier")
    parts, times = tree_size(mechanism)
    if times > max_steps:
        raise ParameterError(f"steps must be at most {max_steps:,} on this server, got {times:,}", "steps")
    if parts > max_parts:
        raise ParameterError(f"a composed mechanism may have at most {max_parts} parts here, got {parts}",
                             "mechanism")
    if discretization < min_discretization:
        raise ParameterError(f"discretization must be at least {min_discretization:g} on this server, "
                             f"got {discretization:g}", "discretization")


def sweep_cost(noise_multiplier: Sequence[float], sample_rate: Sequence[float], steps: Sequence[int],
               discretization: float) -> float:
    """Estimated work of a DP-SGD grid: the sum over its settings of the cost model's
    estimate (:func:`fdpkit.accounting.estimate_cost`) and :data:`SWEEP_WORK_PER_SETTING`.

    Parameters
    ----------
    noise_multiplier, sample_rate, steps : sequence
        The grid's axes.
    discretization : float
        PLD discretization.

    Returns
    -------
    float
        Work units.

    Examples
    --------
    >>> sweep_cost([1.0], [0.01], [10], 1e-3) > SWEEP_WORK_PER_SETTING
    True
    """
    total = 0.0
    for nm in noise_multiplier:
        for q in sample_rate:
            for t in steps:
                total += estimate_cost(dpsgd(nm, sample_rate=q, steps=t), discretization).work
                total += SWEEP_WORK_PER_SETTING
    return total
