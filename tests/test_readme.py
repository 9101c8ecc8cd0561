"""README and documentation code blocks run as part of `make test`, and their printed
comments are checked: every token a block prints appears in the comment on the line of
its ``print(...)`` call (or, for a ``print`` without a comment, on the next line that is a
comment only)."""

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
DOC_PAGES = sorted(p for p in DOCS.rglob("*.md"))
TUTORIALS = sorted((DOCS / "tutorials").glob("*.md"))
#: The message of every fdpkit deprecation (``fdpkit._deprecation.warn_renamed``).
DEPRECATED = r".* is deprecated and will be removed in the next minor version"


def python_blocks(path: Path = README):
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def claims_of(block: str) -> list[str]:
    lines = block.splitlines()
    claims = []
    for i, line in enumerate(lines):
        if "print(" not in line:
            continue
        if "#" in line:
            claims.append(line.split("#", 1)[1].strip())
        elif i + 1 < len(lines) and lines[i + 1].lstrip().startswith("#"):
            claims.append(lines[i + 1].split("#", 1)[1].strip())
    return claims


def run_and_check(block: str, where: Path) -> None:
    """Run the block, failing on a deprecated fdpkit name or keyword (the documentation
    shows the current spelling), and check what it prints against its comments."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.filterwarnings("error", message=DEPRECATED, category=DeprecationWarning)
        exec(compile(block, str(where), "exec"), {})
    printed = out.getvalue().splitlines()
    claims = claims_of(block)
    assert len(printed) == len(claims), (where.name, printed, claims)
    for got, claim in zip(printed, claims):
        # every token printed appears in the comment (e.g. "1.232 0.0575")
        for token in got.split():
            assert token in claim, (where.name, got, claim)


def test_readme_has_python_example():
    assert python_blocks()


def test_readme_blocks_run_and_print_what_they_claim():
    for block in python_blocks():
        run_and_check(block, README)


def test_every_tutorial_has_code_that_runs():
    assert len(TUTORIALS) >= 4
    for page in TUTORIALS:
        assert python_blocks(page), page.name


@pytest.mark.parametrize("page", [p for p in DOC_PAGES if python_blocks(p)],
                         ids=lambda p: str(p.relative_to(DOCS)))
def test_doc_blocks_run_and_print_what_they_claim(page):
    for block in python_blocks(page):
        run_and_check(block, page)


def test_a_deprecated_name_in_a_block_fails_it():
    with pytest.raises(DeprecationWarning, match="use fdpkit.adjusted_level"):
        run_and_check("import fdpkit as fp\nfp.adjusted_alpha(0.05, 2)\n", README)
