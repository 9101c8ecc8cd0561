"""README code blocks run as part of `make test`, and their printed comments are checked."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_python_example():
    assert python_blocks()


def test_readme_blocks_run_and_print_what_they_claim():
    for block in python_blocks():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), {})
        printed = out.getvalue().splitlines()
        claims = [line.split("#", 1)[1].strip() for line in block.splitlines() if "print(" in line and "#" in line]
        assert len(printed) == len(claims)
        for got, claim in zip(printed, claims):
            # every token printed appears in the comment (e.g. "1.232 0.0575")
            for token in got.split():
                assert token in claim, (got, claim)
