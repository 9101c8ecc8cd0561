"""Every fdpkit benchmark in one run (``make bench``), one section each in RESULTS.md.

``run.py`` rewrites RESULTS.md (machine, date, the headline report against dp_accounting,
gdpnum, riskcal, calibration, compose_curves); the calibration and sweep benchmarks replace
their own sections; the others print plain text, appended here under their own heading.
Each runs in its own process (clean imports, its own peak memory). A benchmark that fails
is reported in its section and the run goes on; the exit status is 1 if any failed.

Run: ``benchmarks/.venv/bin/python benchmarks/all.py [--quick]`` (``--quick`` passes the
scripts' own quick flags where they have one: a smoke run, not numbers to quote).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "RESULTS.md"

#: (script, extra arguments, quick arguments, section title or None when the script writes its own)
SCRIPTS = [
    ("run.py", [], [], None),
    ("dpsgd_calibration.py", [], [], None),
    ("audit.py", [], [], "Audit of 10^6 scores per class (issue 17)"),
    ("ledger.py", [], ["--releases", "100"], "Ledger of 1,000 mixed releases (issue 13)"),
    ("bench_cost_model.py", [], ["--quick"], "Cost model: estimate against measured time (issue 14)"),
    ("web_latency.py", [], [], "Web latency: light requests idle and with 6 heavy in flight (issue 14)"),
    ("bench_sweep.py", ["--write"], ["--quick"], None),
    ("startup.py", ["--no-check"], ["--repeats", "1", "--no-check"], "Start-up time (issue 30)"),
    ("bench_speed.py", [], ["--repeats", "2", "--settings", "8"], "Speed toward the limit (issue 27)"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run with the scripts' quick settings")
    ap.add_argument("--only", nargs="*", default=None, help="run only these scripts (file names)")
    args = ap.parse_args()
    failed = []
    for script, extra, quick, title in SCRIPTS:
        if args.only and script not in args.only:
            continue
        if not (HERE / script).exists():
            continue
        cmd = [sys.executable, str(HERE / script), *extra, *(quick if args.quick else [])]
        print(f"== {script}", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=HERE, capture_output=title is not None, text=True)
        seconds = time.perf_counter() - t0
        if title is not None:
            sys.stdout.write(proc.stdout)
            sys.stderr.write(proc.stderr[-4000:] if proc.returncode else "")
            body = proc.stdout.strip() if proc.returncode == 0 else \
                f"FAILED (exit {proc.returncode}):\n{(proc.stderr or proc.stdout)[-2000:]}"
            with OUT.open("a", encoding="utf-8") as fh:
                fh.write(f"\n## {title}\n\n```\n{body}\n```\n")
        if proc.returncode:
            failed.append(script)
        print(f"== {script}: {'failed' if proc.returncode else 'ok'} in {seconds:.0f} s", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
