"""Benchmark: composing 100 distinct closed-form curves with ``fdpkit.compose_curves``
against dp_accounting composing the same mechanisms natively (issue 11, target <= 2x).

The 100 mechanisms cycle through Gaussian noise (sigma 6 to 16), Laplace noise (scale 6
to 20) and binary randomized response (epsilon 0.05 to 0.2), all different. fdpkit gets
only their trade-off curves (GaussianCurve, LaplaceCurve, RandomizedResponseCurve) and
returns the certified composed curve; dp_accounting builds each PLD from the mechanism
(connect-the-dots, pessimistic; randomized response as pure epsilon-DP, as fdpkit's own
accountant does) and composes them. Same discretization 1e-4 and tail truncation.

Run alone (``python benchmarks/compose_curves.py``: prints and puts the section into
RESULTS.md) or as section 4 of ``run.py``.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import numpy as np
from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pldlib

import fdpkit as fp

DISC = 1e-4
N_CURVES = 100
TAIL = 1e-15
OUT = Path(__file__).resolve().parent / "RESULTS.md"
TITLE = "## 4. compose_curves: 100 distinct closed-form curves vs dp_accounting natively"


def mechanisms(n: int = N_CURVES) -> list[tuple[str, float]]:
    """(kind, parameter) for n distinct mechanisms, cycling Gaussian, Laplace, RR."""
    out = []
    for i in range(n):
        u = i / max(n - 1, 1)
        kind = ("gaussian", "laplace", "rr")[i % 3]
        out.append((kind, {"gaussian": 6 + 10 * u, "laplace": 6 + 14 * u, "rr": 0.05 + 0.15 * u}[kind]))
    return out


def curves(mechs) -> list[fp.TradeOffCurve]:
    make = {"gaussian": lambda s: fp.GaussianCurve(1.0 / s), "laplace": lambda b: fp.LaplaceCurve(1.0 / b),
            "rr": fp.RandomizedResponseCurve}
    return [make[k](v) for k, v in mechs]


def native(mechs):
    """dp_accounting alone: build every PLD from the mechanism, compose them in order."""
    plds = []
    for kind, v in mechs:
        if kind == "gaussian":
            plds.append(pldlib.from_gaussian_mechanism(v, pessimistic_estimate=True, use_connect_dots=True,
                                                       value_discretization_interval=DISC))
        elif kind == "laplace":
            plds.append(pldlib.from_laplace_mechanism(v, pessimistic_estimate=True, use_connect_dots=True,
                                                      value_discretization_interval=DISC))
        else:
            plds.append(pldlib.from_privacy_parameters(common.DifferentialPrivacyParameters(v, 0.0),
                                                       value_discretization_interval=DISC))
    out = plds[0]
    for p in plds[1:]:
        out = out.compose(p, tail_mass_truncation=TAIL)
    return out


def run(say, repeats: int = 3) -> dict:
    mechs = mechanisms()
    cs = curves(mechs)
    fp.compose_curves(*cs[:3], discretization=1e-3)  # warm imports
    t_nat = t_fdp = math.inf
    pld = composed = None
    for _ in range(repeats):  # interleaved, best of `repeats` each
        t0 = time.perf_counter()
        pld = native(mechs)
        t_nat = min(t_nat, time.perf_counter() - t0)
        t0 = time.perf_counter()
        composed = fp.compose_curves(*cs, discretization=DISC)
        t_fdp = min(t_fdp, time.perf_counter() - t0)
    eps = np.array([0.0, 0.5, 1.0, 2.0])
    ours, theirs = composed.delta_for_epsilon(eps), pld.get_delta_for_epsilon(eps)
    say(TITLE)
    say()
    say(f"{N_CURVES} mechanisms (Gaussian sigma 6-16, Laplace scale 6-20, randomized response eps "
        f"0.05-0.2, all distinct), discretization {DISC:g}, best of {repeats}, interleaved.")
    say()
    say("| what | seconds | ratio to dp_accounting |")
    say("|---|---|---|")
    say(f"| dp_accounting: build {N_CURVES} PLDs from the mechanisms + compose | {t_nat:.2f} | 1.00x |")
    say(f"| fdpkit compose_curves (curves only -> PLDs -> compose -> certified curve) | {t_fdp:.2f} | "
        f"**{t_fdp / t_nat:.2f}x** (target <= 2x) |")
    say()
    say("| eps | fdpkit delta(eps) | dp_accounting delta(eps) |")
    say("|---|---|---|")
    for e, a, b in zip(eps, ours, theirs):
        say(f"| {e:g} | {a:.6e} | {b:.6e} |")
    say()
    say(f"fdpkit: mu = {fp.fit_gdp(composed).mu:.5f} ({len(composed)} vertices)")
    say()
    return {"native_s": t_nat, "fdpkit_s": t_fdp, "ratio": t_fdp / t_nat}


def main() -> None:
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    run(say)
    section = "\n".join(lines).rstrip() + "\n"
    text = OUT.read_text(encoding="utf-8") if OUT.exists() else "# fdpkit benchmarks\n"
    # replace an earlier copy of this section (it runs to the next "## " or the end)
    text = re.sub(re.escape(TITLE) + r".*?(?=\n## |\Z)", "", text, flags=re.S).rstrip() + "\n\n"
    OUT.write_text(text + section, encoding="utf-8")
    print(f"wrote the section to {OUT}")


if __name__ == "__main__":
    main()
