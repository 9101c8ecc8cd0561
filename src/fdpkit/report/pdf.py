"""PDF rendering with fpdf2: embedded DejaVuSans (shipped with matplotlib) so that μ, ε, δ,
β, τ and ∞ render; plots embedded as SVG, i.e. as vector graphics."""

from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib
from fpdf import FPDF

from fdpkit.report.figures import render
from fdpkit.report.model import ReportDocument

_FONT_DIR = Path(matplotlib.get_data_path()) / "fonts" / "ttf"


class _PDF(FPDF):
    """A4 pages whose footer names the document ("fdpkit audit report, page 2")."""

    def __init__(self, kind: str = "privacy report", **kwargs) -> None:
        super().__init__(**kwargs)
        self.kind = kind

    def footer(self) -> None:  # pragma: no cover - layout
        self.set_y(-12)
        self.set_font("DejaVu", size=8)
        self.cell(0, 8, f"fdpkit {self.kind}, page {self.page_no()}", align="C")


#: Figure size (inches) in the PDF: two per A4 page at full text width, fonts legible.
FIGURE_SIZE = (6.4, 3.9)
FIGURE_WIDTH_MM = 170.0


def _plain(text: str) -> str:
    """Symbols for PDF text: no literal underscores for subscripts (G_μ -> Gμ)."""
    return text.replace("G_μ", "Gμ").replace("G_mu", "Gμ")


#: Room (mm) a heading needs below it on its page: itself and the first lines of what it heads
#: (a table's header and two rows); with less, it starts the next page instead of ending this one.
KEEP_WITH_NEXT_MM = 30.0


def _keep_with_next(pdf: FPDF) -> None:
    """Start a new page where a heading would be the last line of this one (a table title at
    the foot of page 1 with its table on page 2)."""
    if pdf.will_page_break(KEEP_WITH_NEXT_MM):
        pdf.add_page()


def _section(pdf: FPDF, s) -> None:
    pdf.ln(3)
    _keep_with_next(pdf)
    pdf.set_font("DejaVu", "B", 12)
    pdf.multi_cell(0, 7, s.title, align="L", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("DejaVu", size=9)
    bullet = s.key == "warnings" or s.title == "Warnings"
    for p in s.paragraphs:
        pdf.multi_cell(0, 5, ("• " if bullet else "") + _plain(p), align="L", new_x="LMARGIN", new_y="NEXT")
    for t in s.tables:
        if t.title != s.title:  # no heading twice
            _keep_with_next(pdf)
            pdf.set_font("DejaVu", "B", 10)
            pdf.multi_cell(0, 6, t.title, align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", size=8)
        with pdf.table(text_align="LEFT", line_height=4.5) as table:
            table.row(list(t.header))
            for r in t.rows:
                table.row([_plain(c) for c in r])
        if t.note:
            pdf.set_font("DejaVu", size=7)
            pdf.multi_cell(0, 4, _plain(t.note), align="L", new_x="LMARGIN", new_y="NEXT")


def render_pdf(doc: ReportDocument) -> bytes:
    """The report as PDF: left-aligned title and text, the headline and grade first, tables,
    then the plots two to a page, then the collapsed (technical) sections."""
    doc = doc.for_grade_box()
    pdf = _PDF(doc.kind, format="A4")
    pdf.set_auto_page_break(True, margin=15)
    pdf.add_font("DejaVu", "", str(_FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(_FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.set_title(doc.title)
    pdf.set_creator("fdpkit")
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 14)
    pdf.multi_cell(0, 7, doc.title, align="L", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    pdf.set_font("DejaVu", size=10)
    pdf.multi_cell(0, 5, _plain(doc.summary), align="L", new_x="LMARGIN", new_y="NEXT")
    g = doc.grade
    if g is not None:
        pdf.ln(1)
        r, gg, b = (int(g.colour[i:i + 2], 16) for i in (1, 3, 5))
        pdf.set_fill_color(r, gg, b)
        pdf.set_text_color(255, 255, 255)
        pdf.set_font("DejaVu", "B", 11)
        pdf.cell(0, 8, f" {g.icon}  Protection: {g.label} (level {g.level} of 0–3, 0 strongest)", fill=True,
                 new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(0, 0, 0)
        pdf.set_fill_color(0, 0, 0)  # the default: SVG glyphs without a fill use it
        pdf.set_font("DejaVu", size=9)
        pdf.multi_cell(0, 5, f"What this grade means: {g.definition}", align="L", new_x="LMARGIN", new_y="NEXT")
    for s in doc.sections:
        if not s.collapsed:
            _section(pdf, s)
    for i, f in enumerate(doc.figures):
        if i % 2 == 0:
            pdf.add_page()
        else:
            pdf.ln(4)
        pdf.set_font("DejaVu", "B", 10)
        pdf.multi_cell(0, 5, f.caption, align="L", new_x="LMARGIN", new_y="NEXT")
        svg = render(f.draw, "svg", size=FIGURE_SIZE, text_as_text=False)  # fpdf2 draws outlines only
        svg = re.sub(rb"<metadata>.*?</metadata>", b"", svg, flags=re.S)  # fpdf2 ignores it
        pdf.image(io.BytesIO(svg), w=FIGURE_WIDTH_MM)
    collapsed = [s for s in doc.sections if s.collapsed]
    if collapsed:
        pdf.add_page()
        for s in collapsed:
            _section(pdf, s)
    return bytes(pdf.output())


def render_tables_pdf(title: str, tables: list[tuple[str, list[str], list[list[str]]]],
                      notes: list[str] = ()) -> bytes:
    """A small PDF of titled tables and notes (calculator exports)."""
    pdf = _PDF("calculator", format="A4")
    pdf.add_font("DejaVu", "", str(_FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(_FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.set_title(title)
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 14)
    pdf.multi_cell(0, 7, title, align="L", new_x="LMARGIN", new_y="NEXT")
    for name, header, rows in tables:
        pdf.ln(2)
        pdf.set_font("DejaVu", "B", 11)
        pdf.multi_cell(0, 6, name, align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", size=9)
        with pdf.table(text_align="LEFT", line_height=5) as table:
            table.row(header)
            for r in rows:
                table.row([str(c) for c in r])
    if notes:
        pdf.ln(2)
        pdf.set_font("DejaVu", "B", 11)
        pdf.multi_cell(0, 6, "Warnings", align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", size=9)
        for n in notes:
            pdf.multi_cell(0, 5, "• " + n, align="L", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())
