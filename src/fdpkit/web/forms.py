"""One pydantic schema per form, for HTML forms and JSON alike; errors in the form's words.

- :func:`parse_form` reads an HTML form through the SAME pydantic model as the JSON API
  (``models.py``): blank fields are absent, "5%" is 0.05 in probability fields, and every
  field error comes back at once, keyed by field, in the label's words ("Sample rate q must
  be at most 1"), not in code words.
- :func:`conflicts` reports every pair of inputs that exclude each other (sample rate or
  batch size; steps or epochs; ...) at once, on both fields, with one sentence saying what
  to keep; the pages' script clears the other field as the user types one.
- :func:`field_of` maps a library error to its field by the exception's ``parameter``
  (:class:`fdpkit.ParameterError`), and :func:`in_words` rewrites its message with the
  form's labels.

No maths here: the limits are the models' (which take them from the library).
"""

from __future__ import annotations

import json

import math
import re
from typing import Any, Iterable

from pydantic import BaseModel, ValidationError

from fdpkit.errors import parameter_of
from fdpkit._inputs import FRACTION_FIELDS, beyond_floats, is_plain_number, parse_fraction
from fdpkit.mechanisms import Mechanism, dpsgd_from_training
from fdpkit.web.models import DPSGDRequest
from fdpkit.web.repeated_fields import refused

#: The spaces taken from around a typed value (ASCII only: "\u00a01" is not the number 1).
ASCII_SPACE = " \t\r\n"


def labels_of(schema: type[BaseModel]) -> dict[str, str]:
    """Field name -> the label the form shows (the field's ``title``; else the name in words)."""
    return {name: (f.title or name.replace("_", " ")) for name, f in schema.model_fields.items()}


def in_words(message: str, labels: dict[str, str]) -> str:
    """``message`` with the code words of its fields replaced by the form's labels, in one
    pass: ``relation='replace-one'`` -> "Neighbouring relation replace-one", ``sample_rate``
    -> "Sample rate q" anywhere, a plain word (``steps``) only where it starts the message;
    the first letter capitalised.

    >>> in_words("give sample_rate or batch_size; relation='zero-out'",
    ...          {"sample_rate": "Sample rate q", "batch_size": "Batch size", "relation": "Relation"})
    'Give Sample rate q or Batch size; Relation zero-out'
    """
    names = sorted(labels, key=len, reverse=True)
    if not names:
        return message
    alternation = "|".join(re.escape(n) for n in names)
    assigned = re.compile(rf"(?<![\w-])({alternation})\s*=\s*(?:'([^']*)'|\"([^\"]*)\"|([\w.+-]+))")
    out = assigned.sub(lambda m: f"{labels[m.group(1)]} {m.group(2) or m.group(3) or m.group(4) or ''}", str(message))
    snake = [n for n in names if "_" in n]
    if snake:
        out = re.sub(rf"(?<![\w-])({'|'.join(re.escape(n) for n in snake)})(?![\w-])",
                     lambda m: labels[m.group(1)], out)
    first = re.match(rf"({alternation})(?![\w-])", out)
    if first:
        out = labels[first.group(1)] + out[first.end():]
    return out[:1].upper() + out[1:] if out else out


def field_of(error: BaseException | str, names: Iterable[str], default: str = "form") -> str:
    """The form field a library error belongs to: its ``parameter`` (or the first of its
    ``parameters``) when the form has that field, else ``default``. (A plain ValueError
    from code not yet raising :class:`fdpkit.ParameterError` falls back to the first word
    of its message.)"""
    names = tuple(names)
    if isinstance(error, BaseException):
        for p in (parameter_of(error), *getattr(error, "parameters", ())):
            if p in names:
                return p
        if parameter_of(error) is not None:
            return default
        error = str(error)
    first = str(error).split(" ", 1)[0]
    return first if first in names else default


def _whole(text: str) -> str:
    """``text`` as a whole number's digits when it is one ("2e3" -> "2000"), else unchanged
    (text that is not a plain decimal number, "١٢" or "1_000", is left for the model to refuse)."""
    if not is_plain_number(text) or beyond_floats(text) is not None:  # "1e-400" is not "0": the model refuses it
        return text
    try:
        v = float(text)
        if math.isfinite(v) and v == int(v):
            return str(int(v))
    except ValueError:
        pass
    return text


_NUMBER_TYPES = {"float_parsing", "int_parsing", "float_type", "int_type", "finite_number", "int_from_float"}


