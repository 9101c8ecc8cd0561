"""What the span cap of the tilt placement costs (issue 27's next lever, session 16): for each
case, ``fp.privacy_report`` CPU time (``time.process_time``, ``FDPKIT_THREADS=1``, best of
``--repeats``), the part spent in ``_tilt_placement._span_cap`` and the cumulant evaluations
(Lambda_j computed, summed over the report's compositions: the cost model's plans and the real
ones) of the span cap and of all of them; the cases' mu as a check.

With ``--before REV`` the same cases run with ``src/`` of that git revision too, in a child
process per round, the two trees alternating so that a slow spell of a shared machine hits
both alike.

Run: ``.venv/bin/python benchmarks/bench_span_cap.py [--repeats 5] [--before REV]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from bench_speed import _source_tree  # src/ of an earlier revision (the same helper)

HERE = Path(__file__).resolve().parent

#: name -> the run (as Python source, evaluated with fdpkit as fp).
CASES = {
    "sigma 0.8, q 1e-3, T 2000": "fp.dpsgd(noise_multiplier=0.8, sample_rate=1e-3, steps=2000)",
    "sigma 1, q 1e-5, T 1e5": "fp.dpsgd(noise_multiplier=1.0, sample_rate=1e-5, steps=100_000)",
    "sigma 2, q 0.01, T 1500": "fp.dpsgd(noise_multiplier=2.0, sample_rate=0.01, steps=1500)",
    "headline (sigma 9.4, q 0.328, T 2000)": "fp.dpsgd(noise_multiplier=9.4, sample_rate=16384 / 50000, steps=2000)",
    "MNIST (sigma 1.1, q 256/60000, T 7032)": "fp.dpsgd(noise_multiplier=1.1, sample_rate=256 / 60000, steps=7032)",
    "50 phases, sigma 0.9-1.1, q 0.004, 1000 steps each":
        "fp.dpsgd_schedule([(0.9 + 0.2 * i / 49, 0.004, 1000) for i in range(50)])",
}

#: One round in a child process: every case once (argv: JSON list of case names).
_CHILD = r'''
import json, os, sys, time
os.environ["FDPKIT_THREADS"] = "1"
import fdpkit as fp
from fdpkit.accounting import tilted, _tilt_placement as tp
cases = json.loads(sys.argv[1])
span = {"t": 0.0, "ev": 0}
plans = []
orig_cap, orig_plan = tp._span_cap, tilted.plan
def cap(cum, *a):
    e0, t0 = cum.evaluations, time.process_time()
    try:
        return orig_cap(cum, *a)
    finally:
        span["t"] += time.process_time() - t0
        span["ev"] += cum.evaluations - e0
def plan(*a, **k):
    p = orig_plan(*a, **k)
    plans.append(p)
    return p
tp._span_cap, tilted.plan = cap, plan
fp.privacy_report(fp.dpsgd(2.0, 0.01, 100))  # imports
out = {}
for name, src in cases:
    run = eval(src)
    span.update(t=0.0, ev=0)
    plans.clear()
    t0 = time.process_time()
    rep = fp.privacy_report(run)
    cpu = time.process_time() - t0
    out[name] = [cpu, span["t"], span["ev"], sum(p.cumulants.evaluations for p in plans), rep.mu]
print(json.dumps(out))
'''


def _round(src: str) -> dict:
    env = dict(os.environ, PYTHONPATH=src, FDPKIT_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(list(CASES.items()))], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--before", default=None, metavar="REV", help="also run src/ of this git revision")
    args = ap.parse_args()
    trees = {"this tree": str(HERE.parent / "src")}
    if args.before:
        trees[f"before ({args.before})"] = _source_tree(args.before)
    best: dict = {t: {} for t in trees}
    for _ in range(args.repeats):
        for tree, src in trees.items():
            for name, row in _round(src).items():
                old = best[tree].get(name)
                best[tree][name] = row if old is None else [min(old[0], row[0]), min(old[1], row[1])] + row[2:]
    for name in CASES:
        print(name)
        for tree in trees:
            cpu, span_t, span_ev, evals, mu = best[tree][name]
            print(f"  {tree:>22}: report {cpu * 1e3:8.1f} ms, span cap {span_t * 1e3:7.1f} ms, "
                  f"span-cap evaluations {span_ev:6d}, all evaluations {evals:6d}, mu {mu!r}")


if __name__ == "__main__":
    main()
