r"""A cost model of accounting, evaluated BEFORE any work: how large the privacy-loss grids
get and how much building and composing them costs, so that interfaces can refuse requests
that would exhaust a machine and say which parameter to change.

Model
-----
A mechanism with a closed form (:func:`fdpkit.accounting.closed_form_curve`) costs
nothing; Rényi (zCDP/RDP) accounting costs a series per order (:data:`RDP_WORK_SUBSAMPLED`).
Otherwise the estimate follows :func:`fdpkit.accounting.pld.build_pld` step by step, on a
coarse grid. For a PMF of losses spanning ``w`` nats on a grid of step ``d`` (the
discretization) there are ``n = w / d`` points; ``w`` does not depend on ``d``.

- **Single steps.** The mechanism is flattened as ``build_pld`` flattens it (nesting
  multiplied through: ``Repeated(Repeated(M, a), b)`` is M composed ``a b`` times; DP-SGD
  phases are their single steps). Each distinct step's PMF is built on a coarse grid of
  about :data:`COARSE_POINTS` points (milliseconds); its range gives the fine grid's ``n``
  per adjacency direction, and building it costs ``n`` times a per-point rate of its kind
  (``NATIVE_LEAF_WORK``: fdpkit's own vectorised steps; ``LEAF_WORK_*`` with
  ``FDPKIT_NATIVE_STEPS=0``: dp_accounting's loop in Python per point), plus
  ``LEAF_WORK_PER_STEP``.
- **Composition** (:mod:`fdpkit.accounting.tilted`). Its own tilt and window placement
  (Step 2 and the Chernoff windows) is run on the coarse factors: the FFT pass sizes
  ``N_i`` and the output size are read off in nats and scaled to ``d``; the cumulant
  evaluations are counted. Work per direction is

      W = c_K E_K + sum_i (c_P + N_i (c_F + c_L D(N_i))) + n_out (c_O + c_M D(n_out)),  (1)

  ``E_K`` the factor points summed over cumulant evaluations (c_K
  :data:`CUMULANT_WORK_PER_POINT`, less for factors of a few atoms; c_P, c_F, c_L:
  ``PASS_WORK_FIXED``, ``PASS_WORK_PER_POINT``, ``PASS_WORK_PER_DOUBLING``: passes that
  leave the caches cost more a point, D(N) = max(0, log2(N / 2^20)); c_O, c_M:
  :data:`OUTPUT_WORK_PER_POINT`, ``OUTPUT_WORK_PER_DOUBLING``). Not predicted:
  the a-posteriori refinement passes, except where the composition then redoes itself in
  extended precision (its float64 bound loose, small noise at tiny sample rates): the passes
  :mod:`fdpkit.accounting._precision_redo` predicts.
- **Memory.** The composition holds its bound arrays and the FFT's input, spectrum and
  inverse: :data:`BYTES_PER_POINT` bytes per point of the largest grid, and each factor
  beyond the first its spectrum: :data:`BYTES_PER_FACTOR_POINT` bytes per point of its
  composition's grid and direction.

Work is in units of :data:`WORK_PER_SECOND` per single-threaded CPU-second of the reference
machine; the constants (:mod:`fdpkit.accounting._cost_rates`, which says how) were refitted
in 2026-11 to the measured CPU time of the bench's cases and 29 more over every route, and
err on the safe side: ``benchmarks/bench_cost_model.py`` reads estimate / CPU time
1.1-2.0 on its numeric routes (it read 1.9-26 before the refit, the native steps and the
composition's speed work uncounted). ``tests/accounting/test_accounting_cost.py`` checks the
predicted grids and pass sizes against the real composition's, deterministically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fdpkit._numerics import check_real
from fdpkit.errors import ParameterError
from fdpkit.accounting import _precision_redo, tilted
from fdpkit.accounting._cost_rates import (
    CONVOLVE_WORK_PER_POINT, CUMULANT_CALLS_FACTOR, CUMULANT_WORK_PER_POINT, FEW_ATOMS, FEW_ATOMS_CUMULANT_FACTOR,
    FEW_ATOMS_PASS_FACTOR, LEAF_WORK_CURVE, LEAF_WORK_FINITE, LEAF_WORK_FIXED_SIZE, LEAF_WORK_PER_STEP,
    LEAF_WORK_PLAIN, LEAF_WORK_SUBSAMPLED, NATIVE_LEAF_WORK, OUTPUT_WORK_PER_POINT, PASS_WORK_FIXED,
    OUTPUT_WORK_PER_DOUBLING, RDP_WORK_PART, RDP_WORK_SUBSAMPLED, doublings, pass_work,
)
from fdpkit.accounting._cost_rates import PASS_WORK_PER_POINT as PASS_WORK_PER_POINT  # (re-exported)
from fdpkit.accounting._pld_adapter import pmf_arrays
from fdpkit.accounting._memory import _machine_memory
from fdpkit.accounting.closed_form import closed_form_curve
from fdpkit.accounting.from_curve import _check_curve, native_pld_from_curve
from fdpkit.accounting.pld import _flatten, _PhaseStep, _single_step_pld, check_subsampled_inner, native_steps
from fdpkit.accounting.rdp import contains_renyi
from fdpkit.accounting.result import check_discretization
from fdpkit.accounting.truncated_instance import INSTANCE_WORK_FACTOR, instance_run
from fdpkit.mechanisms import (
    ApproxDP,
    CurveMechanism,
    Gaussian,
    Laplace,
    Mechanism,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
    UniformSampling,
    walk,
    training_run,
)

#: Work units per CPU-second of the reference machine (the 2-core development box of
#: ``benchmarks/bench_cost_model.py``): ``work / WORK_PER_SECOND`` estimates single-threaded
#: seconds (two adjacency directions run in two threads, so wall time can be up to half).
WORK_PER_SECOND = 1e7
#: Points of the coarse leaf grid used to read a leaf's loss range and cumulants.
COARSE_POINTS = 2000
#: Coarse grid step of a leaf given as a trade-off curve (its loss range is unknown a priori).
CURVE_COARSE_STEP = 1e-2
#: Tail mass dp_accounting truncates per pairwise composition (``pld.TAIL_MASS_TRUNCATION``).
_TAU = 1e-15
#: Peak bytes held per grid point (the composition's bound arrays, its FFT's input,
#: spectrum and inverse). Measured peak address space over the largest grid (VmPeak, what
#: ``ulimit -v`` limits): 86 (Repeated(Laplace(1), 10^4) at 1e-4, 5.2e7 points), 101
#: (fixed-size replace-one DP-SGD, 3.4e7) and 105 (dpsgd(0.5, 0.5, 3e4) at 1e-3, 2.6e7)
#: bytes; it was 64, and dpsgd(0.5, 0.5, 10^5) at 1e-3 (4.9 GiB estimated, 7.1 GiB
#: resident) passed the memory check under an 8 GB ulimit and died in numpy.
BYTES_PER_POINT = 112
#: Peak bytes held per grid point by each factor of a composition beyond the first (its
#: tilted spectrum and magnitudes in every FFT pass), counted in both directions (they may
#: run in two threads at once). numpy's traced peak over the largest grid read 85-101 bytes
#: a point for one factor, 189-198 for 10 distinct subsampled Gaussians and 477-493 for 30
#: (11-13 bytes a point each), and the address-space peak of 30 composed in two threads 1,052:
#: at BYTES_PER_POINT alone a 30-part composition read 0.31 GiB where it took 2.5 GiB.
BYTES_PER_FACTOR_POINT = 18


class BudgetExceeded(ParameterError):
    """The estimated cost of a request exceeds the budget. ``parameter`` names the input to
    change (``discretization``, ``steps``/``times``, ``sigma``, ``scale``...): a
    :class:`~fdpkit.errors.ParameterError` (a ValueError), as all bad input is (it was a bare
    ValueError subclass, which ``except fdpkit.ParameterError`` let through)."""

    def __init__(self, message: str, parameter: str) -> None:
        super().__init__(message, parameter)

    def __reduce__(self) -> tuple[Any, ...]:
        # picklable across worker processes: raised in a sweep's process pool, it could not be
        # unpickled (its __init__ takes two arguments) and the sweep ended in BrokenProcessPool
        return (type(self), (str(self), self.parameter))


@dataclass(frozen=True)
class CostBudget:
    """Upper limits on one accounting request.

    Attributes
    ----------
    max_grid_points : int
        Largest privacy-loss grid (points) any stage may hold.
    max_work : float
        Largest total work (FFT butterflies plus weighted leaf points).
    max_memory_bytes : int
        Largest peak memory of one composition.
    """

    max_grid_points: int = 20_000_000
    max_work: float = 2e9
    max_memory_bytes: int = 2 * 1024**3

    def __post_init__(self) -> None:
        for name in ("max_grid_points", "max_work", "max_memory_bytes"):
            check_real(name, getattr(self, name), low=0, low_open=True, scalar=True)


@dataclass(frozen=True)
class CostEstimate:
    """What accounting a mechanism at a discretization would cost (see module docs).

    Attributes
    ----------
    method : str
        ``"closed form"`` (free) or ``"PLD"``.
    grid_points : int
        Largest grid (points) held at any stage.
    work : float
        Total work: FFT butterflies plus :data:`LEAF_WORK_PER_POINT` per leaf grid point.
    memory_bytes : int
        Peak memory of the largest stage.
    driver : str
        The parameter that drives the cost most: ``"discretization"`` when a single leaf
        grid is the largest stage, else the repetition count (``"steps"``/``"times"``) or
        the number of ``"parts"``.
    fixed_work : float
        The part of ``work`` that does not grow with the grids (per single step and per FFT
        pass: :data:`LEAF_WORK_PER_STEP`, :data:`PASS_WORK_FIXED`).
    """

    method: str
    grid_points: int
    work: float
    memory_bytes: int
    driver: str
    fixed_work: float = 0.0

    def check(self, budget: CostBudget | None) -> None:
        """Raise :class:`BudgetExceeded` naming the parameter to change when over budget."""
        if budget is None or self.method == "closed form":
            return
        over = None
        if self.grid_points > budget.max_grid_points:
            over = f"a privacy-loss grid of about {self.grid_points:.3g} points (limit {budget.max_grid_points:.3g})"
        elif self.memory_bytes > budget.max_memory_bytes:
            over = (f"about {self.memory_bytes / 2**20:.0f} MiB of memory "
                    f"(limit {budget.max_memory_bytes / 2**20:.0f} MiB)")
        elif self.work > budget.max_work:
            over = f"about {self.work:.3g} units of work (limit {budget.max_work:.3g})"
        if over is None:
            return
        hint = {
            "discretization": "use a larger discretization (a coarser grid) or more noise",
            "parts": "use fewer parts or a larger discretization",
        }.get(self.driver, f"use fewer {self.driver} or a larger discretization")
        raise BudgetExceeded(f"{self.driver}: this request needs {over}; {hint}", self.driver)


@dataclass
class _Tally:
    """Running totals of one estimate (counts; :attr:`work` weighs them)."""

    leaf: float = 0.0        # single-step PMF points, weighted by their kind's rate
    cumulant: float = 0.0    # factor points summed over cumulant evaluations
    fft: float = 0.0         # work of the FFT passes (pass_work)
    output: float = 0.0      # output grid points
    output_big: float = 0.0  # composed output points times their doublings beyond the caches
    convolve: float = 0.0    # pairwise convolution points (compose_curves)
    other: float = 0.0       # work counted directly (crude stand-ins)
    fixed: float = 0.0       # the part of the work that does not grow with the grids
    grid: float = 0.0        # largest grid held
    factor_grid: float = 0.0  # factors beyond the first times their grid, both directions (largest)
    passes: int = 0
    redo: bool = True        # count the longdouble redo (work only: a memory check skips it)
    native: bool | None = None  # leaf rates: fdpkit's own steps (None: pld.native_steps())

    @property
    def compose(self) -> float:
        return (CUMULANT_WORK_PER_POINT * self.cumulant + self.fft
                + OUTPUT_WORK_PER_POINT * self.output + OUTPUT_WORK_PER_DOUBLING * self.output_big
                + CONVOLVE_WORK_PER_POINT * self.convolve
                + self.other)

    @property
    def work(self) -> float:
        return self.leaf + self.compose


def _leaf_width_bound(step: Any) -> float | None:
    """An upper bound on a single step's loss range (nats), to pick the coarse grid; None
    when unknown a priori (trade-off curves)."""
    if isinstance(step, _PhaseStep):
        run, i = step
        mu = 2.0 / run.phases[i].noise_multiplier  # replace-one / truncation: sensitivity 2
        return 22.0 * mu + mu * mu
    if isinstance(step, Subsampled):
        check_subsampled_inner(step)
        return _leaf_width_bound(step.inner)
    if isinstance(step, Gaussian):
        mu = step.sensitivity / step.sigma
        return 22.0 * mu + mu * mu  # x truncated at about +-10.5 sd: loss mu x - mu^2/2
    if isinstance(step, Laplace):
        return 2.0 * step.sensitivity / step.scale
    if isinstance(step, (PureDP, RandomizedResponse, ApproxDP)):
        return 2.0 * step.epsilon + 1.0
    if isinstance(step, (CurveMechanism, UniformSampling)):
        return None
    raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(step).__name__}")


def _max_leaf_points() -> float:
    """Largest single-step grid this machine's memory can hold (BYTES_PER_POINT per point)."""
    return _machine_memory() / BYTES_PER_POINT


