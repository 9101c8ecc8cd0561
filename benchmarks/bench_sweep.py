"""Sweep benchmarks (issue: parameter sweeps on Dask). Prints a Markdown section and, with
``--write``, replaces the "Sweeps" section of benchmarks/RESULTS.md.

Measured (the issue's benchmarks):
1. 1,000 DP-SGD settings (10 noise multipliers x 10 sample rates x 10 step counts, at
   the default discretization 1e-4: a few minutes on one worker) on 1 and 2 local worker
   processes (speed-up target >= 1.8x on 2 cores) and on a Dask LocalCluster with 2
   workers (>= 1.7x against 1 local worker), with the peak memory (max RSS) of a worker
   and a check that the three executors give identical numbers;
2. step reuse: a sweep over 5 step counts for one (sigma, q) against one privacy_report at
   the largest step count (target <= 2x), at the default discretization 1e-4;
3. per-setting cost inside a sweep against a standalone privacy_report (target <= 1.2x):
   (a) a one-setting sweep against the report of that setting, for three settings;
   (b) the mean time per setting of the 1,000-setting sweep on 1 worker against the mean
       standalone report over a sample of its settings (no step reuse in the reports).

4. (``--before REV``, issue 27 item 3) before/after: the grid accounted in-process on one
   core, in fresh processes started together (so that a loaded machine slows each alike),
   by ``src/`` of git revision REV (e.g. ``a8858c4``, main before issue 27) and by this
   tree, at 1e-4; and by this tree at the library's default discretization (issue 29: the
   sweep's default since then: finer than 1e-4 for tiny steps, coarser for large ones, with
   the largest change that makes against 1e-4 printed). CPU seconds (the work done) and wall seconds;
   the machine's load average is printed with them. ``--before-only`` runs just this.
5. (``--phases``) where a setting's time goes: a cProfile of every fifth noise multiplier and
   sample rate of the grid, in-process, split into single step, composition, curve, fit
   and the rest (the sweep's own overhead among it).

Run: ``benchmarks/.venv/bin/python benchmarks/bench_sweep.py [--write] [--quick] [--before REV]``
(``--quick``: 125 settings and fewer repeats, to check that it runs end to end).
Timings are wall clock, best of the repeats; run on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import resource
import time
from pathlib import Path

import numpy as np

import fdpkit as fp
from fdpkit.sweep import run_sweep as sweep
from fdpkit.sweep.evaluate import same_numbers

OUT = Path(__file__).resolve().parent / "RESULTS.md"
#: The 1,000-setting grid is accounted at the default discretization 1e-4, where one
#: setting costs what users pay (at 1e-3 a setting takes ~20 ms and the workers' start-up
#: and scheduling dominate the ratios); ``--discretization`` changes it.
GRID_DISC = 1e-4
#: Step reuse: one (sigma, q), five step counts, at the default discretization.
REUSE_SETTING = (2.0, 0.01)
REUSE_STEPS = (400, 800, 1200, 1600, 2000)
#: Per-setting cost: three settings of different sizes (the last is the headline run).
PER_SETTING = ((1.0, 0.01, 500), (4.0, 0.1, 1000), (9.4, 0.32768, 2000))
TARGETS = {"pool": 1.8, "dask": 1.7, "reuse": 2.0, "per_setting": 1.2}


def grid(n: int) -> dict:
    side = round(n ** (1 / 3))
    return {"noise_multiplier": [round(float(x), 4) for x in np.linspace(0.8, 8.0, side)],
            "sample_rate": [round(float(x), 6) for x in np.geomspace(1e-3, 0.3, side)],
            "steps": [int(x) for x in np.geomspace(100, 2000, side).round()]}


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def best(fn, repeats: int) -> float:
    return min(timed(fn)[0] for _ in range(repeats))


def _max_rss_mib() -> float:
    """Peak resident memory of this process in MiB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: One before/after run, in a fresh process (argv: grid JSON, discretization or "default").
