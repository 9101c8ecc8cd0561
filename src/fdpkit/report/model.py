"""One report model, rendered to JSON, CSV, Markdown, HTML and PDF.

``ReportDocument`` holds titled sections of sentences and tables (strings already
formatted), plus the figures to draw; :func:`fdpkit.report.build.build_document` arranges a
:class:`fdpkit.guarantee.PrivacyReport` into one. Renderers only lay it out; they compute
nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from fdpkit._numerics import safe_g



def fmt(x: Any, digits: int = 4, *, up: bool | None = None) -> str:
    """Numbers for people: 4 significant digits, inf as the symbol (also where it comes as
    the JSON answers' string "inf").

    ``up`` says which side the last digit may move to: ``True`` for an upper bound (μ, ε, δ,
    a TPR, advantage, relative risk, posterior), ``False`` for a lower bound (an FNR, an
    audit's lower bound on μ), never on the optimistic side (:func:`fdpkit._numerics.safe_g`);
    ``None`` (inputs echoed back, labels) rounds to nearest. Same digits either way.

    >>> fmt(1.23456), fmt(float("inf")), fmt("inf"), fmt("-inf"), fmt("text")
    ('1.235', '∞', '∞', '-∞', 'text')
    >>> fmt(1.6363), fmt(1.6363, up=True), fmt(1.23456, up=False)
    ('1.636', '1.637', '1.234')
    """
    if isinstance(x, str):
        return {"inf": "∞", "+inf": "∞", "infinity": "∞", "-inf": "-∞", "-infinity": "-∞"}.get(x.strip().lower(), x)
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    v = float(x)
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v == 0:
        return "0"
    return f"{v:.{digits}g}" if up is None else safe_g(v, digits, up=up)


@dataclass(frozen=True)
class Table:
    """A titled table of formatted strings."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class Section:
    """A titled section of sentences and tables. ``key`` names it for code (renderers and
    other helpers find sections by key, not by title); ``collapsed`` sections are details a
    reviewer opens on demand (HTML ``<details>``), e.g. internal notes."""

    title: str
    paragraphs: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    key: str = ""
    collapsed: bool = False


@dataclass(frozen=True)
class Figure:
    """A figure: ``draw(ax)`` fills a matplotlib Axes."""

    name: str
    caption: str
    draw: Callable[[Any], Any] = field(repr=False)


@dataclass(frozen=True)
class ReportDocument:
    """Title, one-paragraph summary, sections (in reading order: headline first), figures
    and the schema-versioned JSON form. Add sections with :meth:`with_section`."""

    title: str
    summary: str
    sections: tuple[Section, ...]
    figures: tuple[Figure, ...]
    data: dict[str, Any] = field(repr=False)  # the schema-versioned JSON form
    grade: Any = None  # fdpkit.risk.Grade of the certified curve, for colour and icon
    #: what kind of document this is, for page footers ("fdpkit privacy report, page 2")
    kind: str = "privacy report"

    def section(self, key: str) -> Section | None:
        """The section with this key (or title), else None."""
        return next((s for s in self.sections if s.key == key or s.title == key), None)

    def for_grade_box(self) -> "ReportDocument":
        """A copy for renderers that draw the grade as a box with its definition (HTML, PDF):
        the headline's "Protection: ..." sentence, which says the same, is left out."""
        from dataclasses import replace

        if self.grade is None:
            return self
        return replace(self, sections=tuple(
            replace(s, paragraphs=tuple(p for p in s.paragraphs if not p.startswith("Protection: ")))
            if s.key == "headline" else s for s in self.sections))

    def with_section(self, section: Section, *, before: str | None = None) -> "ReportDocument":
        """A copy with ``section`` added (before the section keyed ``before``, else before the
        collapsed sections at the end)."""
        from dataclasses import replace

        secs = list(self.sections)
        idx = next((i for i, s in enumerate(secs) if before is not None and (s.key == before or s.title == before)),
                   next((i for i, s in enumerate(secs) if s.collapsed), len(secs)))
        secs.insert(idx, section)
        return replace(self, sections=tuple(secs))


#: Human labels for the fields of mechanism specs (inputs table).
FIELD_LABELS = {
    "sigma": "noise standard deviation σ", "sensitivity": "sensitivity Δ", "scale": "Laplace scale b",
    "epsilon": "ε", "delta": "δ", "sample_rate": "sample rate q", "times": "repetitions (steps)",
    "noise_multiplier": "noise multiplier σ", "steps": "steps", "p": "probability p", "n": "n",
}
_KIND_LABELS = {"repeated": "repeated", "subsampled": "subsampled", "gaussian": "Gaussian mechanism",
                "laplace": "Laplace mechanism", "composed": "composition", "pure_dp": "pure ε-DP mechanism",
                "approx_dp": "(ε, δ)-DP mechanism", "randomized_response": "randomized response",
                "dpsgd": "DP-SGD", "zcdp": "ρ-zCDP guarantee", "rdp": "RDP guarantee"}
#: Warnings that concern the numerics rather than the guarantee: shown under "Technical notes".
_INTERNAL = ("tail truncation", "tail mass it did not resolve", "dp_accounting", "discretization")


def _symbols(text: str) -> str:
    """Greek letters for the ASCII names in library sentences (mu -> μ, tau -> τ, epsilon ->
    ε, delta -> δ: a shuffled run's warning read "μ = 0.2395, epsilon = 0.8027 at delta =
    1e-05" beside a statement saying "ε = 0.8027 at δ = 1e-05"); G_mu becomes G_μ, which HTML
    renders with a subscript and PDF as Gμ. Names inside identifiers (``epsilon_for_delta``)
    stay as they are."""
    import re

    text = text.replace(" >= ", " ≥ ").replace(" <= ", " ≤ ")
    text = re.sub(r"\bG_mu\b", "G_μ", text)
    text = re.sub(r"\bmu-GDP\b", "μ-GDP", text)
    text = re.sub(r"\bmu\b", "μ", text)
    text = re.sub(r"\bepsilon\b", "ε", text)
    text = re.sub(r"\bdelta\b", "δ", text)
    return re.sub(r"\btau\b", "τ", text)


def human_inputs(spec: dict, path: str = "") -> list[tuple[str, str]]:
    """(label, value) rows of a mechanism spec, with words instead of dotted keys; a DP-SGD
    schedule's phases (dicts without a kind) are labelled "phase 1", "phase 2", ...

    >>> human_inputs({"kind": "repeated", "times": 3, "inner": {"kind": "gaussian", "sigma": 2.0, "sensitivity": 1.0}})
    [('mechanism', 'repeated'), ('repetitions (steps)', '3'), ('mechanism (inside repeated)', 'Gaussian mechanism'), ('noise standard deviation σ (Gaussian mechanism)', '2'), ('sensitivity Δ (Gaussian mechanism)', '1')]
    """
    rows: list[tuple[str, str]] = []
    kind = str(spec.get("kind", ""))
    kind_label = _KIND_LABELS.get(kind, kind.replace("_", " ")) if kind else path
    if kind:
        rows.append(("mechanism" + (f" ({path})" if path else ""), kind_label))
    # fixed batches (shuffled, fixed-size) have no sample rate: the batch size and data size say it
    loader = spec.get("sampling") in ("shuffled", "fixed-size") and spec.get("batch_size") is not None
    for k, v in spec.items():
        if k == "kind" or (loader and k == "sample_rate"):
            continue
        if isinstance(v, dict):
            rows += human_inputs(v, f"inside {kind_label}")
        elif isinstance(v, (list, tuple)) and v and not any(isinstance(p, dict) for p in v):
            # a vector (a curve mechanism's vertices): one row, not one row per number
            label = FIELD_LABELS.get(k, k.replace("_", " ")) + (f" ({kind_label})" if path else "")
            text = ", ".join(fmt(p) for p in v) if len(v) <= 6 else \
                f"{len(v)} values, {fmt(v[0])} … {fmt(v[-1])}"
            rows.append((label, text))
        elif isinstance(v, (list, tuple)):
            for i, part in enumerate(v):
                if isinstance(part, dict):
                    where = f"phase {i + 1}" if "kind" not in part else f"part {i + 1} of the {kind_label}"
                    rows += human_inputs(part, where)
                else:
                    rows.append((f"{FIELD_LABELS.get(k, k.replace('_', ' '))} {i + 1}", fmt(part)))
        else:
            label = FIELD_LABELS.get(k, k.replace("_", " "))
            suffix = f" ({kind_label})" if path else ""
            rows.append((label + suffix, fmt(v) if not isinstance(v, str) else v))
    return rows
