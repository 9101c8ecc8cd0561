"""The accounting cost model against measured time (issue 14).

For a fixed set of mechanisms covering every accounting route (closed forms, a single
dp_accounting PLD, the round-off-bounded tilted composition, nested repetitions, subsampling,
DP-SGD sampling schemes, Rényi curves, ``compose_curves``), prints the estimated work
(:func:`fdpkit.accounting.estimate_cost`), the estimate in seconds
(``work / WORK_PER_SECOND``), the measured wall and CPU seconds (best of ``--repeats``) and
their ratio. Target: estimate / CPU time between about 1 and 2 on a quiet machine, erring
high (the model guards budgets: an under-estimate lets a request run past its limit);
closed forms and Rényi curves cost milliseconds: their ratio is not meaningful. A
truncated-Poisson run is measured with its report's looseness statement (dp_accounting's
instance, :func:`fdpkit.accounting.truncated_instance.truncation_looseness`), which its
estimate counts. The constants were refitted to this bench and more cases in 2026-11 (see
:mod:`fdpkit.accounting._cost_rates`).

    python benchmarks/bench_cost_model.py              # all cases
    python benchmarks/bench_cost_model.py --quick      # the cheaper half
    FDPKIT_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_cost_model.py

The model counts single-threaded CPU work (``WORK_PER_SECOND`` work units a CPU-second), so
the last form, with the two adjacency directions composed one after the other and a
single-threaded BLAS, is the one the model was fitted to; by default the directions run
in two threads and wall time can be up to half the CPU time. (On a loaded machine a
multi-threaded OpenBLAS can make the cumulants' ``np.dot`` calls 100x slower while its
threads wait for a core: measure there with ``OPENBLAS_NUM_THREADS=1``.)
"""

from __future__ import annotations

import argparse
import gc
import time

import fdpkit as fp
from fdpkit.accounting import estimate_cost
from fdpkit.accounting.cost import WORK_PER_SECOND, estimate_compose_curves_cost
from fdpkit.accounting.truncated_instance import truncation_looseness
from fdpkit.mechanisms import Composed, Gaussian, Laplace, RandomizedResponse, Repeated, Subsampled, dpsgd
from fdpkit.mechanisms.renyi_guarantees import ZCDP

#: (label, mechanism or tuple of curves, discretization, quick)
CASES = [
    ("closed form: Gaussian x 1e6", Repeated(Gaussian(1.0), 10**6), 1e-4, True),
    ("RDP: zCDP + subsampled Gaussian", Composed((ZCDP(0.5), Repeated(Subsampled(Gaussian(1.0), 0.1), 100))), 1e-4, True),
    ("leaf: subsampled Gaussian q=0.5 s=0.5", Subsampled(Gaussian(0.5), 0.5), 1e-4, True),
    ("leaf: subsampled Gaussian q=0.5 s=0.3", Subsampled(Gaussian(0.3), 0.5), 2e-5, False),
    ("leaf: subsampled Laplace q=0.1", Subsampled(Laplace(0.5), 0.1), 1e-4, True),
    ("tilted: Laplace x 50", Repeated(Laplace(1.0), 50), 1e-4, True),
    ("tilted: Laplace x 1000", Repeated(Laplace(1.0), 1000), 1e-4, False),
    ("tilted: randomized response x 200", Repeated(RandomizedResponse(1.0), 200), 1e-4, True),
    ("tilted: README DP-SGD 9.4/0.32768/2000", dpsgd(9.4, 0.32768, 2000), 1e-4, True),
    ("tilted: DP-SGD 1.0/0.01/1000", dpsgd(1.0, 0.01, 1000), 1e-4, True),
    ("tilted: DP-SGD 2.0/0.05/100 d=1e-3", dpsgd(2.0, 0.05, 100), 1e-3, True),
    ("tilted: DP-SGD 0.8/0.1/10000", dpsgd(0.8, 0.1, 10000), 1e-4, False),
    ("tilted: DP-SGD 1.1/0.004/1e5", dpsgd(1.1, 0.004, 100_000), 1e-4, False),
    ("tilted: DP-SGD fixed-size", dpsgd(1.0, batch_size=256, dataset_size=60000, epochs=3,
                                       sampling="fixed-size", relation="replace-one"), 1e-4, False),
    ("tilted: DP-SGD truncated Poisson", dpsgd(1.0, batch_size=256, dataset_size=60000, epochs=3,
                                              sampling="truncated-poisson", max_batch_size=300), 1e-4, False),
    ("nested: (subsampled Gaussian x 10) x 10", Repeated(Repeated(Subsampled(Gaussian(2.0), 0.1), 10), 10), 1e-4, True),
    ("nested: (Laplace x 100) x 100", Repeated(Repeated(Laplace(1.0), 100), 100), 1e-4, False),
    ("composed: Laplace + subsampled Gaussian", Composed((Laplace(1.0), Subsampled(Gaussian(1.0), 0.1))), 1e-4, True),
    ("composed: 3 DP-SGD-like parts", Composed((Repeated(Subsampled(Gaussian(1.0), 0.01), 1000),
                                                Repeated(Subsampled(Gaussian(2.0), 0.05), 300),
                                                Repeated(Laplace(2.0), 20))), 1e-4, False),
]


def _curves():
    return (fp.GaussianCurve(0.5), fp.LaplaceCurve(1.0), fp.tradeoff_curve(Subsampled(Gaussian(1.0), 0.2),
                                                                            discretization=1e-3))


def _run(obj, d: float) -> None:
    if isinstance(obj, tuple):
        fp.compose_curves(*obj, discretization=d)
    else:
        fp.account(obj, discretization=d)
        # a truncated-Poisson run's estimate counts its report's looseness statement too
        truncation_looseness(obj, d, (1e-5,))


def _measure(obj, d: float, repeats: int) -> tuple[float, float]:
    wall, cpu = float("inf"), float("inf")
    for _ in range(repeats):
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        _run(obj, d)
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the cheaper cases")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    cases = [c for c in CASES if c[3] or not args.quick]
    cases.append(("compose_curves: Gaussian, Laplace, PLD curve", "curves", 1e-4, True))
    print(f"{'case':44s} {'method':12s} {'grid':>9s} {'work':>9s} {'est s':>7s} {'wall s':>7s} "
          f"{'cpu s':>7s} {'est/wall':>8s} {'est/cpu':>7s}")
    ratios = []
    for label, obj, d, _quick in cases:
        if obj == "curves":
            obj = _curves()
            est = estimate_compose_curves_cost(*obj, discretization=d)
        else:
            est = estimate_cost(obj, d)
        wall, cpu = _measure(obj, d, args.repeats)
        est_s = est.work / WORK_PER_SECOND
        ratio = est_s / wall if wall > 0 else float("nan")
        ratio_cpu = est_s / cpu if cpu > 0 else float("nan")
        if est.method not in ("closed form", "RDP"):
            ratios.append((ratio, ratio_cpu))
        print(f"{label:44s} {est.method:12s} {est.grid_points:9.3g} {est.work:9.3g} {est_s:7.3f} "
              f"{wall:7.3f} {cpu:7.3f} {ratio:8.2f} {ratio_cpu:7.2f}")
    if ratios:
        walls, cpus = [r[0] for r in ratios], [r[1] for r in ratios]
        print(f"numeric routes: estimate/wall from {min(walls):.2f} to {max(walls):.2f}, "
              f"estimate/cpu from {min(cpus):.2f} to {max(cpus):.2f} (target: about 1 .. 2)")


if __name__ == "__main__":
    main()