_CHILD = """
import json, os, sys, time
os.environ["FDPKIT_THREADS"] = "1"
try:  # run_sweep since issue 23; an earlier src/ has sweep
    from fdpkit.sweep import run_sweep as sweep
except ImportError:
    from fdpkit.sweep import sweep
grid = json.loads(sys.argv[1])
kw = {} if sys.argv[2] == "default" else {"discretization": float(sys.argv[2])}
sweep(noise_multiplier=[2.0], sample_rate=[0.01], steps=[100], executor="inprocess")  # imports
c0, t0 = time.process_time(), time.perf_counter()
rows = sweep(**grid, executor="inprocess", **kw)
print(json.dumps([time.process_time() - c0, time.perf_counter() - t0,
                  [[r.get("mu"), r.get("epsilon"), r.get("discretization")] for r in rows]]))
"""


def _source_tree(rev: str) -> str:
    """``src/`` of git revision ``rev`` of this repository, extracted to a temporary folder."""
    import subprocess
    import tempfile

    dest = Path(tempfile.mkdtemp(prefix="fdpkit-before-"))
    archive = subprocess.run(["git", "-C", str(OUT.parent.parent), "archive", rev, "src"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return str(dest / "src")


def before_after(rev: str, g: dict, say) -> None:
    """Section 4: the grid by ``src/`` of ``rev`` and by this tree, in fresh processes
    started together (one core each: FDPKIT_THREADS=1)."""
    import json
    import subprocess
    import sys

    n = math.prod(len(v) for v in g.values())
    this = str(OUT.parent.parent / "src")
    runs = [(f"before ({rev})", _source_tree(rev), "0.0001"), ("this tree", this, "0.0001"),
            ("this tree, default discretization (issue 29)", this, "default")]
    load0 = os.getloadavg()
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(g), disc],
                              env=dict(os.environ, PYTHONPATH=src), stdout=subprocess.PIPE, text=True)
             for _, src, disc in runs]
    results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    load1 = os.getloadavg()
    say(f"### Before/after: {n} settings in-process, one core each (issue 27 item 3)")
    say()
    say(f"Fresh processes started together; load average {load0[0]:.1f} at the start, {load1[0]:.1f} "
        "at the end (CPU seconds are the work done; wall seconds include the wait for a core).")
    say()
    say("| source | discretization | CPU s | wall s | speed-up (CPU) |")
    say("|---|---|---|---|---|")
    base = results[0][0]
    for (label, _, disc), (cpu, wall, _) in zip(runs, results):
        say(f"| {label} | {'1e-4' if disc != 'default' else 'library rule'} | {cpu:.1f} | {wall:.1f} | "
            f"**{base / cpu:.2f}x** |")
    say()
    before_rows, after_rows, auto_rows = (r[2] for r in results)
    finite = [(a[0], b[0]) for a, b in zip(before_rows, after_rows)
              if a[0] is not None and b[0] is not None and math.isfinite(a[0]) and math.isfinite(b[0])]
    lower = sum(b < a for a, b in finite)
    worst = max((abs(b / a - 1) for a, b in finite if a > 0), default=0.0)
    newly = sum(1 for a, b in zip(before_rows, after_rows) if not math.isfinite(a[0] or math.inf)
                and math.isfinite(b[0] or math.inf))
    finer = sum(1 for r in auto_rows if r[2] is not None and r[2] < 1e-4)
    coarser = [(a, b) for a, b in zip(after_rows, auto_rows) if b[2] is not None and b[2] > 1e-4]
    drift = {k: max((abs(b[i] / a[i] - 1) for a, b in coarser if a[i] and b[i] is not None
                     and math.isfinite(a[i]) and math.isfinite(b[i])), default=0.0)
             for k, i in (("mu", 0), ("epsilon", 1))}
    say(f"mu, this tree against before: largest relative change {worst:.2e}, lower in {lower} of "
        f"{len(finite)} settings; finite now where before was inf: {newly}. The library rule chose "
        f"a finer discretization than 1e-4 for {finer} of {n} settings (tighter, and costlier) and "
        f"a coarser one (Eq. 3 of accounting._resolution, up to 1e-3) for {len(coarser)}, where mu "
        f"and epsilon differ from this tree's at 1e-4 by at most a relative {drift['mu']:.1e} and "
        f"{drift['epsilon']:.1e}.")
    say()


