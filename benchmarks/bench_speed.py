"""Speed toward the limit (issue 27): what the headline report costs against dp_accounting
and against the FFT floor, and what the native single step changes, in one run.

Printed (single-threaded: ``FDPKIT_THREADS=1``; best of ``--repeats`` runs, interleaved so
that a slow spell of a loaded machine hits every contestant alike):

1. the headline report (noise 9.4, rate 0.32768, 2000 steps, discretization 1e-4) against
   dp_accounting's own ``from_gaussian_mechanism`` + ``self_compose`` (target <= 0.5x), with
   the report on dp_accounting's single step (``FDPKIT_NATIVE_STEPS=0``) as "before";
2. the report against the FFT floor: one ``rfft`` + ``irfft`` pair at the composed support
   (the longer direction's composed PMF, at scipy's next fast length);
1b. the report's representations section (RDP curve and tight rho-zCDP as curves), which
   the CLI, PDF and JSON reports add to the accounting;
3. the single step alone: fdpkit's native step against dp_accounting's, for the headline
   step and the small-noise steps that dominate sweeps;
4. sweep throughput before/after: a grid of settings (``--settings``, default 64; the
   issue's grid is 1,000), each sweep in a fresh process on one core, with dp_accounting's
   and with the native single step, on this tree and (``--before REV``) on ``src/`` of an
   earlier git revision, e.g. the commit the issue was filed against;
5. web / library latency: ``POST /api/report/dpsgd`` on a server up for 5 s (its workers
   warm), the first request and the best of the later ones, against ``privacy_report`` of
   the same run (target: within 1.5x the library time + 0.3 s), for the Poisson headline
   and a shuffled 60-epoch run (``--no-web`` skips it).

Run: ``benchmarks/.venv/bin/python benchmarks/bench_speed.py [--repeats 5] [--settings 64]
[--before REV] [--no-web]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pldlib
from scipy import fft as sfft

os.environ["FDPKIT_THREADS"] = "1"

import fdpkit as fp
from fdpkit.accounting import _pld_adapter, single_step
from fdpkit.accounting.pld import dpsgd_pld

NM, Q, T, DISC = 9.4, 16384 / 50000, 2000, 1e-4


HERE = Path(__file__).resolve().parent

#: The sweep of one benchmark run, in a fresh process (argv: grid JSON, native 0/1).
_SWEEP_CHILD = """
import json, os, sys, time
os.environ["FDPKIT_THREADS"] = "1"
grid = json.loads(sys.argv[1])
try:  # run_sweep since issue 23; an earlier src/ (--before) has sweep
    from fdpkit.sweep import run_sweep as sweep
except ImportError:
    from fdpkit.sweep import sweep
