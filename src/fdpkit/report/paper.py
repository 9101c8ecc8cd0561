"""The report section that states what was accounted and gives the paper statement:
sampling scheme, neighbouring relation, privacy unit, and (shuffled batches) what Poisson
accounting would say, labelled as not a guarantee. Layout only: every number comes from
the :class:`fdpkit.guarantee.privacy.PrivacyReport`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fdpkit.report.model import Section, Table, fmt

if TYPE_CHECKING:  # annotations only
    from fdpkit.guarantee import PrivacyReport

STATEMENT_TITLE = "Statement for the paper"


def statement_section(report: PrivacyReport) -> Section:
    """Setting table, Poisson comparison (shuffled only) and the paper statement."""
    s = report.setting or {}
    rows = [("sampling scheme", str(s.get("sampling", "-"))),
            ("neighbouring relation", str(s.get("relation", "-"))),
            ("privacy unit", str(s.get("unit", "-")))]
    if s.get("examples_per_user"):
        rows.append(("examples per user (group privacy)", str(s["examples_per_user"])))
    for key in ("dataset_size", "steps", "phases"):
        if s.get(key) is not None:
            rows.append((key.replace("_", " "), fmt(s[key])))
    tables = [Table("What the guarantee is about", ("field", "value"), tuple(rows))]
    cmp = report.comparison
    if cmp:
        tables.append(Table(
            cmp["label"], ("quantity", "value"),
            (("μ", fmt(cmp["mu"], up=True)),
             *((f"ε at δ = {fmt(r['delta'])}", fmt(r["epsilon"], up=True)) for r in cmp["epsilon_at_delta"])),
            "Not a guarantee for shuffled batches: " + "; ".join(cmp["citations"]) + ".",
        ))
    return Section(STATEMENT_TITLE, (report.statement(),), tuple(tables), key="statement")
