"""Start-up time of ``import fdpkit`` and ``fdpkit --help`` against the libraries they stand on (issue 30).

Each command runs as a fresh process, the commands taking turns (so a busy machine slows
them alike), ``--repeats`` times each (5 by default); the median wall time of each is printed
with the two ratios the issue sets as targets:

- ``import fdpkit``  <= 3x ``python -c "import numpy"``
- ``fdpkit --help``  <= 3x ``python -c "import typer, rich"``

``fdpkit --help`` runs the console script's code (``fdpkit.cli:main``) in this interpreter,
so it measures the fdpkit on this interpreter's path (set PYTHONPATH for a source tree).
A few more commands are timed for information: ``--version``, a group's ``--help``, one
small command that does the maths (``fdpkit risk --mu 1``), and a DP-SGD report whose PLD
fdpkit builds natively (``fdpkit report dpsgd`` of 30 epochs at batch 256 of 60,000, and the
same ``fp.privacy_report`` from Python), which import no dp_accounting.

Every process compiles its modules once, into a fresh bytecode cache (``PYTHONPYCACHEPREFIX``,
written in a first, untimed round), so that all commands are timed as an installed package
runs, with bytecode cached, even where ``PYTHONDONTWRITEBYTECODE`` is set or the source tree
has no ``__pycache__``.

    python benchmarks/startup.py               # medians of 5
    python benchmarks/startup.py --repeats 9   # steadier on a busy machine

Exit status 1 when a target is missed (``--no-check`` only prints).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

#: The fdpkit console script, as ``[project.scripts]`` in pyproject.toml defines it.
_CLI = "import sys; sys.argv[0] = 'fdpkit'; from fdpkit.cli import main; main()"

#: (label, argv after the interpreter)
COMMANDS = [
    ('python -c "import numpy"', ["-c", "import numpy"]),
    ('python -c "import typer, rich"', ["-c", "import typer, rich"]),
    ("import fdpkit", ["-c", "import fdpkit"]),
    ("fdpkit --help", ["-c", _CLI, "--help"]),
    ("fdpkit --version", ["-c", _CLI, "--version"]),
    ("fdpkit report gaussian --help", ["-c", _CLI, "report", "gaussian", "--help"]),
    ("fdpkit risk --mu 1", ["-c", _CLI, "risk", "--mu", "1"]),
    ("fdpkit report dpsgd (Poisson, 7,032 steps)",
     ["-c", _CLI, "report", "dpsgd", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size",
      "60000", "--epochs", "30"]),
    ("fp.privacy_report(fp.dpsgd(1.1, 256/60000, 7032))",
     ["-c", "import fdpkit as fp; fp.privacy_report(fp.dpsgd(1.1, 256 / 60000, 7032))"]),
]

#: (what, baseline, largest allowed ratio): the issue's "done when".
TARGETS = [
    ("import fdpkit", 'python -c "import numpy"', 3.0),
    ("fdpkit --help", 'python -c "import typer, rich"', 3.0),
]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one fresh process."""
    cpu0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    seconds, cpu = time.perf_counter() - t0, _cpu() - cpu0
    if proc.returncode:
        raise SystemExit(f"{argv} failed (exit {proc.returncode}): {proc.stderr.decode()[-500:]}")
    return seconds, cpu


def measure(repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU seconds of each command over ``repeats`` rounds (one warm-up round
    first, so that every module's bytecode is compiled and cached before timing)."""
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in COMMANDS}
    with tempfile.TemporaryDirectory(prefix="fdpkit-startup-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        for round_ in range(repeats + 1):
            for label, argv in COMMANDS:
                seconds = _once(argv, env)
                if round_:
                    times[label].append(seconds)
    wall = {label: statistics.median(t[0] for t in ts) for label, ts in times.items()}
    cpu = {label: statistics.median(t[1] for t in ts) for label, ts in times.items()}
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs of each command (median reported)")
    ap.add_argument("--no-check", action="store_true", help="print only; exit 0 even if a target is missed")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {args.repeats}")
    med, cpu = measure(args.repeats)
    width = max(len(label) for label in med)
    print(f"Start-up, median of {args.repeats} fresh processes each ({sys.executable}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs):")
    print(f"  {'':<{width}}     wall       CPU")
    for label, seconds in med.items():
        print(f"  {label:<{width}}  {seconds * 1000:7.0f} ms {cpu[label] * 1000:6.0f} ms")
    missed = 0
    for what, base, limit in TARGETS:
        ratio = med[what] / med[base]
        ok = ratio <= limit
        missed += not ok
        print(f"  {what} / {base} = {ratio:.2f} wall, {cpu[what] / cpu[base]:.2f} CPU "
              f"(target <= {limit:g} wall): {'ok' if ok else 'MISSED'}")
    return 1 if missed and not args.no_check else 0


if __name__ == "__main__":
    raise SystemExit(main())
