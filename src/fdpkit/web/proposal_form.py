"""The proposal forms' mechanism fields (/ledger/propose and a dataset page's own): the report
form's DP-SGD fields (noise multiplier, sample rate OR batch size + dataset size, steps OR
epochs, sampling scheme, relation, max batch size, privacy unit, examples per user), read by
the report form's own code (:func:`fdpkit.web.forms.dpsgd_from_form`), and
the simple noise mechanisms (Gaussian or Laplace with their sensitivity, repeated), as an
alternative to a JSON spec. The spec is built by the library (``dpsgd_from_training``,
``Gaussian``, ``Laplace``, ``Repeated`` and their ``to_dict``), never here; every error
comes back at once, keyed by field, in the labels' words. No maths here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fdpkit.mechanisms import Gaussian, Laplace, Mechanism, Repeated
from fdpkit.web.common import CHOICES, FormErrors, parse_float, parse_int  # noqa: F401  (CHOICES: the proposal forms' choices)
from fdpkit.web.forms import dpsgd_from_form

#: How the proposal's mechanism is given (the ``build`` radio).
BUILDS = ("dpsgd", "gaussian", "laplace", "json")

#: Field -> the label the form shows (errors use these words).
LABELS = {
    "noise_multiplier": "Noise multiplier σ", "sample_rate": "Sample rate q", "batch_size": "Batch size",
    "dataset_size": "Dataset size", "steps": "Steps", "epochs": "Epochs", "sampling": "Sampling scheme",
    "relation": "Neighbouring relation", "drop_last": "Dropped last batch", "max_batch_size": "Max batch size",
    "unit": "Privacy unit", "examples_per_user": "Examples per user",
    "noise_scale": "Noise scale", "sensitivity": "Sensitivity", "times": "Releases",
}
DPSGD_FIELDS = ("noise_multiplier", "sample_rate", "batch_size", "dataset_size", "steps", "epochs", "sampling",
                "relation", "max_batch_size", "unit", "examples_per_user", "drop_last")
NOISE_FIELDS = ("noise_scale", "sensitivity", "times")
#: The library's parameter names that the form calls otherwise.
_ALIASES = {"sigma": "noise_scale", "scale": "noise_scale", "mu": "noise_scale"}


def in_labels(message: str) -> str:
    """``message`` with the code words of the form's fields (``sample_rate``) in the labels'
    words ("Sample rate q"), the first letter capitalised."""
    out = re.sub(r"(?<![\w-])(" + "|".join(sorted((k for k in LABELS if "_" in k), key=len, reverse=True))
                 + r")(?![\w-])", lambda m: LABELS[m.group(1)], str(message))
    first = out.split(" ", 1)[0]
    if first in LABELS:
        out = LABELS[first] + out[len(first):]
    return out[:1].upper() + out[1:]


def _field_of(exc: BaseException, names: tuple[str, ...]) -> str:
    """The field a library error belongs to: its ``parameter`` (``ParameterError``) when the
    form has it, else the first word of its message, else the whole form."""
    for p in (getattr(exc, "parameter", None), str(exc).split(" ", 1)[0]):
        p = _ALIASES.get(p, p)
        if p in names:
            return p
    return "form"


def _required(form: Any, name: str, errors: FormErrors) -> None:
    if str(form.get(name) or "").strip() == "":
        errors[name] = f"{LABELS[name]} is required"


def _dpsgd(form: Any, errors: FormErrors) -> Mechanism | None:
    """The report form's DP-SGD fields, read by the same code as the report form
    (:func:`fdpkit.web.forms.dpsgd_from_form`: one schema, every error at once)."""
    mech, _, found = dpsgd_from_form(form, LABELS)
    errors.update(found)
    return mech


def _noise(form: Any, errors: FormErrors, kind: str) -> Mechanism | None:
    _required(form, "noise_scale", errors)
    scale = parse_float(form, "noise_scale", errors, required=False)
    sens = parse_float(form, "sensitivity", errors, default=1.0)
    times = parse_int(form, "times", errors, default=1)
    if errors:
        return None
    try:
        m: Mechanism = Gaussian(scale, sensitivity=sens) if kind == "gaussian" else Laplace(scale, sensitivity=sens)
        return m if times == 1 else Repeated(m, times)
    except ValueError as exc:
        errors[_field_of(exc, NOISE_FIELDS)] = in_labels(str(exc))
        return None


def spec_from_fields(form: Any) -> tuple[str | None, FormErrors]:
    """The JSON mechanism spec the form's fields describe (``build`` picks DP-SGD, Gaussian,
    Laplace or the JSON text itself), and the errors by field (all at once; empty when the
    spec was built). The spec is the library's ``to_dict()`` of the mechanism."""
    errors = FormErrors()
    build = str(form.get("build") or "json")
    if build not in BUILDS:
        errors["build"] = f"choose how the mechanism is given: {', '.join(BUILDS)}, got {build!r}"
        return None, errors
    if build == "json":
        return str(form.get("mechanism") or ""), errors
    for f in (*DPSGD_FIELDS, *NOISE_FIELDS):  # refuse what no person types before any parsing
        if len(str(form.get(f) or "")) > 100:
            errors[f] = f"{LABELS[f]} is too long"
    if errors:
        return None, errors
    m = _dpsgd(form, errors) if build == "dpsgd" else _noise(form, errors, build)
    for f, msg in errors.items():  # sentences, as the labels start them
        errors[f] = msg[:1].upper() + msg[1:]
    return (None if m is None else json.dumps(m.to_dict())), errors


def form_values(form: Any) -> dict[str, str]:
    """The fields' raw text, to show the form again as it was typed."""
    return {k: str(form.get(k) or "")[:200] for k in ("build", *DPSGD_FIELDS, *NOISE_FIELDS)}


#: The proposal forms' fields that show an error beside them (a repeated one is refused there;
#: any other, hidden or unknown, atop the form).
BESIDE = ("title", "purpose", "dataset", "mechanism", "build", *(f for f in DPSGD_FIELDS if f != "drop_last"),
          *NOISE_FIELDS)


def twice_values(form: Any, shown: dict[str, str]) -> dict[str, str]:
    """What the refused repeated fields show (:func:`fdpkit.web.repeated_fields.sent`): every
    value sent, except the ``build`` radio, which keeps the first (it decides which fields show)."""
    out = dict(shown)
    if "build" in out:
        out["build"] = str(form.getlist("build")[0])
    return out


__all__ = ["BESIDE", "BUILDS", "LABELS", "form_values", "in_labels", "spec_from_fields", "twice_values"]
