"""Shared fixtures. Reference numbers come from ../shared/reference/published.json when it
is there (the steering copy), else from the copy in tests/data/."""

import json
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_SHARED = _HERE.parent.parent / "shared" / "reference" / "published.json"
_LOCAL = _HERE / "data" / "published.json"


def load_published():
    path = _SHARED if _SHARED.exists() else _LOCAL
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="session")
def published():
    return load_published()