def check_machine_memory(mechanism: Mechanism, discretization: float) -> None:
    """Refuse (:class:`BudgetExceeded`, naming the parameter to change) a composition whose
    estimated peak memory exceeds this machine's: what :func:`fdpkit.accounting.account`
    checks when no budget is given, so that ``Repeated(Laplace(10), 10**7)`` at 1e-4 (about
    35 GB) is a ValueError before any work, not the machine running out of memory."""
    memory = _machine_memory()
    crude = _grid_upper_bound(mechanism, discretization)
    if crude is not None and crude * BYTES_PER_POINT <= memory:
        return  # fits even at the a-priori bound: no estimate (it costs 3-20 ms a DP-SGD run)
    cost = _estimate(mechanism, discretization, redo=False)  # memory only: no redo probe
    try:
        cost.check(CostBudget(max_grid_points=10**18, max_work=1e300, max_memory_bytes=int(memory)))
    except BudgetExceeded as exc:
        raise BudgetExceeded(f"{exc} (the limit is the memory this process may still take: the machine's, "
                             "or less under a container's limit or ulimit -v)", exc.parameter) from None


def _grid_upper_bound(mechanism: Mechanism, discretization: float) -> float | None:
    """An a-priori upper bound on any grid the composition holds (points): every stage lies
    within the composed support, whose width is at most the sum over single steps of times
    x (:func:`_leaf_width_bound` / d + 2); None where a step's width is unknown a priori."""
    run = training_run(mechanism)
    if run is not None:
        mechanism = run.example_level()
    total = 1.0
    for step, times in _flatten(mechanism):
        bound = _leaf_width_bound(step)
        if bound is None:
            return None
        total += times * (bound / discretization + 2.0)
    return total


