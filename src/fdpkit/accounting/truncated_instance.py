r"""How loose truncated-Poisson accounting may be: an attainable instance's epsilon.

fdpkit accounts truncated Poisson batches (each example drawn with probability q, batches
above ``max_batch_size`` = B cut to B) with dp_accounting's analysis (see
:mod:`fdpkit.accounting.entry_point`), which is sound but was measured 3-10x above simple
attainable instances when B equals the expected batch size (issue 29). Rather than claim
a tightness it lacks, a report states a number: the epsilon that one attainable instance
already reaches, so that the stated epsilon is at most (stated / instance) times the true one.

The instance
------------
Every other example's clipped gradient is 0, the example's is g (|g| = C) in D and 0 (zero-out,
or absent: add-remove) or -g (replace-one) in D'. The released sum is then g times the
indicator that the example survives sampling *and* truncation, plus N(0, sigma^2 C^2 I). It
is drawn with probability q and then kept with probability min(1, B / (1 + K)), K the number
of other examples drawn, so each step is exactly the Poisson subsampled Gaussian pair of
rate

    q' = q E[min(1, B / (1 + K))],   K ~ Bin(n_others, q).                             (1)

Taking n_others = n (the dataset size; the true number of others is n - 1 or n depending on
the relation's convention) can only lower q', so the instance stays attainable. Its PLD is
dp_accounting's *optimistic* one (privacy losses rounded down, tails dropped), composed over
the steps: a lower bound on the instance's epsilon(delta), hence on the run's true one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
from fdpkit._lazy import lazy_module
from fdpkit.accounting.pld import neighbour, step_sigma
from fdpkit.mechanisms import Mechanism, dpsgd_schedule, training_run

if TYPE_CHECKING:
    from fdpkit.mechanisms import DPSGD
    from dp_accounting.pld import privacy_loss_distribution as pldlib
    from scipy import stats
else:
    pldlib = lazy_module("dp_accounting.pld.privacy_loss_distribution")
    stats = lazy_module("scipy.stats")

#: Relative amount by which q' of Eq. (1) is lowered to absorb its floating-point error.
RATE_MARGIN = 1e-9
#: Standard deviations of K above B summed explicitly in Eq. (1) (the rest is dropped,
#: which lowers q': still attainable).
K_TAIL_SDS = 40.0
#: The instance is built and composed by dp_accounting (its optimistic PLD: Python loops over
#: the grid per step, its own FFT composition): counted in a report's cost
#: (:func:`fdpkit.accounting.estimate_cost`) as this many times the cost model's work of
#: fdpkit's own accounting of the same Poisson run (measured 0.7x of that estimate at sigma 1,
#: q 0.01, T 1000, d 1e-4: 0.47 s; counted 2x, the instance took 0.3-3.2 s at 1e-4).
INSTANCE_WORK_FACTOR = 1.5


@dataclass(frozen=True)
class TruncationLooseness:
    """What one attainable instance of a truncated-Poisson run reaches (module docs).

    Attributes
    ----------
    effective_rates : tuple of float
        q' of Eq. (1), per phase.
    epsilons : tuple of (float, float)
        (delta, lower bound on the run's true epsilon(delta)).
    """

    effective_rates: tuple[float, ...]
    epsilons: tuple[tuple[float, float], ...]

    def ratio(self, delta: float, stated: float) -> float | None:
        """stated / instance epsilon at ``delta``: the most the stated epsilon can exceed the
        true one (None where the instance's epsilon is 0 or not computed)."""
        for d, e in self.epsilons:
            if d == delta and e > 0 and math.isfinite(stated):
                return stated / e
        return None


def effective_rate(q: float, max_batch_size: int, dataset_size: int) -> float:
    """q' of Eq. (1): the probability that the example is drawn and survives truncation.

    Parameters
    ----------
    q : float
        Poisson sampling probability.
    max_batch_size : int
        B, the largest batch kept.
    dataset_size : int
        n, used as the number of other examples (the conservative side).

    Returns
    -------
    float

    Examples
    --------
    >>> effective_rate(0.5, 10, 2) == 0.5 * (1 - 1e-9)  # never truncated
    True
    """
    n, b = int(dataset_size), int(max_batch_size)
    sd = math.sqrt(n * q * (1 - q))
    hi = min(n, int(b + n * q + K_TAIL_SDS * sd + 100))
    k = np.arange(b, hi + 1)
    keep = float(stats.binom.cdf(b - 1, n, q)) + float(np.sum(stats.binom.pmf(k, n, q) * (b / (1.0 + k))))
    return q * min(keep, 1.0) * (1 - RATE_MARGIN)


def instance_run(mechanism: Mechanism) -> DPSGD | None:
    """The attainable instance of a truncated-Poisson DP-SGD run as a Poisson run (its
    phases at the rates q' of Eq. (1)), for the cost model; None for other mechanisms, for
    group privacy (no instance is stated there) and where every q' is 0.

    Examples
    --------
    >>> from fdpkit.mechanisms import dpsgd
    >>> m = dpsgd(1.0, batch_size=50, dataset_size=1000, steps=10, sampling="truncated-poisson",
    ...           max_batch_size=50)
    >>> run = instance_run(m)
    >>> run.sampling, run.steps, run.sample_rate < 0.05
    ('poisson', 10, True)
    """
    run = training_run(mechanism)
    if run is None or run.sampling != "truncated-poisson" or run.examples_per_user:
        return None
    relation = "replace-one" if run.relation == "replace-one" else "add-remove"
    phases = []
    for ph in run.phases:
        q = float(ph.sample_rate)
        rate = effective_rate(q, ph.max_batch_size, run.dataset_size) if ph.max_batch_size else q
        if rate > 0:
            phases.append((ph.noise_multiplier, min(rate, 1.0), ph.steps))
    return dpsgd_schedule(phases, relation=relation) if phases else None


def truncation_looseness(mechanism: Mechanism, discretization: float,
                         deltas: Sequence[float]) -> TruncationLooseness | None:
    """The attainable instance's epsilon(delta) of a truncated-Poisson DP-SGD run (module
    docs); None for other mechanisms and for group privacy (``examples_per_user``).

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float
        The optimistic PLD's loss grid.
    deltas : sequence of float

    Returns
    -------
    TruncationLooseness or None
    """
    run = training_run(mechanism)
    if run is None or run.sampling != "truncated-poisson" or run.examples_per_user:
        return None
    relation = "replace-one" if run.relation == "replace-one" else "add-remove"
    out, rates = None, []
    for ph in run.phases:
        q = float(ph.sample_rate)
        rate = effective_rate(q, ph.max_batch_size, run.dataset_size) if ph.max_batch_size else q
        rates.append(rate)
        if rate <= 0:
            continue
        step = pldlib.from_gaussian_mechanism(
            step_sigma(ph.noise_multiplier, 1.0), sensitivity=1.0, sampling_prob=min(rate, 1.0),
            pessimistic_estimate=False, use_connect_dots=False, value_discretization_interval=discretization,
            neighboring_relation=neighbour(relation))
        step = step.self_compose(ph.steps) if ph.steps > 1 else step
        out = step if out is None else out.compose(step)
    eps = tuple((float(d), 0.0 if out is None else float(out.get_epsilon_for_delta(d))) for d in deltas)
    return TruncationLooseness(tuple(rates), eps)


__all__ = ["INSTANCE_WORK_FACTOR", "TruncationLooseness", "effective_rate", "instance_run", "truncation_looseness"]
