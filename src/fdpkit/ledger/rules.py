"""The ledger's input rules: its errors, limits on ids and texts, URL-safe dataset names,
ordered thresholds (plain functions; no database)."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from typing import Any, Iterable

from fdpkit.ledger.models import LEVELS
from fdpkit.ledger.totals import ThresholdSpec
from fdpkit.mechanisms import mechanism_from_dict
from fdpkit.vocabulary import ADD_REMOVE, LEDGER_RELATIONS, RELATION_ALIASES, REPLACE_ONE, ZERO_OUT

#: The relations a dataset may declare (:data:`fdpkit.vocabulary.LEDGER_RELATIONS`; the old
#: spelling "add-or-remove" is read as "add-remove").
RELATIONS = LEDGER_RELATIONS


class LedgerError(ValueError):
    """Bad input or a forbidden state change; nothing was written."""


class RelationMismatch(LedgerError):
    """A release accounted under another neighbouring relation than its dataset declares
    (``parameter`` is ``"relation"``, as :class:`fdpkit.errors.ParameterError`'s)."""

    parameter = "relation"


class NeedsSecondPerson(LedgerError):
    """One person's change lifts a hard limit under four-eyes: it needs a second person (an
    ``approver`` named with it, or a lift request that another person approves)."""


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


def _text(name: str, value: Any, *, required: bool = True, limit: int = MAX_NAME, controls: bool = True) -> str:
    """``value`` stripped; LedgerError naming ``name`` when it is not a text, is empty (and
    ``required``), holds NUL, is longer than ``limit`` characters or (with ``controls``) holds a
    text-direction control or a control character other than tab and line breaks."""
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        what = "a non-empty text" if required else "a text"
        raise LedgerError(f"{name} must be {what}, got {str(value)[:80]!r}")
    if "\x00" in value:
        raise LedgerError(f"{name} must not contain NUL characters")
    if len(value) > limit:
        raise LedgerError(f"{name} must have at most {limit} characters, got {len(value)}")
    hidden = next((c for c in value if c in _BIDI_CONTROLS or (unicodedata.category(c) == "Cc" and c not in "\t\n\r")),
                  None) if controls else None
    if hidden is not None:  # U+202E shows "reason: ok" for "ko :nosaer" in the CLI, the web and the PDF record
        raise LedgerError(f"{name} must not contain control characters or text-direction overrides "
                          f"(U+{ord(hidden):04X}), got {value[:80]!r}")
    return value.strip()


#: Unicode's explicit text-direction controls (embeddings, overrides, isolates): text holding
#: one reads in another order than it is stored ("Trojan source", CVE-2021-42574).
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _line(name: str, value: Any, *, limit: int = MAX_NAME) -> str:
    """A one-line text (a release's ``title``, a dataset's ``unit``): :func:`_text` without
    line breaks or tabs, so that tables, the event log and the records show one line (a title
    "Q3\n  42  census  released" read as further rows of ``fdpkit ledger history``)."""
    text = _text(name, value, limit=limit)
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text):
        raise LedgerError(f"{name} must be one line of text, got {text[:80]!r}")
    return text



def _person(name: str, value: Any) -> str:
    """A person's name (``user``, ``approver``): :func:`_text`, and one line of printable
    characters, so that the event chain, the CLI's tables and the web pages show the name that
    was given (an approver "a\nb" read as two lines; a zero-width space made "bob" and "bo\u200bb"
    look alike beside the four-eyes check)."""
    text = _text(name, value, controls=False)  # the stricter rule below, in its own words
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in text):
        raise LedgerError(f"{name} must be one line of printable characters, got {text[:80]!r}")
    return text

