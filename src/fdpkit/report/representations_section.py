"""The representations section of a report: the regret of (eps, delta), rho*-zCDP, the RDP
curve and mu-GDP for the mechanism (Gomez et al. Fig. 1c), the fallback advice of Sec. 4,
and its plot. Layout only: the numbers come from :mod:`fdpkit.guarantee.representations`."""

from __future__ import annotations

import math
from typing import Any, TYPE_CHECKING

import numpy as np

from fdpkit.report import plots
from fdpkit.report.model import Figure, Section, Table, fmt

if TYPE_CHECKING:  # annotations only
    from fdpkit.guarantee import PrivacyReport


def _fmt(x: float) -> str:
    return fmt(x, 3)


def representation_section(report: PrivacyReport):
    """A ``Section`` with the representations table and the advice paragraph."""
    reps = report.representations()
    rows = tuple((r.name, r.parameter, _fmt(r.regret) if math.isfinite(r.regret) else "∞ (not finite)",
                  "yes" if r.key == reps.recommended else "", r.note) for r in reps.rows)
    table = Table(
        "Regret of each representation (Gomez et al. Fig. 1c)",
        ("representation", "parameter", "regret Δ", "recommended", "how"),
        rows,
        "Regret Δ(f, f_r) (Gomez et al. Def. 2.6): how far the mechanism's curve must move to fall "
        "below the representation's curve; lower is more accurate. All curves are sound lower bounds.",
    )
    return Section("Representations", (reps.advice,), (table,), key="representations")


def draw_regrets(ax, report: PrivacyReport):
    """Bar chart of the regrets on a log axis (Gomez et al. Fig. 1c)."""
    reps = report.representations()
    names = [r.name for r in reps.rows]
    vals = [r.regret for r in reps.rows]
    finite = [v for v in vals if math.isfinite(v) and v > 0]
    floor = min(finite) / 10 if finite else 1e-6
    top = 1.0
    heights = [max(v, floor) if math.isfinite(v) else top for v in vals]
    colors = ["#9aa5b1" if not math.isfinite(v) else ("#2e7d32" if r.key == reps.recommended else "#1f77b4")
              for v, r in zip(vals, reps.rows)]
    ax.bar(np.arange(len(names)), heights, color=colors)
    for i, v in enumerate(vals):
        ax.text(i, heights[i], "∞" if not math.isfinite(v) else f"{v:.2g}", ha="center", va="bottom",
                fontsize="small")
    ax.axhline(0.01, ls="--", color="grey", lw=0.8, label="regret 0.01 (Gomez et al. Sec. 4)")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 2.0)
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("Regret Δ (lower is more accurate)")
    ax.legend(fontsize="small")
    return ax


def representation_figures(report: PrivacyReport) -> list:
    """Figures of the section: the regret bars and the representations' curves."""
    def curves(ax: Any):
        reps = report.representations()
        curves = {k: c for k, c in (reps.curves or {}).items() if k != "mechanism"}
        curves["mechanism"] = report.curve  # drawn last, on top
        return plots.roc_loglog(ax, curves)

    return [
        Figure("representations", "Regret of each representation of the mechanism (Gomez et al. Fig. 1c)",
               lambda ax: draw_regrets(ax, report)),
        Figure("representation-curves", "Log-log ROC of the mechanism and of each representation's curve",
               curves),
    ]
