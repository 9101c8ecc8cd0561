"""Notebook cards: small self-contained HTML (inline SVG, no matplotlib, no JavaScript) for
``_repr_html_`` of curves, fits and reports. Lives in ``curves/`` (numpy only) so that curves
use it without importing anything above themselves; fit and reports import it from here."""

from __future__ import annotations

import html
import math
from typing import Iterable, Sequence

import numpy as np

from fdpkit._numerics import safe_g

#: FPR grid of the little trade-off plot.
_ALPHA = np.linspace(0.0, 1.0, 81)


def _points(xs: Sequence[float], ys: Sequence[float], size: int, pad: int) -> str:
    span = size - 2 * pad
    return " ".join(f"{pad + x * span:.1f},{pad + (1 - y) * span:.1f}" for x, y in zip(xs, ys)
                    if math.isfinite(x) and math.isfinite(y))


def tradeoff_svg(betas: Sequence[float], *, reference: Sequence[float] | None = None, title: str = "",
                 size: int = 150) -> str:
    """A small trade-off plot (FNR against FPR on [0, 1]) as inline SVG with an accessible
    title. ``betas`` are values of the curve on 81 evenly spaced FPRs; ``reference`` another
    curve on the same grid (drawn dashed)."""
    pad = 14
    t = html.escape(title or "Trade-off curve: FNR against FPR")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" role="img" '
             f'aria-label="{t}" viewBox="0 0 {size} {size}"><title>{t}</title>',
             f'<rect x="{pad}" y="{pad}" width="{size - 2 * pad}" height="{size - 2 * pad}" fill="white" '
             'stroke="#999" stroke-width="0.8"/>',
             f'<polyline fill="none" stroke="#bbb" stroke-dasharray="2,2" points="{_points([0, 1], [1, 0], size, pad)}"/>']
    if reference is not None:
        parts.append(f'<polyline fill="none" stroke="#e36209" stroke-dasharray="4,3" stroke-width="1.4" '
                     f'points="{_points(_ALPHA, reference, size, pad)}"/>')
    parts.append(f'<polyline fill="none" stroke="#0969da" stroke-width="1.8" points="{_points(_ALPHA, betas, size, pad)}"/>')
    parts.append(f'<text x="{size / 2:.0f}" y="{size - 2}" font-size="9" text-anchor="middle" fill="#555">FPR α</text>'
                 f'<text x="9" y="{size / 2:.0f}" font-size="9" fill="#555" transform="rotate(-90 9 {size / 2:.0f})" '
                 'text-anchor="middle">FNR β</text></svg>')
    return "".join(parts)


def card(title: str, rows: Iterable[tuple[str, str]], svg: str = "", footer: str = "",
         accent: str = "#0969da") -> str:
    """A compact card: title, a two-column table, the plot on the right, a footer line."""
    body = "".join(f"<tr><th style='text-align:left;padding:1px 8px 1px 0;font-weight:600'>{html.escape(k)}</th>"
                   f"<td style='padding:1px 0'>{html.escape(v)}</td></tr>" for k, v in rows)
    foot = f"<div style='color:#57606a;font-size:90%;margin-top:4px'>{html.escape(footer)}</div>" if footer else ""
    return (f"<div style='display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start;border:1px solid #d0d7de;"
            f"border-left:4px solid {html.escape(accent)};border-radius:6px;padding:8px 12px;max-width:40rem;"
            f"font-family:system-ui,sans-serif;font-size:13px'><div style='flex:1 1 14rem'>"
            f"<div style='font-weight:700;margin-bottom:4px'>{html.escape(title)}</div><table>{body}</table>{foot}"
            f"</div>{svg}</div>")


def grid() -> np.ndarray:
    """The FPR grid :func:`tradeoff_svg` expects."""
    return _ALPHA.copy()


def num(x: float, *, up: bool | None = None) -> str:
    """Four significant digits, ∞ for infinity; ``up=True`` (an upper bound) or ``False`` (a
    lower bound) moves the last digit to the safe side (:func:`fdpkit._numerics.safe_g`)."""
    v = float(x)
    if math.isinf(v):
        return "∞"
    return f"{v:.4g}" if up is None else safe_g(v, up=up)


def curve_html(curve) -> str:
    """``TradeOffCurve._repr_html_``: the parameters, the bound, and a small trade-off plot
    (attached in ``fdpkit.curves.__init__`` so that ``curves/base.py`` imports nothing from
    ``fdpkit.curves``)."""
    rows = [(k, num(v) if isinstance(v, (int, float)) else str(v)) for k, v in curve._params().items()]
    rows.append(("bound", curve.bound))
    rows.append(("f(0)", num(curve.f0)))
    svg = tradeoff_svg(np.asarray(curve.beta(grid())), title=f"Trade-off curve of {type(curve).__name__}")
    return card(type(curve).__name__, rows, svg)
