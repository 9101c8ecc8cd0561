"""MkDocs hooks for the fdpkit documentation (``mkdocs.yml`` names this file).

- Plots are drawn by the build (never committed images): :func:`on_files` renders each
  figure in :data:`PLOTS` with fdpkit's own plotting code and adds it to the site as
  ``plots/<name>.svg``; pages link to them as ``../plots/<name>.svg``.
- Every name in ``fdpkit.__all__`` must have an API entry (a ``::: module.path.name`` line
  under ``docs/api/``). A missing one is a warning, which ``mkdocs build --strict`` turns into
  a failed build; ``docs/api/index.md`` gets the list of all public names at its
  ``<!-- fdpkit-all -->`` marker (a list), each linked to its entry.
- Docstrings use Sphinx roles (``:func:`name```), which Markdown does not know: on every page
  :func:`on_page_content` turns each into a cross-reference to the named object's API entry
  (a plain code span when it has none), so no page shows a literal ``:func:``.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Callable

log = logging.getLogger("mkdocs.plugins.fdpkit")
ROOT = Path(__file__).resolve().parent.parent
API_DIR = ROOT / "docs" / "api"
MARKER = "<!-- fdpkit-all -->"


# --------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------
def _tradeoff_eps8(ax):
    import fdpkit as fp
    from fdpkit.report import plots

    curves = {
        "(ε = 8, δ = 1e-5): any mechanism": fp.EpsDeltaCurve(8.0, 1e-5),
        "μ = 1 (Gaussian DP)": fp.GaussianCurve(1.0),
        "μ = 2": fp.GaussianCurve(2.0),
        "DP-SGD at ε = 7.42 (μ = 1.57)": fp.GaussianCurve(1.567),
    }
    plots.tradeoff(ax, curves)
    ax.set_title("What an attacker can do (lower = more dangerous)")


def _posterior_eps8(ax):
    import fdpkit as fp
    from fdpkit.report import plots

    plots.posterior_vs_fpr(ax, fp.GaussianCurve(1.567), priors=(0.001, 0.01, 0.1))
    ax.set_title("Attacker's certainty after the attack, μ = 1.57")


def _certified(ax):
    import fdpkit as fp
    from fdpkit.report import plots

    curve = fp.tradeoff_curve(fp.dpsgd(2.0, 0.01, 1000), discretization=1e-3)
    plots.curve_vs_gdp(ax, curve, fp.fit_gdp(curve).mu)
    ax.set_title("DP-SGD (σ = 2, q = 0.01, T = 1000): certified curve and its μ")


def _power(ax):
    import fdpkit as fp
    from fdpkit.report import plots

    spec = fp.ZTestSpec(effect=0.1, n=60, sd=0.25, alpha=0.05)
    plots.power_vs_effect(ax, spec, mus=(0.25, 0.5, 1.0))
    ax.set_title("Power of the Z-test under Gaussian noise (n = 60, sd 0.25)")


def _attack_power(ax):
    from fdpkit.report import plots

    plots.attack_power_vs_mu(ax, fprs=(1e-4, 1e-3, 1e-2), mu_max=4.0)
    ax.set_title("Best attack's TPR against μ")


PLOTS: dict[str, Callable] = {
    "tradeoff-eps8": _tradeoff_eps8,
    "posterior-eps8": _posterior_eps8,
    "certified-dpsgd": _certified,
    "power-under-noise": _power,
    "attack-power-vs-mu": _attack_power,
}


def on_files(files, config):
    """Add the build's plots to the site as ``plots/<name>.svg``."""
    from mkdocs.structure.files import File

    from fdpkit.report.figures import render

    for name, draw in PLOTS.items():
        files.append(File.generated(config, f"plots/{name}.svg", content=render(draw, "svg", size=(6.4, 4.2))))
    return files


# --------------------------------------------------------------------------------------
# every public name has an API entry
# --------------------------------------------------------------------------------------
def api_entries() -> dict[str, tuple[str, str]]:
    """``{last name: (identifier, page)}`` for every ``::: identifier`` under docs/api/."""
    out: dict[str, tuple[str, str]] = {}
    for page in sorted(API_DIR.glob("*.md")):
        for ident in re.findall(r"^::: *([\w.]+)", page.read_text(encoding="utf-8"), flags=re.M):
            out.setdefault(ident.rsplit(".", 1)[-1], (ident, page.name))
    return out


