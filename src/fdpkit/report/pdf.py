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
    def footer(self) -> None:  # pragma: no cover - layout
        self.set_y(-12)
        self.set_font("DejaVu", size=8)
        self.cell(0, 8, f"fdpkit privacy report, page {self.page_no()}", align="C")


def render_pdf(doc: ReportDocument) -> bytes:
    pdf = _PDF(format="A4")
    pdf.set_auto_page_break(True, margin=15)
    pdf.add_font("DejaVu", "", str(_FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(_FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.set_title(doc.title)
    pdf.set_creator("fdpkit")
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 14)
    pdf.multi_cell(0, 7, doc.title, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    pdf.set_font("DejaVu", size=10)
    pdf.multi_cell(0, 5, doc.summary, new_x="LMARGIN", new_y="NEXT")
    for s in doc.sections:
        pdf.ln(3)
        pdf.set_font("DejaVu", "B", 12)
        pdf.multi_cell(0, 7, s.title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", size=9)
        for p in s.paragraphs:
            pdf.multi_cell(0, 5, ("• " if s.title == "Warnings" else "") + p, new_x="LMARGIN", new_y="NEXT")
        for t in s.tables:
            pdf.set_font("DejaVu", "B", 10)
            pdf.multi_cell(0, 6, t.title, new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("DejaVu", size=8)
            with pdf.table(text_align="LEFT", line_height=4.5) as table:
                table.row(list(t.header))
                for r in t.rows:
                    table.row(list(r))
            if t.note:
                pdf.set_font("DejaVu", size=7)
                pdf.multi_cell(0, 4, t.note, new_x="LMARGIN", new_y="NEXT")
    for f in doc.figures:
        pdf.add_page()
        pdf.set_font("DejaVu", "B", 11)
        pdf.multi_cell(0, 6, f.caption, new_x="LMARGIN", new_y="NEXT")
        svg = render(f.draw, "svg", size=(6.5, 5.0))
        svg = re.sub(rb"<metadata>.*?</metadata>", b"", svg, flags=re.S)  # fpdf2 ignores it
        pdf.image(io.BytesIO(svg), w=170)
    return bytes(pdf.output())


def render_tables_pdf(title: str, tables: list[tuple[str, list[str], list[list[str]]]],
                      notes: list[str] = ()) -> bytes:
    """A small PDF of titled tables and notes (calculator exports)."""
    pdf = _PDF(format="A4")
    pdf.add_font("DejaVu", "", str(_FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(_FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.set_title(title)
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 14)
    pdf.multi_cell(0, 7, title, new_x="LMARGIN", new_y="NEXT")
    for name, header, rows in tables:
        pdf.ln(2)
        pdf.set_font("DejaVu", "B", 11)
        pdf.multi_cell(0, 6, name, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", size=9)
        with pdf.table(text_align="LEFT", line_height=5) as table:
            table.row(header)
            for r in rows:
                table.row([str(c) for c in r])
    if notes:
        pdf.ln(2)
        pdf.set_font("DejaVu", "B", 11)
        pdf.multi_cell(0, 6, "Warnings", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", size=9)
        for n in notes:
            pdf.multi_cell(0, 5, "• " + n, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())
