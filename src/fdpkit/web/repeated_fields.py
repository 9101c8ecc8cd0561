"""Form fields (and a page link's query fields) given more than once: ``sigma=1&sigma=0.01``.

Starlette's form keeps every value and ``form.get`` answers the LAST, so a form posted with a
field twice was answered for the last value (the JSON bodies refuse a key named twice:
:mod:`fdpkit.web.json_numbers`). Every form is read through :class:`CheckedRequest`'s form
reader (all routers use ``CheckedJSONRoute``), which finds the repeated fields in one place:

- on the calculator's pages (:data:`FORM_PAGES`, which compute nothing when a field is wrong
  and write nothing), each repeated field is refused beside the field, the other fields kept:
  :class:`fdpkit.web.common.FormErrors` and :func:`fdpkit.web.forms.parse_form` start with
  :func:`refused`; should a page answer such a POSTed form with a success anyway, the route answers 422;
- the ledger's HTML forms read theirs with :func:`fdpkit.web.json_numbers.read_form`, which
  hands them the repeated fields, and show each beside its field (the other fields kept, 422)
  before any work or write; a repeated ``csrf_token`` is refused as the form is read;
- on every other route (downloads, the multipart API, a ledger form that does not read
  them), the form is refused as it is read, before any work or write: :class:`RepeatedField`
  (422, the message naming the field).

A refused field shows every value sent, joined (:func:`sent_text`), not the last one; a
password or token (:data:`SECRET`) is never quoted back.

The one repetition a form makes on purpose is kept: a hidden ``"off"`` followed by a ticked
box's value (an unticked box sends nothing), as the plan page's yes/no fields do.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Iterable
from urllib.parse import parse_qsl

from starlette.exceptions import HTTPException

from fdpkit.errors import ParameterError

#: The pages whose forms show each error beside its field (GET with a permalink's query, POST).
FORM_PAGES = frozenset({"/calculator", "/report", "/calibrate", "/convert", "/compare", "/risk", "/plan",
                        "/sweep", "/audit"})

#: The current request's repeated fields {field: message} on a FORM_PAGES route; None elsewhere.
_RECORD: ContextVar[dict[str, str] | None] = ContextVar("fdpkit_repeated_fields", default=None)
#: What the page shows in each of those fields {field: :func:`sent_text`}.
_SENT: ContextVar[dict[str, str] | None] = ContextVar("fdpkit_repeated_sent", default=None)


class RepeatedField(ParameterError, HTTPException):
    """A form naming one field more than once (422). Also an HTTPException, so that FastAPI's
    own form reading (``Form()`` parameters) passes it on rather than answering 400."""

    def __init__(self, message: str, parameter: str | None = None,
                 parameters: tuple[str, ...] | None = None) -> None:
        ParameterError.__init__(self, message, parameter, parameters)
        HTTPException.__init__(self, 422, message)

    def __str__(self) -> str:
        return str(self.detail)


#: Fields whose values a message or a page never repeats (a password typed twice is not shown back).
SECRET = frozenset({"password", "password_repeat", "setup_token", "csrf_token"})


def _shown(value: Any) -> str:
    """One value as the message quotes it (an upload by its file name)."""
    text = str(getattr(value, "filename", None) or value) if not isinstance(value, str) else value
    return repr(text if len(text) <= 30 else text[:27] + "...")


def _given(items: Iterable[tuple[str, Any]]) -> dict[str, list[Any]]:
    """{field: its values} for every field that ``items`` gives more than once, except a
    hidden ``"off"`` followed by one box's value."""
    seen: dict[str, list[Any]] = {}
    for name, value in items:
        seen.setdefault(name, []).append(value)
    return {name: values for name, values in seen.items()
            if len(values) >= 2 and not (len(values) == 2 and values[0] == "off")}


def _message(name: str, values: list[Any]) -> str:
    times = "twice" if len(values) == 2 else f"{len(values)} times"
    if name in SECRET:
        return f"{name[:40].replace('_', ' ')} is given {times}: send it once"
    shown = ", ".join(_shown(v) for v in values[:3]) + (", ..." if len(values) > 3 else "")
    return f"{name[:40].replace('_', ' ')} is given {times} ({shown}): send it once"


def sent_text(name: str, values: list[Any]) -> str:
    """What a page shows in a refused field: every value sent, joined by ", " (the last alone
    would look like an accepted input and hide why it was refused); nothing for a secret.

    >>> sent_text("sigma", ["1", "0.01"])
    '1, 0.01'
    """
    if name in SECRET:
        return ""
    text = ", ".join(str(getattr(v, "filename", None) or v) if not isinstance(v, str) else v for v in values)
    return text if len(text) <= 200 else text[:197] + "..."