def _noise_parameter(step: Any) -> str:
    """The public parameter that sets ``step``'s loss range (what to raise to shrink it)."""
    if isinstance(step, _PhaseStep):
        return "noise_multiplier"
    if isinstance(step, Subsampled):
        return _noise_parameter(step.inner)
    return {Gaussian: "sigma", Laplace: "scale"}.get(type(step), "epsilon")


def check_leaf_grids(mechanism: Mechanism, discretization: float) -> None:
    """Refuse (:class:`BudgetExceeded`, a ValueError naming the parameter) a mechanism one of
    whose single steps has a privacy-loss grid larger than this machine's memory holds: with
    no budget given, :func:`fdpkit.accounting.account` checks this a priori (no PLD is built),
    so that tiny noise (sigma = 1e-300: a grid of ~1e600 points) is a ValueError, not a
    MemoryError or an overflow inside dp_accounting."""
    run = training_run(mechanism)
    if run is not None:
        mechanism = run.example_level()
    limit = _max_leaf_points()
    for step, _ in _flatten(mechanism):
        bound = _leaf_width_bound(step)
        if bound is not None and not bound / discretization <= limit:
            name = _noise_parameter(step)
            raise BudgetExceeded(
                f"{name}: one step of this mechanism needs a privacy-loss grid of about "
                f"{bound / discretization:.3g} points, more than this machine's memory holds ({limit:.3g}); "
                f"use more noise (a larger {name}) or a larger discretization", name)


