"""Renderers: one ReportDocument -> JSON, CSV, Markdown, HTML, PDF.

All return bytes or str and write nothing; :func:`write_atomic` puts a result on disk via a
temporary file and a rename, so a failure never leaves a half-written file.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from fdpkit.report.model import ReportDocument, Table

FORMATS = ("json", "csv", "md", "html", "pdf")
_FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    """A CSV cell safe against formula injection: text starting with = + - @ (or a tab or
    carriage return) is prefixed with a single quote (OWASP recommendation).

    >>> csv_cell("=1+1"), csv_cell("0.5")
    ("'=1+1", '0.5')
    """
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_LEAD) else text


def csv_rows(rows: list[list[Any]]) -> str:
    """Rows as CSV text; every cell passes through :func:`csv_cell`, so no cell can start a
    spreadsheet formula."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow([csv_cell(c) for c in row])
    return buf.getvalue()


def to_json(doc: ReportDocument) -> str:
    """The report's data as indented JSON text (the schema in ``report/report.schema.json``)."""
    return json.dumps(doc.data, indent=2, ensure_ascii=False) + "\n"


def _tables(doc: ReportDocument) -> list[Table]:
    return [t for s in doc.sections for t in s.tables]


def to_csv(doc: ReportDocument) -> str:
    """One sectioned CSV: a "# title" row before each table, then its header and rows."""
    rows: list[list[Any]] = [["# " + doc.title]]
    for t in _tables(doc):
        rows.append([])
        rows.append(["# " + t.title])
        rows.append(list(t.header))
        rows.extend(list(r) for r in t.rows)
    warn = [s for s in doc.sections if s.key == "warnings" or s.title == "Warnings"]
    if warn:
        rows.append([])
        rows.append(["# Warnings"])
        rows.extend([p] for p in warn[0].paragraphs)
    for s in doc.sections:
        if s.title == "Statement for the paper":
            rows += [[], ["# " + s.title], *([p] for p in s.paragraphs)]
    return csv_rows(rows)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("G_μ", "G<sub>μ</sub>")


