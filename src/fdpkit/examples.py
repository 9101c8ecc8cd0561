"""A worked example printed by ``python -m fdpkit.examples`` (``make run`` until the web
calculator lands): one mu, read four ways. Contains no maths of its own."""

from __future__ import annotations

import fdpkit as fp


def worked_example(mu: float = 1.0, delta: float = 1e-5, fpr: float = 1e-3, prior: float = 0.01) -> list[str]:
    """Lines describing a mu-GDP guarantee: epsilon at delta, TPR at FPR, posterior."""
    curve = fp.GaussianCurve(mu)
    lines = [f"A mechanism that is mu = {mu:g} Gaussian-DP (curve G_mu, exact):"]
    lines.append(f"  epsilon at delta = {delta:g}:        {fp.epsilon_for_delta(mu, delta):.4f}")
    tpr = fp.attack_power(curve, fpr)
    adv = fp.multiplicative_advantage(curve, fpr)
    lines.append(f"  best attack TPR at FPR {fpr:g}:      {tpr:.4g}  ({adv:.1f}x the FPR)")
    post = fp.posterior(curve, prior, fpr)
    lines.append(f"  posterior for a {prior:.0%} prior after a positive attack at that FPR: {post:.3f}")
    lines.append(f"  largest TPR - FPR of any attack (advantage): {fp.advantage(curve):.4f}")
    return lines


def main() -> None:  # pragma: no cover - exercised by make run
    """Print the worked example (``python -m fdpkit.examples``)."""
    print("\n".join(worked_example()))


if __name__ == "__main__":  # pragma: no cover
    main()
