"""Sweep benchmarks (issue: parameter sweeps on Dask). Prints a Markdown section and, with
``--write``, replaces the "Sweeps" section of benchmarks/RESULTS.md.

Measured:
1. 1,000 DP-SGD settings on 1 and 2 local worker processes (speed-up target >= 1.8x on
   2 cores) and on a Dask LocalCluster with 2 workers (>= 1.7x), with the peak memory of
   a worker;
2. step reuse: a sweep over 5 step counts for one (sigma, q) against one privacy_report at
   the largest step count (target <= 2x);
3. per-setting cost inside a sweep against a standalone privacy_report (target <= 1.2x).

Run: ``benchmarks/.venv/bin/python benchmarks/bench_sweep.py [--write] [--settings N]``.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import time
from pathlib import Path

import numpy as np

import fdpkit as fp
from fdpkit.sweep import sweep

OUT = Path(__file__).resolve().parent / "RESULTS.md"
#: The 1,000-setting grid is accounted at discretization 1e-3 so that the three runs finish
#: in minutes on 2 cores; the ratios are what is measured.
GRID_DISC = 1e-3


def grid(n: int) -> dict:
    side = round(n ** (1 / 3))
    return {"noise_multiplier": [float(x) for x in np.linspace(0.8, 8.0, side)],
            "sample_rate": [float(x) for x in np.geomspace(1e-3, 0.3, side)],
            "steps": [int(x) for x in np.geomspace(100, 2000, side).round()]}


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--settings", type=int, default=1000)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    g = grid(args.settings)
    n = math.prod(len(v) for v in g.values())
    say("## Sweeps")
    say()
    say(f"{n} DP-SGD settings (noise 0.8-8, q 1e-3-0.3, T 100-2000), discretization {GRID_DISC:g}, "
        f"{os.cpu_count()} CPUs.")
    say()
    t1, r1 = timed(lambda: sweep(**g, discretization=GRID_DISC, executor="processes", workers=1))
    t2, r2 = timed(lambda: sweep(**g, discretization=GRID_DISC, executor="processes", workers=2))
    peak_pool = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    peak_dask: list[float] = []

    def dask_run():
        from fdpkit.sweep.executors import close_client, dask_client

        client = dask_client(dask_local=2)
        try:
            client.wait_for_workers(2)
            res = sweep(**g, discretization=GRID_DISC, client=client)
            peak_dask.extend(client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024).values())
            return res
        finally:
            close_client(client)

    td, rd = timed(dask_run)
    same = all(a["mu"] == b["mu"] == c["mu"] for a, b, c in zip(r1, r2, rd))
    say("| executor | seconds | speed-up vs 1 worker | target |")
    say("|---|---|---|---|")
    say(f"| process pool, 1 worker | {t1:.1f} | 1.00x | |")
    say(f"| process pool, 2 workers | {t2:.1f} | **{t1 / t2:.2f}x** | >= 1.8x |")
    say(f"| Dask LocalCluster, 2 workers | {td:.1f} | **{t1 / td:.2f}x** | >= 1.7x |")
    say()
    say(f"Identical numbers on all three executors: {same}. Peak memory of a worker: process pool "
        f"{peak_pool:.0f} MiB, Dask {max(peak_dask) if peak_dask else float('nan'):.0f} MiB.")
    say()

    # 2. step reuse (default discretization)
    steps = [400, 800, 1200, 1600, 2000]
    best_sweep = min(timed(lambda: sweep([2.0], [0.01], steps, executor="inprocess"))[0] for _ in range(3))
    best_one = min(timed(lambda: fp.privacy_report(fp.dpsgd(2.0, 0.01, 2000)))[0] for _ in range(3))
    say("| step reuse (sigma 2, q 0.01, discretization 1e-4) | seconds | ratio |")
    say("|---|---|---|")
    say(f"| one privacy_report at T = 2000 | {best_one:.3f} | 1.00x |")
    say(f"| sweep over T = {', '.join(map(str, steps))} | {best_sweep:.3f} | **{best_sweep / best_one:.2f}x** "
        "(target <= 2x) |")
    say()

    # 3. per-setting cost
    settings = [(1.0, 0.01, 500), (4.0, 0.1, 1000), (9.4, 0.32768, 2000)]
    rows = []
    for nm, q, t in settings:
        alone = min(timed(lambda: fp.privacy_report(fp.dpsgd(nm, q, t)))[0] for _ in range(3))
        inside = min(timed(lambda: sweep([nm], [q], [t], executor="inprocess"))[0] for _ in range(3))
        rows.append((nm, q, t, alone, inside))
    say("| setting | standalone report (s) | inside a sweep (s) | ratio |")
    say("|---|---|---|---|")
    for nm, q, t, a, s in rows:
        say(f"| sigma {nm:g}, q {q:g}, T {t} | {a:.3f} | {s:.3f} | **{s / a:.2f}x** (target <= 1.2x) |")
    say()

    if args.write:
        text = OUT.read_text(encoding="utf-8") if OUT.exists() else "# fdpkit benchmarks\n"
        start = text.find("## Sweeps")
        if start >= 0:
            end = text.find("\n## ", start + 1)
            text = text[:start] + text[end + 1:] if end >= 0 else text[:start]
        OUT.write_text(text.rstrip() + "\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
