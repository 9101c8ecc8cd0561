"""The one source of the published reference numbers the tests check against.

THE source is the in-repo copy ``tests/data/published.json``: a fresh clone (CI) has no
``../shared``, and a test must never pass or fail by which copy it happened to find. The
steering copy ``shared/reference/published.json`` beside the project (the nearest one above
the project root, or ``$FDPKIT_SHARED_REFERENCE``) is checked to be identical when it is
there (tests/test_reference_data.py): update both together.

Only the standard library, so that any test module may import it.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The reference data of the tests (the only file they read).
PUBLISHED = ROOT / "tests" / "data" / "published.json"


def shared_published() -> Path | None:
    """The steering copy, when there is one: ``$FDPKIT_SHARED_REFERENCE``, else the nearest
    ``shared/reference/published.json`` in a folder above the project root."""
    env = os.environ.get("FDPKIT_SHARED_REFERENCE")
    if env:
        return Path(env)
    for folder in ROOT.parents:
        candidate = folder / "shared" / "reference" / "published.json"
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=1)
def _load_text() -> str:
    return PUBLISHED.read_text(encoding="utf-8")


def load_published() -> dict:
    """A fresh copy of the reference numbers (tests may not change each other's data)."""
    return json.loads(_load_text())
