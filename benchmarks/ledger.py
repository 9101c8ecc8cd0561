"""Privacy-budget ledger benchmark (issue 13): a ledger of 1,000 mixed releases (Gaussian,
Laplace, DP-SGD runs) on SQLite.

Measured, best of 3, each also printed as a ratio to one ``privacy_report`` of the largest
release (the DP-SGD run with the most steps):
1. full status of the dataset from a freshly opened ledger (tight composition read as mu
   with regret, epsilon at delta 1e-5, TPR at FPR 1e-3, thresholds, alerts): target < 2 s;
2. checking one proposed release (a DP-SGD run) against the 1,000: target < 0.5 s.

Run: ``PYTHONPATH=src python benchmarks/ledger.py [--releases 1000] [--db PATH]``. The 1,000 releases are recorded once (about 90 s: one composition each); status and check are what is measured.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

import fdpkit as fp
from fdpkit.ledger import open_ledger
from fdpkit.mechanisms import Gaussian, Laplace, dpsgd


def mechanisms(n: int):
    """A reproducible mix: a third each Gaussian, Laplace and DP-SGD runs."""
    out = []
    for i in range(n):
        k = i % 3
        if k == 0:
            out.append(Gaussian(sigma=30.0 + (i % 11)))
        elif k == 1:
            out.append(Laplace(scale=150.0 + (i % 13)))
        else:
            out.append(dpsgd(8.0 + (i % 5), 0.01, 50 + 10 * (i % 6)))
    return out


def best_of(fn, repeats=3):
    best, value = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--releases", type=int, default=1000)
    ap.add_argument("--db", default=None)
    args = ap.parse_args()
    path = args.db or os.path.join(tempfile.mkdtemp(prefix="fdpkit-ledger-bench-"), "ledger.sqlite")
    mechs = mechanisms(args.releases)
    led = open_ledger(path)
    if not led.datasets():
        led.add_dataset("bench", unit="one person", user="bench")
        t0 = time.perf_counter()
        for i, m in enumerate(mechs):
            led.record("bench", m, title=f"release {i}", user="bench", approver="bench-approver", report=False, override_reason="benchmark")
        print(f"recorded {args.releases} releases in {time.perf_counter() - t0:.1f} s (one composition each)")
    led.close()

    largest = max((m for m in mechs if not isinstance(m, (Gaussian, Laplace))), key=lambda m: m.steps)
    t_report, _ = best_of(lambda: fp.privacy_report(largest))

    def status():
        with open_ledger(path) as fresh:
            return fresh.status("bench").to_dict()

    t_status, st = best_of(status)
    proposal = dpsgd(8.0, 0.01, 100)
    with open_ledger(path) as led:
        led.status("bench")  # connection and cache warm, as in a running server
        t_check, chk = best_of(lambda: led.check("bench", proposal).to_dict())
    print(f"largest release: {largest.label()}; one privacy_report: {t_report:.3f} s")
    print(f"full status of {st['released_count']} releases: {t_status:.3f} s "
          f"({t_status / t_report:.2f}x one report; target < 2 s)")
    print(f"check one proposed release: {t_check:.3f} s ({t_check / t_report:.2f}x one report; target < 0.5 s)")
    print(f"running total: mu = {st['mu']:.4g} (regret {st['regret']:.2g}), epsilon = {st['epsilon']:.4g} at "
          f"delta = 1e-5 ({st['method']}); basic epsilon sum = {st['epsilon_sum']:.4g}")
    print(f"with the proposal: epsilon = {chk['after']['epsilon']:.4g}")


if __name__ == "__main__":
    main()
