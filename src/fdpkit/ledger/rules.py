"""The ledger's input rules: its errors, limits on ids and texts, URL-safe dataset names,
ordered thresholds (plain functions; no database)."""

from __future__ import annotations

import re
from typing import Any

from fdpkit.ledger.models import LEVELS
from fdpkit.ledger.totals import ThresholdSpec
from fdpkit.vocabulary import LEDGER_RELATIONS

#: The relations a dataset may declare (:data:`fdpkit.vocabulary.LEDGER_RELATIONS`; the old
#: spelling "add-or-remove" is read as "add-remove").
RELATIONS = LEDGER_RELATIONS


class LedgerError(ValueError):
    """Bad input or a forbidden state change; nothing was written."""


class NotFound(LedgerError):
    """An unknown dataset, release or user."""


#: Largest row id (the id columns are SQL INTEGER: 2**31 - 1 on PostgreSQL); larger ids
#: name no row (NotFound, HTTP 404) instead of overflowing the database's integer.
MAX_ID = 2**31 - 1
#: Longest texts (characters): names, titles and free text; NUL is refused everywhere
#: (PostgreSQL cannot store it).
MAX_NAME, MAX_TITLE, MAX_TEXT = 200, 300, 5000
#: Dataset names a URL can address as one path segment: a letter or digit, then letters,
#: digits, ``.``, ``_``, ``-`` (so never ``.``, ``..``, ``a/b``, spaces or ``%``).
DATASET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
#: Event kind of a dataset's governance settings (four-eyes); the newest one holds.
SETTING_EVENT = "dataset.setting"


def _text(name: str, value: Any, *, required: bool = True, limit: int = MAX_NAME) -> str:
    """``value`` stripped; LedgerError naming ``name`` when it is not a text, is empty (and
    ``required``), holds NUL or is longer than ``limit`` characters."""
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        what = "a non-empty text" if required else "a text"
        raise LedgerError(f"{name} must be {what}, got {str(value)[:80]!r}")
    if "\x00" in value:
        raise LedgerError(f"{name} must not contain NUL characters")
    if len(value) > limit:
        raise LedgerError(f"{name} must have at most {limit} characters, got {len(value)}")
    return value.strip()


def _check_order(spec: ThresholdSpec, others: list[ThresholdSpec]) -> None:
    """Thresholds of one metric (at the same delta / FPR) must be ordered
    notice <= warning <= hard; LedgerError naming ``value`` otherwise."""
    rank = {lv: i for i, lv in enumerate(LEVELS)}
    for o in others:
        if (o.delta, o.fpr) != (spec.delta, spec.fpr):
            continue
        lo, hi = (o, spec) if rank[o.level] < rank[spec.level] else (spec, o)
        if lo.value > hi.value:
            raise LedgerError(f"value {spec.value:g} would put the {lo.level} threshold ({lo.value:g}) above the "
                              f"{hi.level} threshold ({hi.value:g}) on {spec.metric}: thresholds must be ordered "
                              "notice <= warning <= hard")
