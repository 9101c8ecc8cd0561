"""Plots of sweep tables (plain rows of numbers): the regret map of Gomez et al. Fig. 4 and
the design table. Same look as :mod:`fdpkit.report.plots`."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

REGRET_LABEL = "Regret of the μ-GDP summary"


def regret_map_plot(ax, rows: Sequence[Mapping[str, Any]], *, threshold: float | None = 0.01):
    """Regret against the sample rate, one line per (noise multiplier, steps): colour by
    noise multiplier, darker for more steps (Gomez et al. Fig. 4)."""
    from matplotlib import colormaps

    noises = sorted({r["noise_multiplier"] for r in rows})
    steps = sorted({r["steps"] for r in rows})
    cmaps = ["Blues", "Oranges", "Greens", "Reds", "Purples", "Greys"]
    for i, nm in enumerate(noises):
        cmap = colormaps[cmaps[i % len(cmaps)]]
        for j, t in enumerate(steps):
            pts = sorted((r["sample_rate"], r["regret"]) for r in rows  # refused rows have none
                         if r["noise_multiplier"] == nm and r["steps"] == t and r.get("regret") is not None)
            if not pts:
                continue
            q, reg = np.array(pts).T
            shade = 0.45 + 0.55 * (j + 1) / len(steps)
            ax.plot(q, np.maximum(reg, 1e-12), marker="o", ms=3, color=cmap(shade),
                    label=f"σ = {nm:g}, T = {t}")
    if threshold is not None:
        ax.axhline(threshold, color="grey", ls="--", lw=0.9, label=f"regret {threshold:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Sample rate q")
    ax.set_ylabel(REGRET_LABEL)
    ax.set_title("Regret of μ-GDP for DP-SGD (darker: more steps)", fontsize="medium", loc="left")
    ax.legend(fontsize="x-small", ncol=2)
    return ax


def design_table_plot(ax, rows: Sequence[Mapping[str, Any]]):
    """Smallest noise multiplier against epochs, one line per batch size."""
    for b in sorted({r["batch_size"] for r in rows}):
        pts = sorted((r["epochs"], r["noise_multiplier"]) for r in rows if r["batch_size"] == b)
        e, nm = np.array(pts).T
        ax.plot(e, nm, marker="o", ms=3, label=f"batch {b}")
    ax.set_xlabel("Epochs")
    ax.set_ylabel("Smallest noise multiplier σ")
    target = rows[0].get("target") if rows else None
    ax.set_title(f"Noise needed for {target}" if target else "Noise needed for the target",
                 fontsize="medium", loc="left")
    ax.legend(fontsize="small")
    return ax
