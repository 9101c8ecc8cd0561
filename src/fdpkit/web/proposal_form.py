"""The proposal form's mechanism fields: the report form's DP-SGD fields (noise multiplier,
sample rate OR batch size + dataset size, steps OR epochs, sampling scheme, relation) and
the simple noise mechanisms (Gaussian or Laplace with their sensitivity, repeated), as an
alternative to a JSON spec. The spec is built by the library (``dpsgd_from_training``,
``Gaussian``, ``Laplace``, ``Repeated`` and their ``to_dict``), never here; every error
comes back at once, keyed by field, in the labels' words. No maths here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fdpkit.mechanisms import Gaussian, Laplace, Mechanism, Repeated, dpsgd_from_training
from fdpkit.mechanisms.training import RELATIONS, SAMPLINGS
from fdpkit.web.common import FormErrors, parse_float, parse_int

#: The DP-SGD setting's choices as the report form offers them (first: default).
CHOICES = {"sampling": SAMPLINGS, "relation": RELATIONS}

#: How the proposal's mechanism is given (the ``build`` radio).
BUILDS = ("dpsgd", "gaussian", "laplace", "json")

#: Field -> the label the form shows (errors use these words).
LABELS = {
    "noise_multiplier": "Noise multiplier σ", "sample_rate": "Sample rate q", "batch_size": "Batch size",
    "dataset_size": "Dataset size", "steps": "Steps", "epochs": "Epochs", "sampling": "Sampling scheme",
    "relation": "Neighbouring relation", "drop_last": "Dropped last batch",
    "noise_scale": "Noise scale", "sensitivity": "Sensitivity", "times": "Releases",
}
DPSGD_FIELDS = ("noise_multiplier", "sample_rate", "batch_size", "dataset_size", "steps", "epochs", "sampling",
                "relation", "drop_last")
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


def _given(form: Any, name: str) -> bool:
    return str(form.get(name) or "").strip() != ""


def _dpsgd(form: Any, errors: FormErrors) -> Mechanism | None:
    _required(form, "noise_multiplier", errors)
    nm = parse_float(form, "noise_multiplier", errors, required=False)
    q = parse_float(form, "sample_rate", errors, required=False)
    b = parse_int(form, "batch_size", errors, required=False)
    n = parse_int(form, "dataset_size", errors, required=False)
    t = parse_int(form, "steps", errors, required=False)
    e = parse_float(form, "epochs", errors, required=False)
    rate, batch = _given(form, "sample_rate"), _given(form, "batch_size") or _given(form, "dataset_size")
    if rate and batch:
        msg = "give the sample rate q, or the batch size and dataset size, not both: keep the one your run used"
        for f in ("sample_rate", "batch_size"):
            errors.setdefault(f, msg)
    elif not rate and not batch:
        errors.setdefault("sample_rate", "Sample rate q is required, or give the batch size and dataset size")
    elif batch:
        for f in ("batch_size", "dataset_size"):
            if not _given(form, f):
                errors.setdefault(f, f"{LABELS[f]} is required with the {LABELS['batch_size' if f == 'dataset_size' else 'dataset_size'].lower()}")
    if _given(form, "steps") and _given(form, "epochs"):
        for f in ("steps", "epochs"):
            errors.setdefault(f, "give the steps or the epochs, not both")
    elif not _given(form, "steps") and not _given(form, "epochs"):
        errors.setdefault("steps", "Steps are required, or give the epochs")
    if _given(form, "epochs") and not (_given(form, "batch_size") or _given(form, "dataset_size")) and rate:
        errors.setdefault("epochs", "Epochs need the batch size and dataset size (or give the steps)")
    opts = {}
    for c in ("sampling", "relation"):
        v = str(form.get(c) or CHOICES[c][0])
        if v not in CHOICES[c]:
            errors[c] = f"{LABELS[c]} must be one of {', '.join(CHOICES[c])}, got {v!r}"
        opts[c] = v
    if errors:
        return None
    try:
        return dpsgd_from_training(nm, sample_rate=q, batch_size=b, dataset_size=n, steps=t, epochs=e,
                                   drop_last=form.get("drop_last") in ("on", "true", "1"), **opts)
    except ValueError as exc:
        errors[_field_of(exc, DPSGD_FIELDS)] = in_labels(str(exc))
        return None


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


__all__ = ["BUILDS", "LABELS", "form_values", "in_labels", "spec_from_fields"]
