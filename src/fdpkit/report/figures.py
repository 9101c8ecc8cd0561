"""Figure output: SVG (web, HTML), PNG, and vector PDF, without a display."""

from __future__ import annotations

import io
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

FORMATS = ("svg", "png", "pdf")


#: SVG keeps every text (legend labels, axis labels) as ``<text>`` elements, so a reader, a
#: screen reader or a check can find "FPR 0.05" or "δ = 1e-05" in the file; the default
#: ("path") would draw each glyph as an outline.
SVG_RC = {"svg.fonttype": "none"}


def render(draw: Callable[[Any], Any], fmt: str = "svg", *, size: tuple[float, float] = (6.0, 4.5),
           text_as_text: bool = True) -> bytes:
    """Draw with ``draw(ax)`` on a fresh figure and return the encoded image. SVG text is
    written as text (:data:`SVG_RC`) unless ``text_as_text`` is False (glyph outlines, for
    an SVG that another renderer without the fonts embeds, such as the PDF report's)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    with matplotlib.rc_context(SVG_RC if text_as_text else {"svg.fonttype": "path"}):
        fig = Figure(figsize=size, layout="constrained")
        ax = fig.add_subplot()
        draw(ax)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    return buf.getvalue()


def svg_inline(draw: Callable[[Any], Any], *, title: str | None = None, **kwargs: Any) -> str:
    """SVG markup for inline embedding in HTML (XML prolog and DOCTYPE removed). With
    ``title`` the SVG gets ``role="img"``, an ``aria-label`` and a ``<title>`` (its
    accessible name)."""
    text = render(draw, "svg", **kwargs).decode("utf-8")
    start = text.find("<svg")
    svg = text[start:] if start >= 0 else text
    if title:
        from html import escape

        t = escape(title, quote=True)
        end = svg.find(">")
        svg = f'{svg[:end]} role="img" aria-label="{t}">' + f"<title>{t}</title>" + svg[end + 1:]
    return svg