#: Phases of a setting's accounting, for ``--phases``: (label, file suffix, function); each
#: phase's cumulative time in a profiled in-process sweep (a phase not found counts 0).
PHASES = (("single step (shared per group)", "accounting/pld.py", "shared_step_arrays"),
          ("composition", "accounting/pld.py", "compose_arrays"),
          ("curve", "accounting/pld_curve.py", "curve_from_pld"),
          ("fit (mu, regret)", "fit/mu.py", "fit_gdp_adapted"))


def phases(g: dict, say, every: int = 5) -> None:
    """Where a sweep's time goes: cProfile of every ``every``-th (sigma, q) group of the grid,
    in-process, split into :data:`PHASES` (the rest: readings, mechanisms, sweep overhead)."""
    import cProfile
    import pstats

    sub = {**g, "noise_multiplier": g["noise_multiplier"][::every], "sample_rate": g["sample_rate"][::every]}
    n = math.prod(len(v) for v in sub.values())
    sweep(noise_multiplier=[2.0], sample_rate=[0.01], steps=[100], executor="inprocess")  # imports
    prof = cProfile.Profile(time.process_time)  # CPU time: a loaded machine does not skew the shares
    c0 = time.process_time()
    prof.enable()
    sweep(**sub, discretization=GRID_DISC, executor="inprocess")
    prof.disable()
    cpu = time.process_time() - c0
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = max(ct for (_, _, fn), (_, _, _, ct, _) in stats.items() if fn == "run_sweep")
    say(f"### Where a setting's time goes ({n} settings of the grid, profiled in-process)")
    say()
    say(f"{cpu:.1f} CPU s under the profiler, {1e3 * total / n:.0f} CPU ms per setting (shares of CPU time).")
    say()
    say("| phase | share |")
    say("|---|---|")
    rest = total
    for label, path, func in PHASES:
        ct = sum(v[3] for (f, _, fn), v in stats.items() if fn == func and f.endswith(path))
        rest -= ct
        say(f"| {label} | {ct / total:.0%} |")
    say(f"| the rest (readings, mechanisms, sweep) | {rest / total:.0%} |")
    say()
    # issue 27 item 2 (one forward transform shared by a group's step counts): its ceiling is
    # the forward transforms' share, and it could share one only where two step counts tilt
    # alike (the transform is of the tilted single step, so it depends on theta)
    fwd = sum(v[3] for (_, _, fn), v in stats.items() if "pocketfft.r2c" in fn)
    inv = sum(v[3] for (_, _, fn), v in stats.items() if "pocketfft.c2r" in fn)
    say(f"FFTs: forward transforms {fwd / total:.1%} of the time, inverse {inv / total:.1%}.")
    say(f"Tilts: {_tilt_sharing(sub)}.")
    say()