def _summary(obj) -> str:
    """The first paragraph of ``obj``'s docstring (shortened), safe in one Markdown line."""
    import inspect

    doc = inspect.getdoc(obj) if callable(obj) else None
    if not doc:
        return ""
    first = " ".join(doc.split("\n\n", 1)[0].split())
    first = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", first)  # Sphinx roles read as code
    first = first.replace("|", "\\|").replace("[", "\\[").replace("]", "\\]").replace("<", "&lt;")
    if len(first) > 120:
        first = first[:117].rsplit(" ", 1)[0]
        if first.count("`") % 2:  # never cut a code span in half
            first = first[:first.rindex("`")].rstrip()
        first += " …"
    return first


def on_page_markdown(markdown, page, config, files):
    """Fill the list of public names into api/index.md; warn about undocumented names."""
    if page.file.src_uri != "api/index.md":
        return markdown
    import fdpkit

    entries = api_entries()
    rows = []
    for name in sorted((n for n in fdpkit.__all__ if n != "__version__"), key=str.lower):
        obj = getattr(fdpkit, name)
        kind = _kind(obj)
        if name not in entries:
            log.warning("fdpkit.%s (in fdpkit.__all__) has no API entry: add '::: %s.%s' to a page "
                        "under docs/api/", name, getattr(obj, "__module__", "fdpkit"), name)
            rows.append(f"- `{name}`: *missing* ({kind})")
            continue
        ident, where = entries[name]
        rows.append(f"- [`{name}`][{ident}]: {_summary_line(obj)} ({kind}; [{where[:-3]}]({where}))")
    return markdown.replace(MARKER, "\n".join(rows))


def _kind(obj) -> str:
    """What a public name is, in one word: package, class, function or constant."""
    import types

    if isinstance(obj, types.ModuleType):
        return "package"
    return "class" if isinstance(obj, type) else "function" if callable(obj) else "constant"


def _summary_line(obj) -> str:
    """A public name's line in the list of every public name: a deprecated alias (its
    ``__deprecated__`` names the new spelling) says so first and names the name to use; a
    callable package (``fdpkit.sweep``) says that calling it is deprecated."""
    import types

    new = getattr(obj, "__deprecated__", None)
    if isinstance(new, str):
        return f"**Deprecated**: use `{new}`."
    target = getattr(obj, "__call_target__", None) if isinstance(obj, types.ModuleType) else None
    summary = _summary(obj)
    if target:
        summary += f" Calling the package is deprecated: use `fdpkit.{target}`."
    return summary


# --------------------------------------------------------------------------------------
# Sphinx roles in docstrings -> cross-references
# --------------------------------------------------------------------------------------
ROLE_RE = re.compile(r":(?:func|meth|class|mod|data|attr|obj|exc):<code>(~?)([\w.]+)</code>")
_ID_RE = re.compile(r'id="((?:fdpkit)\.[\w.]+)"')


def sphinx_roles_to_refs(html: str) -> str:
    """``:func:<code>name</code>`` -> an optional autorefs link to ``name`` (text: the code span).

    A dotted ``fdpkit.`` name is used as it is; a short one (``to_dict``, ``Mechanism.to_dict``)
    is the object on this page whose identifier ends with it (the closest one above, else the
    first), else ``fdpkit.<name>`` for a public name. Unresolved references render as the plain
    code span.
    """
    import fdpkit

    ids = [(m.start(), m.group(1)) for m in _ID_RE.finditer(html)]

    def repl(m: re.Match) -> str:
        short, name = m.group(1), m.group(2)
        text = name.rsplit(".", 1)[-1] if short else name
        if name.startswith("fdpkit."):
            ident = name
        else:
            near = [(pos, i) for pos, i in ids if i.endswith("." + name)]
            above = [i for pos, i in near if pos < m.start()]
            ident = above[-1] if above else near[0][1] if near else (
                f"fdpkit.{name}" if name in fdpkit.__all__ else name)
        return f'<autoref identifier="{ident}" optional><code>{text}</code></autoref>'

    return ROLE_RE.sub(repl, html)


def on_page_content(html, page, config, files):
    """Sphinx roles in rendered docstrings become cross-references (see :func:`sphinx_roles_to_refs`)."""
    return sphinx_roles_to_refs(html)