def _leaf_rate(step: Any, native: bool | None = None) -> float:
    """Work per grid point and direction of building ``step``'s PMF, natively (``native``
    None: as :func:`fdpkit.accounting.pld.native_steps` says) or by dp_accounting."""
    own = NATIVE_LEAF_WORK if (native_steps() if native is None else native) else None
    if isinstance(step, _PhaseStep):
        run = step[0]
        if run.sampling == "shuffled":
            return own["plain"] if own else LEAF_WORK_PLAIN
        if run.sampling == "fixed-size":
            # zero-out's exact step is always fdpkit's (accounting.without_replacement)
            kind = "replace-one" if run.relation == "replace-one" else "fixed-size"
            return own[kind] if own else LEAF_WORK_FIXED_SIZE
        return own["truncated" if run.sampling == "truncated-poisson" else "subsampled"] if own else LEAF_WORK_SUBSAMPLED
    if isinstance(step, Subsampled):
        if step.sample_rate == 1.0:
            return _leaf_rate(step.inner, native)
        return own["subsampled laplace" if isinstance(step.inner, Laplace) else "subsampled"] if own else LEAF_WORK_SUBSAMPLED
    if isinstance(step, (Gaussian, Laplace)):
        return own["plain"] if own else LEAF_WORK_PLAIN
    if isinstance(step, (CurveMechanism, UniformSampling)):
        return LEAF_WORK_CURVE
    return LEAF_WORK_FINITE


