"""The documentation site: `make docs` builds it strictly, every public name is documented.

`make test` runs `make docs` first, so these tests read the fresh `site/`; run alone (or
with a stale `site/`), they build the site into a temporary folder.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import fdpkit

#: Builds the documentation site (mkdocs, about a minute) when site/ is stale: not in the inner loop.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
SOURCES = [ROOT / "mkdocs.yml", ROOT / "scripts" / "docs_hooks.py", ROOT / "CHANGELOG.md",
           *(ROOT / "docs").rglob("*"), *(ROOT / "src" / "fdpkit").rglob("*.py")]


def _fresh(site: Path) -> bool:
    index = site / "index.html"
    if not index.exists():
        return False
    built = index.stat().st_mtime
    return all(p.stat().st_mtime <= built for p in SOURCES if p.is_file())


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if _fresh(SITE):
        return SITE
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def _text(paths) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in paths)


def test_site_has_home_tutorials_api_and_plots(site):
    assert (site / "index.html").exists()
    for page in ("ml-engineer", "statistician", "is-epsilon-8-safe", "certified"):
        assert (site / "tutorials" / page / "index.html").exists(), page
    for name in ("glossary", "references", "changelog", "api"):
        assert (site / name / "index.html").exists(), name
    plots = sorted((site / "plots").glob("*.svg"))
    assert len(plots) >= 4 and all(p.stat().st_size > 5_000 for p in plots)
    assert "[Unreleased]" in (site / "changelog" / "index.html").read_text(encoding="utf-8")


def test_every_public_name_appears_in_the_api_reference(site):
    api = _text((site / "api").rglob("*.html"))
    missing = [n for n in fdpkit.__all__ if not re.search(rf"\b{re.escape(n)}\b", api)]
    assert not missing


def test_every_public_name_has_a_rendered_entry(site):
    """Not just mentioned: mkdocstrings rendered an object heading (its anchor id) for it."""
    api = _text((site / "api").rglob("*.html"))
    ids = set(re.findall(r'id="(fdpkit\.[\w.]+)"', api))
    last = {i.rsplit(".", 1)[-1] for i in ids}
    missing = [n for n in fdpkit.__all__ if n != "__version__" and n not in last]
    assert not missing


def test_ledger_sweep_audit_modules_are_documented(site):
    api = _text((site / "api").rglob("*.html"))
    for ident in ("fdpkit.ledger.operations.Ledger", "fdpkit.ledger.open_ledger", "fdpkit.sweep.runner.run_sweep",
                  "fdpkit.sweep.studies.design_table", "fdpkit.audit.empirical.run_audit", "fdpkit.audit.simulate.simulate_attack"):
        assert f'id="{ident}"' in api, ident
