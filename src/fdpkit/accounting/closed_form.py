r"""Closed forms: the exact trade-off curves of mechanisms that have one.

- compositions of Gaussians are mu-GDP with mu = sqrt(sum mu_i^2) (Dong, Roth & Su 2022,
  Cor. 3.3); so is DP-SGD with full batches (sample rate 1) in every phase, and DP-SGD with
  shuffled batches (no amplification: mu = Delta sqrt(sum_phases P / sigma^2));
- Laplace, randomized response, pure and approximate DP, de Fondeville's uniform sampling
  and curve mechanisms have their own curve classes in :mod:`fdpkit.curves`.

Nothing here builds a privacy-loss distribution: a closed-form report loads no
dp_accounting.
"""

from __future__ import annotations

import math

import numpy as np

from fdpkit._numerics import EPSILON_MAX
from fdpkit.curves import (
    EpsDeltaCurve,
    GaussianCurve,
    LaplaceCurve,
    PiecewiseLinearCurve,
    RandomizedResponseCurve,
    TradeOffCurve,
    UniformSamplingCurve,
)
from fdpkit.errors import ParameterError
from fdpkit.mechanisms import (
    DPSGD,
    ApproxDP,
    CurveMechanism,
    Gaussian,
    Laplace,
    Mechanism,
    PureDP,
    RandomizedResponse,
    Subsampled,
    UniformSampling,
    fold,
    training_run,
    walk,
)


def _gaussian_mu(mechanism: Mechanism) -> float | None:
    """mu if the mechanism is an (unsubsampled) composition of Gaussians, else None."""
    return fold(mechanism, _gaussian_leaf,
                repeat=lambda inner, times: None if inner is None else inner * math.sqrt(times),
                compose=lambda mus: None if any(m is None for m in mus) else math.sqrt(sum(m * m for m in mus)))


def _gaussian_leaf(mechanism: Mechanism) -> float | None:
    if isinstance(mechanism, Gaussian):
        return mechanism.mu
    run = training_run(mechanism)
    if run is not None:
        return _dpsgd_mu(run)
    return None


#: DP-SGD sampling schemes whose step at sample rate q = 1 is the plain Gaussian mechanism:
#: every example is in every batch (Poisson with q = 1; one fixed batch of the whole
#: dataset). Truncated Poisson is not among them (its batch may still be cut).
FULL_BATCH_SAMPLINGS = ("poisson", "fixed-size")


def full_batch_phases(run: DPSGD) -> list:
    """The phases of ``run`` that use full batches (q = 1 with a full-batch scheme)."""
    if run.sampling not in FULL_BATCH_SAMPLINGS:
        return []
    return [ph for ph in run.phases if ph.sample_rate == 1.0]


def full_batch_gaussian(run: DPSGD, phases: list) -> Gaussian:
    """The Gaussian mechanism that the full-batch ``phases`` of ``run`` compose to, exactly.

    A full-batch step adds N(0, sigma^2 C^2) to a sum that one example moves by at most
    Delta C (Delta = 2 for replace-one, 1 for add-remove and zero-out: ``run.sensitivity``;
    dp_accounting's REPLACE_ONE Gaussian at sampling_prob = 1 is G_{2/sigma} too), so it is
    G_{Delta/sigma}, and T_i of them over the phases compose to G_mu with
    mu = Delta sqrt(sum_i T_i / sigma_i^2) (Dong, Roth & Su 2022, Cor. 3.3): the Gaussian
    mechanism of sensitivity Delta and noise 1 / sqrt(sum_i T_i / sigma_i^2).
    """
    return Gaussian(1.0 / _full_batch_rate(phases), run.sensitivity)


def _full_batch_rate(phases: list) -> float:
    """sqrt(sum_i T_i / sigma_i^2), computed without squares (no overflow)."""
    rate = math.hypot(*(math.sqrt(ph.steps) / ph.noise_multiplier for ph in phases))
    if not math.isfinite(rate):
        raise ValueError(f"noise_multiplier={min(ph.noise_multiplier for ph in phases)!r} is too small: "
                         "the full-batch run's mu = sqrt(steps) x sensitivity / noise_multiplier leaves float range")
    return rate