def repeated(items: Iterable[tuple[str, Any]]) -> dict[str, str]:
    """{field: message} for every field that ``items`` (a form's or a query's pairs) gives
    more than once, except a hidden ``"off"`` followed by one box's value. A secret field's
    values (:data:`SECRET`) are not quoted.

    >>> repeated([("sigma", "1"), ("delta", "1e-5"), ("sigma", "0.01")])
    {'sigma': "sigma is given twice ('1', '0.01'): send it once"}
    >>> repeated([("high_confidence_ok", "off"), ("high_confidence_ok", "on")])
    {}
    >>> repeated([("password", "a"), ("password", "b")])
    {'password': 'password is given twice: send it once'}
    """
    return {name: _message(name, values) for name, values in _given(items).items()}


def sent(items: Iterable[tuple[str, Any]]) -> dict[str, str]:
    """{field: :func:`sent_text`} for the fields that ``items`` gives more than once."""
    return {name: sent_text(name, values) for name, values in _given(items).items()}


def first_value(form: Any, name: str, default: str) -> str:
    """The FIRST value of ``name`` in ``form`` (a form or a query), ``default`` when blank or
    absent: what a page reads a choice that picks its form by (the audit's mode, the sweep's
    task), so that a choice given twice, refused beside it, shows and checks the first value's
    fields as its radio or select shows it (``form.get`` answers the last: the audit checked
    no radio and said the last mode's errors, the sweep's map form said the design form's).

    >>> from starlette.datastructures import QueryParams
    >>> first_value(QueryParams("task=map&task=design"), "task", "map"), first_value({}, "task", "map")
    ('map', 'map')
    """
    sent = form.getlist(name) if hasattr(form, "getlist") else [form.get(name)]
    return str(sent[0] or default) if sent else default


def refused() -> dict[str, str]:
    """The current form page's repeated fields {field: message} (empty when none)."""
    return dict(_RECORD.get() or {})


def shown_values(values: dict) -> dict:
    """A form page's ``values`` with each refused field showing every value sent
    (:func:`sent_text`), not the last one that the form reader answers."""
    shown = _SENT.get()
    return {**values, **shown} if shown else values


def start(path: str, method: str, query_string: bytes) -> tuple[Any, dict[str, str] | None]:
    """Begin a request on the route ``path``: on a FORM_PAGES route, a record (holding the
    repeated fields of its query on GET); elsewhere None. Returns (token for :func:`finish`, record)."""
    if path not in FORM_PAGES:
        return (_RECORD.set(None), _SENT.set(None)), None
    record: dict[str, str] = {}
    shown: dict[str, str] = {}
    if method in ("GET", "HEAD") and query_string:
        pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
        record.update(repeated(pairs))
        shown.update(sent(pairs))
    return (_RECORD.set(record), _SENT.set(shown)), record


def finish(token: Any) -> None:
    """End the request begun by :func:`start`."""
    _RECORD.reset(token[0])
    _SENT.reset(token[1])


def check_form(items: Iterable[tuple[str, Any]]) -> None:
    """A form just read: its repeated fields recorded (a FORM_PAGES route shows them beside the
    fields), or refused at once with :class:`RepeatedField` (every other route)."""
    items = list(items)
    found = repeated(items)
    if not found:
        return
    record, shown = _RECORD.get(), _SENT.get()
    if record is not None:
        record.update(found)
        if shown is not None:
            shown.update(sent(items))
        return
    name, message = next(iter(found.items()))
    raise RepeatedField(message, name)


def answered_anyway(record: dict[str, str] | None, status: int, method: str = "POST") -> RepeatedField | None:
    """The refusal to answer with when a page answered a POSTed form with repeated fields as a
    success (a page that did not read its errors first); None when it refused them. (A link's
    repeated query field that the page did not read, ``/calculator?utm=a&utm=b``, is left alone.)"""
    if not record or status >= 400 or method in ("GET", "HEAD"):
        return None
    name, message = next(iter(record.items()))
    return RepeatedField(message, name)


def placed(found: dict[str, str], fields: Iterable[str], top: str) -> dict[str, str]:
    """A form's repeated fields {field: message} as the errors its page shows: beside each of
    ``fields`` (those the form shows an error beside), the others (hidden fields, fields the
    form does not have) joined under ``top``, the form's own error above it.

    >>> placed({"title": "t twice", "next": "n twice", "x": "x twice"}, ("title",), "form")
    {'title': 't twice', 'form': 'n twice; x twice'}
    """
    shown = set(fields)
    out = {name: message for name, message in found.items() if name in shown}
    rest = [message for name, message in found.items() if name not in shown]
    if rest:
        out[top] = "; ".join(rest)
    return out