sweep(noise_multiplier=[2.0], sample_rate=[0.01], steps=[100], executor="inprocess")  # imports
c0, t0 = time.process_time(), time.perf_counter()
rows = sweep(**grid, discretization=1e-4, executor="inprocess")
print(json.dumps([time.process_time() - c0, time.perf_counter() - t0, [r.get("mu") for r in rows]]))
"""


def _sweep_in_subprocess(src: str, grid: dict, native: bool) -> tuple[float, float, list]:
    """(CPU s, wall s, mus) of a sweep of ``grid`` run with ``src`` first on the path."""
    env = dict(os.environ, PYTHONPATH=src, FDPKIT_NATIVE_STEPS="1" if native else "0")
    out = subprocess.run([sys.executable, "-c", _SWEEP_CHILD, json.dumps(grid)], env=env,
                         capture_output=True, text=True, check=True)
    cpu_s, wall_s, mus = json.loads(out.stdout.strip().splitlines()[-1])
    return cpu_s, wall_s, [math.inf if m is None else float(m) for m in mus]


def _source_tree(rev: str) -> str:
    """``src/`` of git revision ``rev`` of this repository, extracted to a temporary folder."""
    dest = Path(tempfile.mkdtemp(prefix="fdpkit-before-"))
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", rev, "src"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return str(dest / "src")


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


class native_off:
    """FDPKIT_NATIVE_STEPS=0 inside the block (dp_accounting builds the single steps)."""

    def __enter__(self):
        os.environ["FDPKIT_NATIVE_STEPS"] = "0"

    def __exit__(self, *exc):
        del os.environ["FDPKIT_NATIVE_STEPS"]


def report():
    return fp.privacy_report(fp.dpsgd(noise_multiplier=NM, sample_rate=Q, steps=T), discretization=DISC)


def report_before():
    with native_off():
        return report()


def dp_accounting_build_compose():
    return pldlib.from_gaussian_mechanism(NM, sampling_prob=Q, use_connect_dots=True,
                                          value_discretization_interval=DISC).self_compose(T)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--settings", type=int, default=64, help="sweep grid size (a cube: 4^3 = 64)")
    ap.add_argument("--no-web", action="store_true", help="skip the web latency section")
    ap.add_argument("--before", default=None, metavar="REV",
                    help="also sweep with src/ of this git revision (e.g. the issue's base commit)")
    args = ap.parse_args()

    rep = report()  # warm imports and caches
    report_before()
    support = max(len(a.probs) for a in _pld_adapter.pmf_arrays(dpsgd_pld(fp.dpsgd(NM, Q, T), DISC)) if a)
    n_fft = sfft.next_fast_len(support, real=True)
    x = np.random.default_rng(0).random(n_fft)

    def fft_floor():
        return sfft.irfft(sfft.rfft(x), n_fft)

    best = {k: math.inf for k in ("dpa", "report", "before", "fft")}
    cpu = dict(best)
    fns = {"dpa": dp_accounting_build_compose, "report": report, "before": report_before, "fft": fft_floor}
    for _ in range(args.repeats):
        for k, fn in fns.items():
            c0 = time.process_time()
            best[k] = min(best[k], timed(fn)[0])
            cpu[k] = min(cpu[k], time.process_time() - c0)
    print(f"# Speed toward the limit (issue 27), FDPKIT_THREADS=1, best of {args.repeats} interleaved")
    print()
    print(f"headline: noise {NM}, rate {Q}, {T} steps, discretization {DISC:g}; mu = {rep.mu:.6f}")
    print()
    print("Wall-clock ms and, for a machine shared with other work, CPU ms of this process")
    print("(single-threaded, so CPU time is the work done; both best of the repeats).")
    print()
    print("| what | ms | report / this | CPU ms | report / this (CPU) |")
    print("|---|---|---|---|---|")

    def row(name: str, k: str, target: str = "") -> None:
        print(f"| {name} | {1e3 * best[k]:.1f} | **{best['report'] / best[k]:.2f}x**{target} | "
              f"{1e3 * cpu[k]:.1f} | **{cpu['report'] / cpu[k]:.2f}x** |")

    row("fdpkit privacy_report (native single step)", "report")
    row("fdpkit privacy_report, dp_accounting's single step (before)", "before")
    row(f"dp_accounting from_gaussian_mechanism + self_compose({T})", "dpa", " (target <= 0.5x)")
    row(f"FFT floor: one rfft + irfft at {n_fft} points (composed support {support})", "fft")
    print()

    representations_section(args.repeats)

    print("## Single step alone (both directions)")
    print()
    print("| step | native ms | dp_accounting ms | speed-up |")
    print("|---|---|---|---|")
    for sigma, q in ((NM, Q), (2.0, 0.01), (0.8, 0.3), (0.8, 0.001)):
        tn = td = math.inf
        for _ in range(args.repeats):
            tn = min(tn, timed(lambda s=sigma, r=q: single_step.gaussian_step(s, 1.0, r, DISC))[0])
            td = min(td, timed(lambda s=sigma, r=q: pldlib.from_gaussian_mechanism(
                s, sampling_prob=r, use_connect_dots=True, value_discretization_interval=DISC))[0])
        print(f"| sigma {sigma:g}, q {q:g}, d {DISC:g} | {1e3 * tn:.2f} | {1e3 * td:.1f} | **{td / tn:.0f}x** |")
    print()

    side = max(2, round(args.settings ** (1 / 3)))
    grid = {"noise_multiplier": [round(float(v), 4) for v in np.linspace(0.8, 8.0, side)],
            "sample_rate": [round(float(v), 6) for v in np.geomspace(1e-3, 0.3, side)],
            "steps": [int(v) for v in np.geomspace(100, 2000, side).round()]}
    n = side ** 3
    print(f"## Sweep throughput, {n} settings in-process (noise 0.8-8, rate 1e-3-0.3, steps 100-2000, "
          f"d {DISC:g})")
    print()
    print("Each sweep in a fresh process, one core; CPU seconds (the work done) and wall seconds.")
    print()
    print("| source | single step | CPU s | wall s | settings / CPU s | speed-up (CPU) |")
    print("|---|---|---|---|---|---|")
    runs = []
    trees = [(f"before ({args.before})", _source_tree(args.before))] if args.before else []
    trees.append(("this tree", str(HERE.parent / "src")))
    for label, src in trees:
        for native in (False, True):
            runs.append((label, "native" if native else "dp_accounting", *_sweep_in_subprocess(src, grid, native)))
    base_cpu = runs[0][2]
    for label, step, cpu_s, wall_s, _ in runs:
        print(f"| {label} | {step} | {cpu_s:.1f} | {wall_s:.1f} | {n / cpu_s:.2f} | **{base_cpu / cpu_s:.2f}x** |")
    print()
    ref, last = runs[0][4], runs[-1][4]
    worst = max((abs(a - b) for a, b in zip(last, ref) if math.isfinite(a) and math.isfinite(b)), default=0.0)
    lower = sum(a < b for a, b in zip(last, ref))
    print(f"max |mu this tree - mu first row| = {worst:.2e}; settings with a lower mu: {lower} of {n}")
    if not args.no_web:
        print()
        web_latency(args.repeats)


def representations_section(repeats: int) -> None:
    """Section 1b: the report's representations section (the RDP curve and tight rho-zCDP as
    trade-off curves, Gomez et al. App. A.6), which the CLI, PDF and JSON reports show
    beside the accounting, timed uncached against the report itself."""
    from fdpkit.guarantee import representations as reps

    print("## The report's representations section (RDP curve, tight rho-zCDP)")
    print()
    print("| run | privacy_report ms | representations ms | section / report |")
    print("|---|---|---|---|")
    cases = {"headline": fp.dpsgd(NM, Q, T),
             "CIFAR-10: noise 1.1, batch 256 of 50,000, 60 epochs": fp.dpsgd(1.1, batch_size=256, dataset_size=50000,
                                                                            epochs=60),
             "Gaussian, sigma 1": fp.Gaussian(1.0)}
    for name, mech in cases.items():
        t_rep = t_sec = math.inf
        for _ in range(repeats):
            t, rep = timed(lambda m=mech: fp.privacy_report(m))
            t_rep = min(t_rep, t)
            reps._CACHE.clear()
            t_sec = min(t_sec, timed(rep.representations)[0])
        print(f"| {name} | {1e3 * t_rep:.1f} | {1e3 * t_sec:.1f} | {t_sec / t_rep:.2f}x |")
    print()


#: The web report form's fields for the two cases of the issue.
WEB_CASES = {
    "Poisson headline": {"noise_multiplier": NM, "sample_rate": Q, "steps": T, "discretization": DISC},
    "shuffled, 60 epochs": {"noise_multiplier": NM, "batch_size": 16384, "dataset_size": 50000,
                            "epochs": 60, "sampling": "shuffled", "relation": "replace-one",
                            "discretization": DISC},
}


def web_latency(repeats: int) -> None:
    """Section 5: a real uvicorn server on loopback (the production limits)."""
    import socket
    import threading

    import httpx
    import uvicorn

    from fdpkit.web.common import Limits
    from fdpkit.web.main import create_app
    from fdpkit.web.server import server_config

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(server_config(create_app(Limits(warm_workers=True)), port=port))  # as `fdpkit serve`
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    time.sleep(5.0)  # "a server up for 5 s"
    print("## Web / library latency (POST /api/report/dpsgd, server up for 5 s)")
    print()
    print("| case | privacy_report s | + to_dict s | first request s | later (best) s | target s | first within? |")
    print("|---|---|---|---|---|---|---|")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
            for name, body in WEB_CASES.items():
                kwargs = {k: v for k, v in body.items() if k not in ("noise_multiplier", "discretization")}
                mech = fp.dpsgd(body["noise_multiplier"], **kwargs)
                def post(b=body):
                    return client.post("/api/report/dpsgd", json=b).raise_for_status()

                first = timed(post)[0]
                later = min(timed(post)[0] for _ in range(max(1, repeats - 2)))
                lib = min(timed(lambda m=mech: fp.privacy_report(m, discretization=DISC))[0]
                          for _ in range(max(1, repeats - 2)))
                # the endpoint answers privacy_report(...).to_dict(): its representations add the
                # Rényi accounting (RDP curve, tight rho) that privacy_report leaves for first use
                answer = timed(lambda m=mech: fp.privacy_report(m, discretization=DISC).to_dict())[0]
                target = 1.5 * lib + 0.3
                print(f"| {name} | {lib:.3f} | {answer:.3f} | {first:.3f} | {later:.3f} | {target:.3f} | "
                      f"{'yes' if max(first, later) <= target else 'NO'} |")
    finally:
        server.should_exit = True
        thread.join(timeout=30)


if __name__ == "__main__":
    main()