def _message(err: dict, label: str) -> str:
    """A pydantic error in the label's words."""
    kind, ctx, given = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    got = f", got {given!r}" if isinstance(given, (str, int, float)) and not isinstance(given, bool) else ""
    if kind in _NUMBER_TYPES:
        whole = kind.startswith("int")
        return f"{label} must be a {'whole number' if whole else 'number'}{got}"
    bound = {k: (f"{v:g}" if isinstance(v, float) else v) for k, v in ctx.items()}
    if kind == "greater_than":
        return f"{label} must be > {bound.get('gt')}{got}"  # the library's wording
    if kind == "greater_than_equal":
        return f"{label} must be at least {bound.get('ge')}{got}"
    if kind == "less_than":
        return f"{label} must be < {bound.get('lt')}{got}"
    if kind == "less_than_equal":
        return f"{label} must be at most {bound.get('le')}{got}"
    if kind == "literal_error":
        return f"{label} must be one of {ctx.get('expected')}{got}"
    if kind == "missing":
        return f"{label} is required"
    if kind == "plain_number":
        return f"{label} {err.get('msg')}"
    return f"{label}: {err.get('msg')}"


def parse_form(schema: type[BaseModel], form: Any, *, fields: Iterable[str] | None = None,
               required: Iterable[str] = ()) -> tuple[BaseModel | None, dict[str, str]]:
    """Validate the HTML ``form`` with the JSON API's ``schema``.

    Only ``fields`` (default: all of the schema's) are read; a blank field is absent (the
    schema's default). Returns the model (None when any field is wrong) and every error at
    once, keyed by field, in the label's words; ``required`` fields that are blank are
    errors too, and so are pairs that exclude each other (:func:`conflicts`)."""
    names = tuple(fields) if fields is not None else tuple(schema.model_fields)
    labels = labels_of(schema)
    errors: dict[str, str] = {k: v for k, v in refused().items() if k in names}  # each given twice
    data: dict[str, Any] = {}
    for name in names:
        if name in errors:
            continue
        raw = form.get(name)
        if raw is None or (isinstance(raw, str) and raw.strip() == ""):
            if name in required:
                errors[name] = f"{labels.get(name, name)} is required"
            continue
        annotation = str(schema.model_fields[name].annotation)
        if annotation.startswith("list["):  # a list field: comma- (or semicolon-) separated numbers
            items = [t.strip(ASCII_SPACE) for t in str(raw).replace(";", ",").split(",") if t.strip(ASCII_SPACE)]
            if name in FRACTION_FIELDS:
                try:
                    items = [repr(parse_fraction(t, labels.get(name, name))) for t in items]
                except ValueError:
                    pass  # worded below, as a list
            if "int" in annotation and "float" not in annotation:  # "2e3" or "10.0" typed for a count
                items = [_whole(t) for t in items]
            data[name] = items
            continue
        if annotation.startswith("bool") or "bool" in annotation.split("[")[0]:
            data[name] = str(raw).lower() in ("on", "true", "1", "yes")
            continue
        text = str(raw).strip(ASCII_SPACE)  # a no-break space is not taken away (nor read as a number)
        if name in FRACTION_FIELDS and "list" not in annotation:  # "5%", and the hint when not a number
            try:
                text = repr(parse_fraction(text, labels.get(name, name)))
            except ValueError as exc:  # worded with the label already
                errors[name] = str(exc)
                continue
        if "int" in annotation and "float" not in annotation:  # "2e3" or "10.0" typed for a count
            text = _whole(text)
        data[name] = text
    for name, message in conflicts(data, labels).items():
        errors.setdefault(name, message)
    try:
        model = schema.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = err.get("loc") or ("form",)
            name = str(loc[0]) if str(loc[0]) in names else "form"
            label = labels.get(name, name)
            if isinstance(data.get(name), list) and (err.get("type") in _NUMBER_TYPES or len(loc) > 1):
                kind = "whole numbers" if str(err.get("type", "")).startswith("int") else "numbers"
                problem = _message(err, label) if err.get("type") not in _NUMBER_TYPES else ""
                errors.setdefault(name, problem.replace(label, f"{label}: each", 1) if problem else
                                  f"{label} must be comma-separated {kind}, got {form.get(name)!r}")
                continue
            if name in data and not isinstance(data[name], (list, bool)) and isinstance(form.get(name), str):
                # quoted as typed: "2" read as the fraction 2.0 was refused with "got '2.0'"
                err = {**err, "input": form.get(name).strip(ASCII_SPACE)}
            field = schema.model_fields.get(name)
            if err.get("type") == "missing" and field is not None and str(field.annotation).startswith("list["):
                errors.setdefault(name, f"{label} is required (comma-separated numbers)")
                continue
            errors.setdefault(name, _message(err, label))
        return None, errors
    return (None if errors else model), errors


#: Inputs that exclude each other: typing one clears the other (the pages' script), and
#: a form with both is answered with one sentence on each field, at once.
EXCLUSIVE = (("sample_rate", "batch_size"), ("steps", "epochs"), ("required_power", "max_relative_loss"))


#: {field: the fields (space-separated) that typing it clears}, for the pages' data-excludes.
EXCLUDES = {**{a: b for a, b in EXCLUSIVE}, **{b: a for a, b in EXCLUSIVE}}


def conflicts(data: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, str]:
    """Every exclusive pair of :data:`EXCLUSIVE` given together, as {field: message}, in
    the ``labels``' words."""
    labels = labels or {}
    out: dict[str, str] = {}
    for a, b in EXCLUSIVE:
        if data.get(a) not in (None, "") and data.get(b) not in (None, ""):
            message = f"Give {labels.get(a, a)} or {labels.get(b, b)}, not both: clear one of them"
            out[a] = out[b] = message
    return out