def _dpsgd_mu(run: DPSGD) -> float | None:
    """mu of a DP-SGD run whose every phase uses full batches (:func:`full_batch_gaussian`;
    with ``examples_per_user = k``, k mu, Dong et al. Thm. 2.14), else None. Shuffled
    batches have their own closed form (:func:`shuffled_mu`)."""
    full = full_batch_phases(run)
    if len(full) != len(run.phases):
        return None
    # mu from the rate itself (not sensitivity / (1 / rate), which may round down an ulp)
    mu = (run.examples_per_user or 1) * run.sensitivity * _full_batch_rate(full)
    if not math.isfinite(mu):
        raise ValueError(f"noise_multiplier={min(ph.noise_multiplier for ph in full)!r} is too small: "
                         "the full-batch run's mu leaves float range")
    return mu


def closed_form_curve(mechanism: Mechanism) -> TradeOffCurve | None:
    """The exact closed-form curve of ``mechanism`` when one exists, else None.

    Compositions of Gaussians are mu-GDP with mu = sqrt(sum mu_i^2) (Dong et al. Cor. 3.3);
    so is DP-SGD with full batches (sample rate 1) in every phase.
    """
    mu = _gaussian_mu(mechanism)
    if mu is not None:
        if not math.isfinite(mu):  # sigma = 1e-320: name what the user gave, not mu
            sigmas = [m.sigma for m, _ in walk(mechanism) if isinstance(m, Gaussian)]
            name, value = ("sigma", min(sigmas)) if sigmas else ("noise_multiplier", None)
            raise ParameterError(f"{name}={value!r} is too small: mu = sensitivity / {name} leaves the "
                                 "floating-point range", name)
        return GaussianCurve(mu)
    if isinstance(mechanism, Subsampled) and mechanism.sample_rate == 1.0:
        return closed_form_curve(mechanism.inner)
    if isinstance(mechanism, Laplace):
        if not mechanism.epsilon <= EPSILON_MAX:  # name the public argument, not the curve's
            raise ParameterError(f"scale must be at least sensitivity / {EPSILON_MAX:g} (epsilon = sensitivity / "
                                 f"scale <= {EPSILON_MAX:g}), got scale={mechanism.scale!r} with sensitivity="
                                 f"{mechanism.sensitivity!r}", "scale")
        return LaplaceCurve(mechanism.epsilon)
    if isinstance(mechanism, RandomizedResponse):
        return RandomizedResponseCurve(mechanism.epsilon)
    if isinstance(mechanism, PureDP):
        return EpsDeltaCurve(mechanism.epsilon)
    if isinstance(mechanism, ApproxDP):
        return EpsDeltaCurve(mechanism.epsilon, mechanism.delta)
    if isinstance(mechanism, UniformSampling):
        return UniformSamplingCurve(mechanism.mu, mechanism.n)
    if isinstance(mechanism, CurveMechanism):
        return PiecewiseLinearCurve.from_tpr(mechanism.alpha, mechanism.tpr, mechanism.bound)
    if any(isinstance(m, ApproxDP) and m.delta >= 1.0
           for m, _ in walk(mechanism, into=lambda n: not isinstance(n, Subsampled))):
        # a part that reveals everything (delta = 1: dp_event's NonPrivate) makes the whole
        # composition perfectly distinguishing: f = 0, exactly (its PLD, all mass at +inf,
        # has no cumulants to place a composition's grid: an OverflowError in the estimate)
        return EpsDeltaCurve(0.0, 1.0)
    return None


