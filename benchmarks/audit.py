"""Audit speed: 10^6 scores per class audited (empirical ROC at every threshold, bounds at
the log-spaced ranks, mu and epsilon lower bounds, and the check against a certified
Gaussian curve), against the floor of any ROC computation: sorting the scores with NumPy.

Run: ``PYTHONPATH=src python benchmarks/audit.py`` (target: under 2 s).
"""

from __future__ import annotations

import math
import time

import numpy as np

import fdpkit as fp

N = 1_000_000
REPEATS = 3


def best_of(fn, repeats=REPEATS):
    best, value = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def main() -> None:
    rng = np.random.default_rng(0)
    members, nonmembers = rng.normal(1.0, 1.0, N), rng.normal(0.0, 1.0, N)
    curve = fp.GaussianCurve(1.0)
    fp.run_audit(members[:1000], nonmembers[:1000], mechanism=curve)  # warm imports
    t_sort, _ = best_of(lambda: (np.sort(members), np.sort(nonmembers)))
    t_audit, r = best_of(lambda: fp.run_audit(members, nonmembers))
    t_cert, rc = best_of(lambda: fp.run_audit(members, nonmembers, mechanism=curve))
    t_sim, _ = best_of(lambda: fp.simulate_attack(fp.Gaussian(1.0), trials=N, seed=1), 1)
    print(f"# audit benchmark: {N:,} scores per class, best of {REPEATS}")
    print(f"numpy sort of both score arrays   {t_sort:7.3f} s   1.00x")
    print(f"fdpkit.audit (no mechanism)        {t_audit:7.3f} s   {t_audit / t_sort:.2f}x   mu >= {r.mu_lower:.4f}")
    print(f"fdpkit.audit (against G_1)         {t_cert:7.3f} s   {t_cert / t_sort:.2f}x   violation = {rc.violation}")
    print(f"simulate_attack(Gaussian, 1e6)     {t_sim:7.3f} s")
    print(f"target: under 2 s -> {'met' if t_cert < 2.0 else 'MISSED'}")


if __name__ == "__main__":
    main()