def _coarse_leaf(step: Any, d: float):
    """(remove, add or None) arrays of ``step`` on a coarse grid, and that grid's step; or
    (None, width) when the leaf is so wide that even its coarse grid would be large.

    The grid is first sized by an a-priori bound on the loss range, then, when the PMF's
    real range is much narrower (a subsampled step's losses are about q times smaller),
    rebuilt at the real range / COARSE_POINTS: over many steps a coarse grid's rounding
    would otherwise widen the composed loss distribution, and the estimate with it."""
    bound = _leaf_width_bound(step)
    if bound is not None and bound / COARSE_POINTS > 1.0:
        return None, bound
    coarse = max(d, CURVE_COARSE_STEP if bound is None else bound / COARSE_POINTS)
    arrays = pmf_arrays(_single_step_pld(step, coarse))
    width = 0.0
    for a in arrays:
        nz = np.flatnonzero(np.asarray(a.probs) > 0) if a is not None else np.zeros(0)
        if nz.size:
            width = max(width, float(nz[-1] - nz[0]) * coarse)
    finer = max(d, width / COARSE_POINTS)
    if finer < coarse / 4.0:
        coarse = finer
        arrays = pmf_arrays(_single_step_pld(step, coarse))
    return arrays, coarse


def _fine(n_coarse: int, coarse: float, d: float) -> float:
    """Grid points at step ``d`` of a range held by ``n_coarse`` points at step ``coarse``."""
    return max(n_coarse - 1, 0) * coarse / d + 1.0