def to_markdown(doc: ReportDocument) -> str:
    """The report as Markdown: title, summary, then each section's paragraphs and tables."""
    out = [f"# {doc.title}", "", doc.summary, ""]
    for s in doc.sections:
        out += [f"## {s.title}", ""]
        for p in s.paragraphs:
            out += [("- " if s.key == "warnings" or s.title == "Warnings" else "") + p, ""]
        for t in s.tables:
            out += [f"**{t.title}**", ""]
            out.append("| " + " | ".join(map(_md_escape, t.header)) + " |")
            out.append("|" + "---|" * len(t.header))
            out += ["| " + " | ".join(map(_md_escape, r)) + " |" for r in t.rows]
            if t.note:
                out += ["", f"_{t.note}_"]
            out.append("")
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,-apple-system,'DejaVu Sans',sans-serif;max-width:60rem;margin:2rem auto;
padding:0 1rem;color:#1b1f24;line-height:1.45}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0 1rem}td,th{border:1px solid #ccc;padding:.25rem .6rem;
text-align:left}th{background:#f3f5f7}.summary{background:#eef6ee;padding:.8rem;border-radius:6px}
.warn li{color:#8a4b00}figure{margin:1rem 0}figcaption{font-size:.9rem;color:#555}
svg{max-width:100%;height:auto}.grade{border-left:.5rem solid;padding:.5rem .8rem;margin:.6rem 0;background:#fff}
.grade-icon{display:inline-block;width:1.5rem;height:1.5rem;border-radius:50%;color:#fff;text-align:center;
font-weight:700;margin-right:.4rem}.table-wrap{max-width:100%;overflow-x:auto}details{margin:1rem 0}
summary{cursor:pointer;font-weight:600}.headline td:last-child{font-weight:600}
@media print{figure{break-inside:avoid}}
"""


def grade_html(grade: Any) -> str:
    """A grade as colour AND icon AND words, with its definition."""
    if grade is None:
        return ""
    c = html.escape(grade.colour)
    return (f"<div class='grade grade-{grade.level}' id='grade' data-level='{grade.level}' style='border-color:{c}'>"
            f"<p><span class='grade-icon' aria-hidden='true' style='background:{c}'>{html.escape(grade.icon)}</span>"
            f"<strong>Protection: <span style='color:{c}'>{html.escape(grade.label)}</span></strong> "
            f"<small>(level {grade.level} of 0–3, 0 strongest)</small></p>"
            + (f"<p class='grade-reason'><em>Why:</em> {html.escape(grade.reason)}.</p>"
               if getattr(grade, "reason", "") else "")
            + f"<p><em>What this grade means:</em> {html.escape(grade.definition)}</p></div>")


def section_html(s: Any, *, skip_tables: bool = False) -> str:
    """One section; collapsed sections as a closed ``<details>``."""
    body = []
    if s.key == "warnings" or s.title == "Warnings":
        body.append("<ul class='warn'>" + "".join(f"<li>{_esc(p)}</li>" for p in s.paragraphs) + "</ul>")
    else:
        body += [f"<p>{_esc(p)}</p>" for p in s.paragraphs]
    if not skip_tables:
        body += [table_html(t, heading=t.title != s.title) for t in s.tables]  # no heading twice
    sid = f" id='section-{html.escape(s.key)}'" if s.key else ""
    if s.collapsed:
        return f"<details{sid}><summary>{html.escape(s.title)}</summary>{''.join(body)}</details>"
    return f"<section{sid}><h2>{html.escape(s.title)}</h2>{''.join(body)}</section>"


def figure_html(f: Any) -> str:
    """A figure as ``<figure>`` with its plot as inline SVG and its caption."""
    from fdpkit.report.figures import svg_inline  # matplotlib: only when a figure is drawn

    return (f"<figure id='fig-{html.escape(f.name)}'>{svg_inline(f.draw, title=f.caption)}"
            f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")


def _esc(text: str) -> str:
    """Escape for HTML, with G_μ as G<sub>μ</sub> (no literal underscore)."""
    return html.escape(text).replace("G_μ", "G<sub>μ</sub>")


def table_html(t: Table, *, heading: bool = True) -> str:
    """A table as HTML (escaped, horizontally scrollable on small screens), with its title
    as a heading unless ``heading=False`` and its note below."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in t.header)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in r) + "</tr>" for r in t.rows)
    note = f"<p><small>{html.escape(t.note)}</small></p>" if t.note else ""
    title = f"<h3>{html.escape(t.title)}</h3>" if heading else ""
    return (f"{title}<div class='table-wrap'><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>{note}")


def to_html(doc: ReportDocument, *, figures: bool = True) -> str:
    """A self-contained HTML page: inline CSS and inline SVG, no external assets."""
    doc = doc.for_grade_box()
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{html.escape(doc.title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(doc.title)}</h1>",
        f"<p class='summary' id='summary'>{html.escape(doc.summary)}</p>",
        grade_html(doc.grade),
    ]
    for s in doc.sections:
        if not s.collapsed:
            parts.append(section_html(s))
    if figures:
        parts.append("<h2>Plots</h2>")
        for f in doc.figures:
            parts.append(figure_html(f))
    parts += [section_html(s) for s in doc.sections if s.collapsed]
    parts.append("</body></html>")
    return "\n".join(parts)


def to_pdf(doc: ReportDocument) -> bytes:
    """The report as PDF bytes (same content and plots as the HTML; :mod:`fdpkit.report.pdf`)."""
    from fdpkit.report.pdf import render_pdf  # fpdf and matplotlib (the [report] extra): only for PDF

    return render_pdf(doc)


def render_document(doc: ReportDocument, fmt: str) -> bytes:
    """Render to ``fmt`` (json, csv, md, html, pdf) as bytes."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "pdf":
        return to_pdf(doc)
    text = {"json": to_json, "csv": to_csv, "md": to_markdown, "html": to_html}[fmt](doc)
    return text.encode("utf-8")


def write_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename. The
    file's bytes reach the disk (``fsync``) before the rename, and the rename itself (the
    folder's ``fsync``, where the system has one): after a power cut the file is the old one
    or the new one, whole, never an empty or half-written one under the new name."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the usual permissions
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    sync_folder(target.parent)
    return target


def sync_folder(folder: str | os.PathLike) -> None:
    """``fsync`` a folder, so that a rename into it survives a power cut; nothing where the
    system cannot open a folder for it (Windows) or refuses (some network file systems)."""
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:
        return
    try:
        fd = os.open(folder, os.O_RDONLY | flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