#: The DP-SGD run's fields, as the report form and the proposal forms show them (one schema:
#: :class:`fdpkit.web.models.DPSGDRequest`, whose titles are the labels).
DPSGD_FIELDS = ("noise_multiplier", "sample_rate", "batch_size", "dataset_size", "steps", "epochs", "sampling",
                "relation", "max_batch_size", "unit", "examples_per_user", "discretization", "drop_last")


def dpsgd_of(body: DPSGDRequest) -> Mechanism:
    """The DP-SGD mechanism of a request (form or JSON: the same schema), built by the library."""
    return dpsgd_from_training(body.noise_multiplier, sample_rate=body.sample_rate, batch_size=body.batch_size,
                               dataset_size=body.dataset_size, steps=body.steps, epochs=body.epochs,
                               sampling=body.sampling, relation=body.relation, max_batch_size=body.max_batch_size,
                               unit=body.unit, examples_per_user=body.examples_per_user, drop_last=body.drop_last)


def dpsgd_from_form(form: Any, labels: dict[str, str] | None = None,
                    ) -> tuple[Mechanism | None, float | None, dict[str, str]]:
    """The DP-SGD run an HTML form describes (the report form's fields, also on the proposal
    forms): (mechanism, discretization, errors), every error at once beside its field, in
    the ``labels``' words (default: the schema's titles); the mechanism is None on any error."""
    labels = {**labels_of(DPSGDRequest), **(labels or {})}
    body, found = parse_form(DPSGDRequest, form, fields=DPSGD_FIELDS, required=("noise_multiplier",))
    for one_of in (("sample_rate", "batch_size"), ("steps", "epochs")):
        if all(str(form.get(k) or "").strip() == "" for k in one_of):
            found.setdefault(one_of[0], f"Give {labels[one_of[0]]} or {labels[one_of[1]]}")
    if str(form.get("batch_size") or "").strip() and not str(form.get("dataset_size") or "").strip():
        found.setdefault("dataset_size", f"{labels['dataset_size']} is required with the "
                                         f"{labels['batch_size'].lower()}")
    if body is None or found:
        return None, None, found
    try:
        return dpsgd_of(body), body.discretization, {}  # type: ignore[arg-type]
    except ValueError as exc:
        return None, None, {field_of(exc, DPSGD_FIELDS): in_words(str(exc), labels)}


def report_query(spec: dict[str, Any], discretization: float | None = None) -> dict[str, str]:
    """The report form's fields for a one-phase DP-SGD spec (``DPSGD.to_dict()``): the query
    of a ``/report`` link that carries a run from another page without re-typing.

    Parameters
    ----------
    spec : dict
        A one-phase ``"dpsgd"`` spec; the batch size with the dataset size is carried in
        place of the sample rate, and the epochs in place of the steps, where the spec has them
        (the report derives the same run from them).
    discretization : float or None, optional
        The PLD discretization to report at (None: the library's rule).

    Returns
    -------
    dict of str to str
        ``{"kind": "dpsgd", "noise_multiplier": ..., ...}``, numbers in full precision.
    """
    def text(v: Any) -> str:
        return str(v) if isinstance(v, (bool, str)) else (str(int(v)) if float(v).is_integer() else repr(float(v)))

    q = {"kind": "dpsgd", "noise_multiplier": text(spec["noise_multiplier"])}
    by_batch = spec.get("batch_size") is not None and spec.get("dataset_size") is not None
    q.update({"batch_size": text(spec["batch_size"])} if by_batch else {"sample_rate": text(spec["sample_rate"])})
    q.update({"epochs": text(spec["epochs"])} if spec.get("epochs") is not None else {"steps": text(spec["steps"])})
    for k in ("dataset_size", "sampling", "relation", "max_batch_size", "unit", "examples_per_user"):
        if spec.get(k) is not None:
            q[k] = text(spec[k])
    if spec.get("drop_last"):
        q["drop_last"] = "on"
    if discretization is not None:
        q["discretization"] = text(discretization)
    return q


def report_link(spec: dict[str, Any]) -> str:
    """A ``/report`` link of any mechanism spec (a ledger release's): a one-phase DP-SGD run
    fills the DP-SGD form (:func:`report_query`), anything else the JSON spec form. The
    report is accounted at the library's rule, as ``fdpkit report`` does.

    >>> report_link({"kind": "gaussian", "sigma": 2.0})
    '/report?kind=mechanism&mechanism=%7B%22kind%22%3A+%22gaussian%22%2C+%22sigma%22%3A+2.0%7D'
    """
    from urllib.parse import urlencode

    if spec.get("kind") == "dpsgd" and spec.get("noise_multiplier") is not None and not spec.get("phases"):
        return "/report?" + urlencode(report_query(spec))
    return "/report?" + urlencode({"kind": "mechanism", "mechanism": json.dumps(spec)})