def shuffled_mu(m: DPSGD) -> float:
    """mu = Delta sqrt(sum_phases P / sigma^2) of shuffled batches (no amplification).

    With several phases the data loader may run on across a phase boundary, so that a pass
    over the data (one step per example) spans two phases; then an example's worst case is
    its one step of each pass at the smallest noise multiplier of that pass, and
    mu = Delta sqrt(sum_passes 1 / min sigma^2) (passes of floor(N / B) or ceil(N / B)
    steps tiling the run from its first step). A phase started on a fresh pass is what the
    per-phase P counts. Both ways a loader can run, so the larger of the two is reported
    (the per-phase sum alone was too small where the noise drops inside a pass: sigma 2 for
    5 steps, then 1 for 10, passes of 10 steps: 1/4 + 1 where the loader gives 1 + 1)."""
    mu = m.sensitivity * max(shuffled_bounds(m))
    if not math.isfinite(mu):
        raise ValueError(f"noise_multiplier={min(ph.noise_multiplier for ph in m.phases)!r} is too small: "
                         "mu = sqrt(P) x sensitivity / noise_multiplier leaves float range")
    return mu


def shuffled_bounds(m: DPSGD) -> tuple[float, float]:
    """The two readings of :func:`shuffled_mu`, per unit of sensitivity: sqrt(sum_phases P /
    sigma^2) (each phase on fresh passes) and sqrt(sum_passes 1 / min sigma^2) (the loader
    runs on across phases; 0 for one phase). The report says which one gave mu."""
    # a hypotenuse of sqrt(P) / sigma, never a square of sigma (sigma = 1e-200 or 1e200)
    per_phase = math.hypot(*(math.sqrt(ph.participations) / ph.noise_multiplier for ph in m.phases))
    return per_phase, _across_phases(m)


def _across_phases(m: DPSGD) -> float:
    """sqrt(sum_passes 1 / min sigma^2) of a shuffled schedule whose loader runs on across
    its phases (see :func:`shuffled_mu`); 0 for one phase or phases of different batch
    sizes (a new batch size is a new loader, which starts a fresh pass)."""
    phases = m.phases
    if len(phases) < 2 or m.dataset_size is None or len({ph.batch_size for ph in phases}) != 1 \
            or phases[0].batch_size is None:
        return 0.0
    n, b = m.dataset_size, phases[0].batch_size
    ends = np.cumsum([ph.steps for ph in phases])
    starts = ends - np.array([ph.steps for ph in phases])
    best = 0.0
    for length in {n // b, -(-n // b)} if not any(ph.drop_last for ph in phases) else {n // b}:
        # the smallest noise multiplier of each pass [k L, (k + 1) L)
        low = np.full(int(-(-ends[-1] // length)), np.inf)
        for ph, a, e in zip(phases, starts, ends):
            lo_pass, hi_pass = int(a // length), int((e - 1) // length)
            np.minimum(low[lo_pass:hi_pass + 1], ph.noise_multiplier, out=low[lo_pass:hi_pass + 1])
        # sqrt(sum 1 / sigma^2) as a scaled hypotenuse (sigma may be 1e-200 or 1e200)
        s = float(low.min())
        best = max(best, math.sqrt(float(np.sum((s / low) ** 2))) / s)
        if len(phases) > 2:
            best = max(best, _any_loader(phases, length))
    return best


def _any_loader(phases, length: int) -> float:
    """sqrt(sum_phases P'_i / sigma_i^2), P'_i the most passes phase i can touch whatever the
    loader did at earlier boundaries (ran on or started a fresh pass): three or more phases
    allow mixed patterns that neither the fresh-pass count nor the run-on tiling covers. Every
    pass contributes 1 / min sigma^2 <= the sum over the phases it touches of 1 / sigma_i^2,
    so this bounds every pattern. A phase that starts on a pass boundary under every pattern
    (all earlier steps whole passes) touches ceil(T / L) passes; otherwise at most
    floor((T + L - 2) / L) + 1 (the worst start offset, L - 1)."""
    terms = []
    aligned = True
    for ph in phases:
        t = ph.steps
        touched = -(-t // length) if aligned else (t + length - 2) // length + 1
        terms.append(math.sqrt(max(touched, ph.participations or 0)) / ph.noise_multiplier)
        aligned = aligned and t % length == 0
    return math.hypot(*terms)


__all__ = ["FULL_BATCH_SAMPLINGS", "closed_form_curve", "full_batch_gaussian", "full_batch_phases",
           "shuffled_bounds", "shuffled_mu"]
