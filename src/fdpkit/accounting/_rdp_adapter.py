"""The one place that reads dp_accounting's RDP accountant state (``RdpAccountant._rdp``:
the composed Rényi epsilons at its orders; the library has no public getter for them)."""

from __future__ import annotations

import logging

import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdplib


def poisson_gaussian_rdp(sample_rate: float, noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """eps(t) of one Poisson-subsampled Gaussian step (Mironov, Talwar & Zhang 2019), as
    dp_accounting computes it; ``inf`` where its series does not converge (no constraint)."""
    acc = rdplib.RdpAccountant(orders=[float(t) for t in orders])
    event = dp_event.PoissonSampledDpEvent(sample_rate, dp_event.GaussianDpEvent(noise_multiplier))
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)  # non-converged orders are reported as inf below
    try:
        acc.compose(event)
    finally:
        absl.setLevel(level)
    out = np.asarray(acc._rdp, dtype=float).copy()
    return np.where(np.isnan(out), np.inf, out)