def _tilt_sharing(sub: dict) -> str:
    """How many FFT passes of the sweep ``sub`` share their tilt theta (to 1e-9 relative)
    and FFT length with a pass of another step count of the same (sigma, q): the passes
    whose forward transform a shared one could replace (issue 27 item 2)."""
    import fdpkit.accounting.tilted as tilted
    from scipy import fft as sfft

    seen: dict = {}
    keep: list = []
    passes = []
    real = tilted._fft_pass  # noqa: SLF001 (a benchmark's probe)

    def probe(factors, cum, theta, start, size, dtype):
        key = tuple(id(f.probs) for f in factors)
        keep.append(factors)  # ids stay unique while the sweep runs
        passes.append((seen.setdefault(key, len(seen)), theta, sfft.next_fast_len(size, real=True)))
        return real(factors, cum, theta, start, size, dtype)

    tilted._fft_pass = probe  # noqa: SLF001
    try:
        sweep(**sub, discretization=GRID_DISC, executor="inprocess")
    finally:
        tilted._fft_pass = real  # noqa: SLF001
    shared = sum(1 for i, (g, th, n) in enumerate(passes)
                 if any(g2 == g and n2 == n and math.isclose(th, th2, rel_tol=1e-9)
                        for j, (g2, th2, n2) in enumerate(passes) if j != i))
    return f"{shared} of {len(passes)} FFT passes share their tilt and length with another pass"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--settings", type=int, default=None, help="grid size (default 1000; 125 with --quick)")
    ap.add_argument("--quick", action="store_true", help="small grid and fewer repeats (end-to-end check)")
    ap.add_argument("--write", action="store_true", help="replace the Sweeps section of RESULTS.md")
    ap.add_argument("--discretization", type=float, default=None, help="grid discretization (default 1e-4)")
    ap.add_argument("--before", default=None, metavar="REV",
                    help="also run the grid with src/ of this git revision against this tree (section 4)")
    ap.add_argument("--before-only", action="store_true", help="only section 4 (needs --before)")
    ap.add_argument("--phases", action="store_true",
                    help="also print where a setting's time goes (cProfile of a part of the grid)")
    args = ap.parse_args()
    global GRID_DISC
    if args.discretization is not None:
        GRID_DISC = args.discretization
    n_target = args.settings or (125 if args.quick else 1000)
    repeats = 2 if args.quick else 5
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    g = grid(n_target)
    n = math.prod(len(v) for v in g.values())
    say("## Sweeps")
    say()
    say(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; fdpkit {fp.__version__}. Wall-clock seconds."
        + (" **Quick run (reduced grid and repeats): not the recorded benchmark.**" if args.quick else ""))
    say()

    if args.before:
        before_after(args.before, g, say)
    if args.phases:
        phases(g, say)
    if args.before_only:
        _write(args.write, lines)
        return

    # 1. executors ----------------------------------------------------------------------
    say(f"### {n} settings on 1 and 2 workers")
    say()
    say(f"Grid: noise multiplier {g['noise_multiplier'][0]:g}-{g['noise_multiplier'][-1]:g} x sample rate "
        f"{g['sample_rate'][0]:g}-{g['sample_rate'][-1]:g} x steps {g['steps'][0]}-{g['steps'][-1]} "
        f"({len(g['noise_multiplier'])} x {len(g['sample_rate'])} x {len(g['steps'])}), discretization "
        f"{GRID_DISC:g}, Poisson add/remove.")
    say()
    t1, r1 = timed(lambda: sweep(**g, discretization=GRID_DISC, executor="processes", workers=1))
    t2, r2 = timed(lambda: sweep(**g, discretization=GRID_DISC, executor="processes", workers=2))
    peak_pool = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest worker

    from fdpkit.sweep.executors import close_client, dask_client

    client = dask_client(dask_local=2)  # cluster start-up is not timed (as a running cluster)
    try:
        client.wait_for_workers(2)
        td, rd = timed(lambda: sweep(**g, discretization=GRID_DISC, client=client))
        peak_dask = list(client.run(_max_rss_mib).values())
    finally:
        close_client(client)
    same = all(same_numbers(a, b) and same_numbers(a, c) for a, b, c in zip(r1, r2, rd))
    say("| executor | seconds | per setting (ms) | speed-up vs 1 worker | target |")
    say("|---|---|---|---|---|")
    say(f"| process pool, 1 worker | {t1:.1f} | {1e3 * t1 / n:.1f} | 1.00x | |")
    say(f"| process pool, 2 workers | {t2:.1f} | {1e3 * t2 / n:.1f} | **{t1 / t2:.2f}x** | >= {TARGETS['pool']}x |")
    say(f"| Dask LocalCluster, 2 workers | {td:.1f} | {1e3 * td / n:.1f} | **{t1 / td:.2f}x** | "
        f">= {TARGETS['dask']}x |")
    say()
    say(f"Identical numbers on all three executors: **{same}**. Peak memory (max RSS) per worker: "
        f"process pool {peak_pool:.0f} MiB; Dask workers "
        f"{', '.join(f'{m:.0f}' for m in peak_dask)} MiB.")
    say()

    # 2. step reuse ---------------------------------------------------------------------------
    sigma, q = REUSE_SETTING
    fp.privacy_report(fp.dpsgd(sigma, q, 10))  # imports and caches warm
    one = sweep_t = math.inf
    for _ in range(repeats):  # interleaved, so that a slow spell hits both
        one = min(one, timed(lambda: fp.privacy_report(fp.dpsgd(sigma, q, REUSE_STEPS[-1])))[0])
        sweep_t = min(sweep_t, timed(lambda: sweep([sigma], [q], list(REUSE_STEPS), executor="inprocess"))[0])
    separate = sum(best(lambda t=t: fp.privacy_report(fp.dpsgd(sigma, q, t)), max(1, repeats // 2))
                   for t in REUSE_STEPS)
    step = best(lambda: _single_step(sigma, q), repeats)
    say(f"### Step reuse (sigma {sigma:g}, q {q:g}, discretization 1e-4, in-process)")
    say()
    say("| run | seconds | ratio to one report |")
    say("|---|---|---|")
    say(f"| one privacy_report at T = {REUSE_STEPS[-1]} | {one:.3f} | 1.00x |")
    say(f"| sweep over T = {', '.join(map(str, REUSE_STEPS))} | {sweep_t:.3f} | **{sweep_t / one:.2f}x** "
        f"(target <= {TARGETS['reuse']:g}x) |")
    say(f"| five separate privacy_reports | {separate:.3f} | {separate / one:.2f}x |")
    say(f"| one step accounted (the shared single-step PLD and its curve) | {step:.3f} | {step / one:.2f}x |")
    say()

    # 3. per-setting cost ------------------------------------------------------------------
    say("### Per-setting cost inside a sweep")
    say()
    say("| setting | standalone privacy_report (s) | one-setting sweep (s) | ratio |")
    say("|---|---|---|---|")
    for nm, rate, t in PER_SETTING:
        alone = inside = math.inf
        for _ in range(repeats):
            alone = min(alone, timed(lambda: fp.privacy_report(fp.dpsgd(nm, rate, t)))[0])
            inside = min(inside, timed(lambda: sweep([nm], [rate], [t], executor="inprocess"))[0])
        say(f"| sigma {nm:g}, q {rate:g}, T {t} | {alone:.3f} | {inside:.3f} | **{inside / alone:.2f}x** "
            f"(target <= {TARGETS['per_setting']:g}x) |")
    rng = random.Random(0)
    sample = rng.sample([(a, b, c) for a in g["noise_multiplier"] for b in g["sample_rate"] for c in g["steps"]],
                        10 if args.quick else 40)
    reports = sum(timed(lambda s=s: fp.privacy_report(fp.dpsgd(*s), discretization=GRID_DISC))[0] for s in sample)
    mean_report = reports / len(sample)
    say(f"| the {n}-setting grid, 1 worker (mean per setting; reports: mean of {len(sample)} sampled settings, "
        f"in-process) | {mean_report:.4f} | {t1 / n:.4f} | **{t1 / n / mean_report:.2f}x** "
        f"(target <= {TARGETS['per_setting']:g}x) |")
    say()

    _write(args.write, lines)


def _write(write: bool, lines: list[str]) -> None:
    if write:
        text = OUT.read_text(encoding="utf-8") if OUT.exists() else "# fdpkit benchmarks\n"
        start = text.find("## Sweeps")
        if start >= 0:
            end = text.find("\n## ", start + 1)
            text = text[:start] + text[end + 1:] if end >= 0 else text[:start]
        OUT.write_text(text.rstrip() + "\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


def _single_step(sigma: float, q: float):
    from fdpkit.accounting import account

    return account(fp.dpsgd(sigma, q, 1))


if __name__ == "__main__":
    main()
