"""Figure output: SVG (web, HTML), PNG, and vector PDF, without a display."""

from __future__ import annotations

import io
import math
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import Formatter, LogFormatterSciNotation  # noqa: E402

FORMATS = ("svg", "png", "pdf")


#: SVG keeps every text (legend labels, axis labels) as ``<text>`` elements, so a reader, a
#: screen reader or a check can find "FPR 0.05" or "δ = 1e-05" in the file; the default
#: ("path") would draw each glyph as an outline.
SVG_RC = {"svg.fonttype": "none"}


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class _DecadeLabels(Formatter):
    """A base-10 log axis's decade labels as plain text (1, 10, 10⁻⁴) instead of matplotlib's
    mathtext (``$\\mathdefault{10^{-4}}$``): every figure's renderer parses mathtext anew
    (its own parser, so its cache never hits across figures), which was a quarter of a
    six-figure report's drawing time. Anything but a decade is left to ``fallback``."""

    def __init__(self, fallback: Formatter) -> None:
        self.fallback = fallback

    def set_axis(self, axis: Any) -> None:
        super().set_axis(axis)
        self.fallback.set_axis(axis)

    def set_locs(self, locs: Any) -> None:
        super().set_locs(locs)
        self.fallback.set_locs(locs)

    def __call__(self, x: float, pos: Any = None) -> str:
        if x > 0 and math.isfinite(x):
            k = round(math.log10(x))
            if abs(math.log10(x) - k) < 1e-9:  # a decade (10.0 ** -5 is not 1e-5 exactly)
                return "1" if k == 0 else "10" if k == 1 else "10" + str(k).translate(_SUPERSCRIPT)
        return self.fallback(x, pos)


def _plain_decades(fig: Figure) -> None:
    """Decade tick labels of every base-10 log axis as plain text (:class:`_DecadeLabels`)."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            major = axis.get_major_formatter()
            if type(major) is LogFormatterSciNotation and major._base == 10:  # noqa: SLF001
                axis.set_major_formatter(_DecadeLabels(major))


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
        _plain_decades(fig)
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
