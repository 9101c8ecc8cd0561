"""Coverage of fp.audit_one_run over simulated runs (issue 26).

Each run: m canaries, each included with probability 1/2; the score of a canary is one draw
of a mu-GDP Gaussian mechanism's output (N(mu, 1) if included, N(0, 1) if not), the
white-box Dirac-canary setting of Steinke, Nasr & Jagielski 2023 in its simplest form.
Prints how often the lower bounds exceeded the truth (should be <= 1 - confidence) and
their medians against the truth.

    python scripts/one_run_coverage.py [runs] [canaries]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import fdpkit as fp

DELTA = 1e-5
CONFIDENCE = 0.95


def main(runs: int = 60, canaries: int = 1000, mus=(1.0, 2.0, 4.0)) -> None:
    for mu in mus:
        truth_eps = fp.GaussianCurve(mu).epsilon_for_delta(DELTA)
        rng = np.random.default_rng(26)
        eps_lo, mu_lo = [], []
        t0 = time.perf_counter()
        for _ in range(runs):
            inc = rng.random(canaries) < 0.5
            a = fp.audit_one_run(rng.normal(mu * inc, 1.0), inc, delta=DELTA, confidence=CONFIDENCE)
            eps_lo.append(a.epsilon_lower)
            mu_lo.append(a.mu_lower)
        eps_lo, mu_lo = np.array(eps_lo), np.array(mu_lo)
        print(f"mu={mu:g} (eps({DELTA:g})={truth_eps:.3f}), {runs} runs x {canaries} canaries, "
              f"{(time.perf_counter() - t0) / runs:.2f} s/run: "
              f"eps_lower > truth in {int((eps_lo > truth_eps).sum())}/{runs}, median eps_lower "
              f"{np.median(eps_lo):.3f} ({np.median(eps_lo) / truth_eps:.0%} of truth); "
              f"mu_lower > mu in {int((mu_lo > mu).sum())}/{runs}, median mu_lower {np.median(mu_lo):.3f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