def _check_order(spec: ThresholdSpec, others: list[ThresholdSpec]) -> None:
    """Thresholds of one metric (at the same delta / FPR) must be ordered
    notice <= warning <= hard; LedgerError naming ``value`` otherwise."""
    rank = {lv: i for i, lv in enumerate(LEVELS)}
    for o in others:
        if (o.delta, o.fpr) != (spec.delta, spec.fpr):
            continue
        lo, hi = (o, spec) if rank[o.level] < rank[spec.level] else (spec, o)
        if lo.value > hi.value:
            todo = (f"lower (or remove) the {o.level} threshold to at most {spec.value:g} first" if o is lo else
                    f"choose a value of at most {o.value:g}, or raise the {o.level} threshold first")
            raise LedgerError(f"value {spec.value:g} would put the {lo.level} threshold ({lo.value:g}) above the "
                              f"{hi.level} threshold ({hi.value:g}) on {spec.metric}: thresholds must be ordered "
                              f"notice <= warning <= hard; {todo}")


#: The releases' relations whose guarantee is one of the dataset's declared relation: a
#: dataset that hides membership (add-remove) takes add-remove runs and zero-out runs (the
#: add-remove analogue for shuffled and fixed-size batches: the unit's gradient replaced by zero); one that hides a
#: record's content (replace-one) takes replace-one runs. A replace-one guarantee bounds no
#: add/remove pair, and an add-remove one bounds a replacement only as a group of two.
COVERED = {ADD_REMOVE: (ADD_REMOVE, ZERO_OUT), REPLACE_ONE: (REPLACE_ONE,)}
_ADVICE = {ADD_REMOVE: "account the run with relation zero-out (shuffled or fixed-size batches) or add-remove "
                       "(Poisson sampling)",
           REPLACE_ONE: "account the run with relation replace-one (it hides a record's content; about twice "
                        "the mu of zero-out)"}


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def release_relations(mechanism: Any) -> list[str]:
    """The neighbouring relations a mechanism was accounted under (its DP-SGD runs'; the
    parts of a composition and the inner mechanism of a repetition or subsampling included).
    Noise mechanisms state none: their sensitivity is taken under the dataset's relation."""
    found: list[str] = []
    stack = [mechanism]
    while stack:
        m = stack.pop()
        rel = getattr(m, "relation", None)
        if isinstance(rel, str):
            found.append(rel)
        inner = getattr(m, "inner", None)
        if inner is not None:
            stack.append(inner)
        stack.extend(getattr(m, "parts", ()) or ())
    return found


def check_relation(dataset: str, declared: str, mechanism: Any) -> None:
    """:class:`RelationMismatch` when ``mechanism`` was accounted under a relation whose
    guarantee is not one of ``declared`` (see :data:`COVERED`): composing it into the
    dataset's total would state a budget for pairs of datasets it does not bound."""
    for rel in release_relations(mechanism):
        if rel not in COVERED.get(declared, (declared,)):
            raise RelationMismatch(
                f"relation {rel} does not fit dataset {dataset}, which declares {declared}: {_article(rel)} {rel} guarantee "
                f"does not bound its budget; {_ADVICE.get(declared, 'account it under ' + declared)}")


@functools.lru_cache(maxsize=4096)
def _spec_relations(spec: str) -> tuple[str, ...]:
    if '"relation"' not in spec:  # noise mechanisms state none: no parsing
        return ()
    try:
        return tuple(release_relations(mechanism_from_dict(json.loads(spec))))
    except (ValueError, TypeError, KeyError):  # a spec this version cannot read: the chain check names it
        return ()


def relation_notes(dataset: str, declared: str, released: Iterable[tuple[int, str]]) -> list[str]:
    """One line per released release (``(id, spec)`` pairs) accounted under a relation that
    ``declared`` does not cover (:data:`COVERED`): such a release was released before
    :func:`check_relation` existed (an older fdpkit wrote it; the append-only chain keeps it)
    and is still counted in the dataset's total, whose figures then may not bound the
    declared relation."""
    declared = RELATION_ALIASES.get(declared, declared)
    out = []
    for rid, spec in released:
        rels = [r for r in dict.fromkeys(_spec_relations(spec)) if r not in COVERED.get(declared, (declared,))]
        if rels:
            out.append(f"release {rid} was accounted under relation {', '.join(rels)} while dataset {dataset} "
                       f"declares {declared}: its figure may not bound {declared}, and the total counts it "
                       "(released before fdpkit refused such releases)")
    return out