def _plan(parts: list, coarse: float) -> tuple[list[float], float, float, int]:
    """:func:`fdpkit.accounting.tilted.plan`: the composition's own placement of tilts and windows (Step 2), run on
    the coarse factors ``parts`` [(arrays, times)]: (pass grid sizes, union window size,
    output size (non-negative losses), cumulant evaluations), all in coarse grid points."""
    pl = tilted.plan(parts, coarse)
    start, stop = pl.start, pl.stop
    sizes = [float(hi - lo + 1) for lo, hi in pl.windows]
    # the largest grid held at once: the output (at most ``top``) or a pass's window
    union = max(float(stop - start + 1), *sizes)
    return sizes, union, float(max(stop - max(start, 0) + 1, 1)), pl.cumulants.evaluations


def _wide_composition(steps: list, d: float, tally: _Tally) -> None:
    """Crude stand-in for leaves too wide to look at: a loss of range w per step, composed
    with Gaussian tails (the request is far beyond any budget anyway)."""
    width = 0.0
    var = 0.0
    for w, times in steps:
        width += times * w
        var += times * (w / 2.0) * (w / 2.0)  # (not **: inf, not OverflowError, for huge w)
    width = min(width, 2.0 * math.sqrt(2.0 * var * math.log(1.0 / _TAU)) + max(w for w, _ in steps))
    n = width / d
    tally.fft += 2.0 * pass_work(n)
    tally.fixed += 2.0 * PASS_WORK_FIXED
    tally.output += 2.0 * n
    tally.grid = max(tally.grid, n)
    tally.passes += 1


