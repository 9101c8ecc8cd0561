"""Reports: one document model rendered to JSON, CSV, Markdown, HTML and PDF, plus plots."""

from fdpkit.report.build import build_document
from fdpkit.report.model import ReportDocument, fmt
from fdpkit.report.render import FORMATS, csv_cell, csv_rows, render_document, write_atomic

__all__ = ["FORMATS", "ReportDocument", "build_document", "csv_cell", "csv_rows", "fmt",
           "render_document", "write_atomic"]