def _estimate_steps(steps: list, d: float, tally: _Tally) -> None:
    """Add the cost of building and composing ``steps`` [(single step, times)] (as
    :func:`fdpkit.accounting.pld.build_pld` does) to ``tally``."""
    leaves = []
    wide = []
    for step, times in steps:
        tally.leaf += LEAF_WORK_PER_STEP
        tally.fixed += LEAF_WORK_PER_STEP
        arrays, coarse = _coarse_leaf(step, d)
        if arrays is None:
            n = coarse / d
            tally.leaf += 2.0 * _leaf_rate(step, tally.native) * n
            tally.grid = max(tally.grid, n)
            wide.append((coarse, times))
            continue
        fine = [_fine(len(a.probs), coarse, d) for a in arrays if a is not None]
        tally.leaf += _leaf_rate(step, tally.native) * sum(fine)
        tally.grid = max(tally.grid, max(fine))
        leaves.append((arrays, coarse, times, fine))
    if wide:
        _wide_composition(wide + [(len(f) and max(f) * d, t) for _, _, t, f in leaves], d, tally)
        return
    if len(steps) == 1 and steps[0][1] == 1:  # a single PMF: no composition
        tally.output += sum(leaves[0][3])
        return
    # one coarse step for all factors (the tilted composition needs a shared grid)
    coarse = max(c for _, c, _, _ in leaves)
    if any(c != coarse for _, c, _, _ in leaves):
        # (a leaf already on that grid keeps its arrays: the same build again)
        leaves = [(a if c == coarse else _coarse_leaf_at(step, coarse), coarse, t, f)
                  for (step, _), (a, c, t, f) in zip(steps, leaves)]
    directions = [[(a[0], t) for a, _, t, _ in leaves]]
    if any(a[1] is not None for a, _, _, _ in leaves):
        directions.append([(a[0] if a[1] is None else a[1], t) for a, _, t, _ in leaves])
    factor_grid = 0.0
    for parts in directions:
        sizes, union, out, calls = _plan(parts, coarse)
        factor_grid += (len(parts) - 1) * _fine(int(union), coarse, d)
        counts = [int(np.count_nonzero(np.asarray(a.probs) > 0)) for a, _ in parts]
        factor_points = sum(_fine(len(a.probs), coarse, d) * (FEW_ATOMS_CUMULANT_FACTOR if k <= FEW_ATOMS else 1.0)
                            for (a, _), k in zip(parts, counts))
        tally.cumulant += CUMULANT_CALLS_FACTOR * calls * factor_points
        atoms = min(counts)  # factors of a few atoms (finite-epsilon steps)
        planned = sum(pass_work(_fine(int(s), coarse, d)) for s in sizes)
        few = FEW_ATOMS_PASS_FACTOR if atoms <= FEW_ATOMS else 1.0
        tally.fft += few * planned
        tally.fixed += few * PASS_WORK_FIXED * len(sizes)
        n_out = _fine(int(out), coarse, d)
        tally.output += n_out
        tally.output_big += n_out * doublings(n_out)
        redone = _precision_redo.redo_passes(parts, union) if atoms > FEW_ATOMS and tally.redo else []
        if redone:  # small noise at tiny sample rates: compose refines, then redoes itself in longdouble
            run = sum(pass_work(_fine(int(s), coarse, d)) for s in redone)
            tally.fft += run - planned  # the refinement passes
            ld = _precision_redo.LONGDOUBLE_PASS_RUNS * _precision_redo.LONGDOUBLE_PASS_FACTOR
            tally.fft += ld * run
            tally.fixed += (1.0 + ld) * PASS_WORK_FIXED * len(redone) - PASS_WORK_FIXED * len(sizes)
            tally.cumulant += CUMULANT_CALLS_FACTOR * calls * factor_points
            tally.output += n_out
            tally.output_big += n_out * doublings(n_out)
        tally.grid = max(tally.grid, _fine(int(union), coarse, d), *(_fine(int(s), coarse, d) for s in redone))
        tally.passes += len(sizes)
    tally.factor_grid = max(tally.factor_grid, factor_grid)


def _coarse_leaf_at(step: Any, coarse: float):
    return pmf_arrays(_single_step_pld(step, coarse))


def _renyi_cost(m: Mechanism) -> float:
    """A series per subsampled Gaussian (its whole subtree), a constant per other leaf."""
    def subsampled(n: Any) -> bool:
        return isinstance(n, Subsampled) and n.sample_rate < 1.0

    return sum(RDP_WORK_SUBSAMPLED if subsampled(n) else RDP_WORK_PART
               for n, _ in walk(m, into=lambda n: not subsampled(n)) if subsampled(n) or not n.children())


def _driver(mechanism: Mechanism, steps: list, tally: _Tally) -> str:
    """The parameter that drives the cost most (see :class:`CostEstimate`)."""
    if tally.leaf >= tally.compose:
        return "discretization"
    if any(t > 1 for _, t in steps):
        if training_run(mechanism) is not None or (isinstance(mechanism, Repeated)
                                            and isinstance(mechanism.inner, Subsampled)):
            return "steps"
        return "times"
    return "parts"


def _result(method: str, tally: _Tally, driver: str) -> CostEstimate:
    grid = int(min(max(tally.grid, 1.0), 2**62))
    return CostEstimate(method, grid, float(tally.work),
                        int(min(BYTES_PER_POINT * tally.grid + BYTES_PER_FACTOR_POINT * tally.factor_grid, 2**62)),
                        driver, float(tally.fixed))


def estimate_cost(mechanism: Mechanism, discretization: float = 1e-4) -> CostEstimate:
    """Estimate what accounting ``mechanism`` at ``discretization`` costs, before doing it.

    Parameters
    ----------
    mechanism : Mechanism
    discretization : float
        The PLD's value discretization interval, in [1e-6, 1].

    Returns
    -------
    CostEstimate
        Closed forms cost nothing; Rényi (zCDP/RDP) accounting little; otherwise the
        largest grid, total work (``work / WORK_PER_SECOND`` ~ seconds) and peak memory
        (see the module docs for the model).

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian, Repeated, dpsgd
    >>> estimate_cost(Repeated(Gaussian(2.0), 10)).method
    'closed form'
    >>> c = estimate_cost(dpsgd(9.4, 0.32768, 2000), 1e-4)
    >>> 1e5 < c.grid_points < 1e6, c.work / WORK_PER_SECOND < 2
    (True, True)
    """
    return _estimate(mechanism, discretization)


def _estimate(mechanism: Mechanism, discretization: float, *, redo: bool = True,
              native: bool | None = None) -> CostEstimate:
    """:func:`estimate_cost`; ``redo=False``: without the longdouble redo (a memory check);
    ``native``: leaf rates of fdpkit's own steps (True) or dp_accounting's (False)."""
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")
    d = check_discretization(discretization)
    if contains_renyi(mechanism):
        return CostEstimate("RDP", 0, _renyi_cost(mechanism), 0, "none")
    source = mechanism
    run = training_run(mechanism)
    if run is not None:
        if run.sampling == "shuffled" or closed_form_curve(mechanism) is not None:
            return CostEstimate("closed form", 0, 0.0, 0, "none")
        mechanism = run.example_level()  # group privacy is applied to the run's curve
        # every other scheme is composed numerically (fdpkit.accounting.pld.dpsgd_pld); its
        # full-batch phases (q = 1) as one Gaussian step
    elif closed_form_curve(mechanism) is not None:
        return CostEstimate("closed form", 0, 0.0, 0, "none")
    steps = _flatten(mechanism)
    tally = _Tally(redo=redo, native=native)
    _estimate_steps(steps, d, tally)
    instance = instance_run(source)
    if instance is not None:  # a truncated-Poisson report's looseness statement (its instance)
        # (dp_accounting builds its steps: its leaf rates)
        inst = _estimate(instance, d, redo=redo, native=False)
        tally.other += INSTANCE_WORK_FACTOR * inst.work
        tally.fixed += INSTANCE_WORK_FACTOR * inst.fixed_work
    return _result("PLD", tally, _driver(source, steps, tally))


def estimate_compose_curves_cost(*curves: Any, discretization: float = 1e-4) -> CostEstimate:
    """Estimate what :func:`fdpkit.accounting.compose_curves` costs for ``curves`` at
    ``discretization``: each curve's PMF (its profile on the grid), dp_accounting's
    pairwise convolutions (supports add up, truncated at tail mass 1e-15) and the output
    curve. Driver: ``"discretization"`` or ``"curves"``."""
    if not curves:
        raise ValueError("compose_curves needs at least one curve, got none")
    d = check_discretization(discretization)
    coarse = max(d, CURVE_COARSE_STEP)
    tally = _Tally()
    running = [0.0, 0.0]
    for i, c in enumerate(curves):
        _check_curve(f"curves[{i}]", c)
        arrays = pmf_arrays(native_pld_from_curve(c, coarse))
        fine = [_fine(len(a.probs), coarse, d) for a in arrays if a is not None]
        fine = fine + fine if len(fine) == 1 else fine
        tally.leaf += LEAF_WORK_CURVE * sum(fine)
        for k in range(2):
            if i:
                tally.convolve += running[k] + fine[k]
            running[k] += fine[k]
            tally.grid = max(tally.grid, running[k])
    tally.output += sum(running) / 2.0
    driver = "discretization" if tally.leaf >= tally.compose else "curves"
    return _result("PLD", tally, driver)
