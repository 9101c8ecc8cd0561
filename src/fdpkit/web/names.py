"""File names of downloads, made from the inputs that produced them
(``fdpkit-dpsgd-sigma9.4-q0.32768-T2000.pdf``, not ``fdpkit-report.pdf``). Text only."""

from __future__ import annotations

import re
from typing import Any

#: short names of the spec keys a file name quotes (others keep their own name)
_SHORT = {"noise_multiplier": "sigma", "sample_rate": "q", "steps": "T", "batch_size": "b", "dataset_size": "n",
          "epochs": "epochs", "times": "x", "sensitivity": "sens"}
#: spec keys left out of a name: the defaults and the derived values
_SKIP = {"kind", "unit", "participations"}
_DEFAULT_VALUES = {("sampling", "poisson"), ("relation", "add-remove"), ("sensitivity", 1.0), ("sensitivity", 1)}
#: longest stem (the extension comes on top)
MAX_STEM = 100


def _g(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) else str(x)


def _parts(spec: Any) -> list[str]:
    if not isinstance(spec, dict):
        return []
    out = [str(spec.get("kind", "mechanism"))]
    if spec.get("kind") == "dpsgd" and len(spec.get("phases", [])) == 0:
        fixed = spec.get("sampling") in ("shuffled", "fixed-size")
        if spec.get("sampling") not in (None, "poisson"):
            out.append(str(spec["sampling"]))
        if spec.get("relation") not in (None, "add-remove"):
            out.append(str(spec["relation"]))
        keys = (("noise_multiplier", "batch_size", "dataset_size", "steps") if fixed
                else ("noise_multiplier", "sample_rate", "steps"))
        out += [f"{_SHORT[k]}{_g(spec[k])}" for k in keys if spec.get(k) is not None]
        if spec.get("drop_last"):
            out.append("droplast")
        return out
    for key, value in spec.items():
        if key in _SKIP or (isinstance(value, (str, int, float)) and (key, value) in _DEFAULT_VALUES):
            continue
        if isinstance(value, dict):
            out += _parts(value)
        elif isinstance(value, list):
            out += [p for v in value[:4] for p in _parts(v)]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(f"{_SHORT.get(key, key)}{_g(value)}")
        elif isinstance(value, str):
            out.append(value)
    return out


def download_name(spec: Any, ext: str, what: str = "") -> str:
    """``fdpkit-<what>-<kind>-<parameters>.<ext>`` from a mechanism (or its spec, ``to_dict()``),
    safe as a file name: letters, digits, ``.``, ``_`` and ``-`` only, at most :data:`MAX_STEM`
    characters before the extension."""
    if hasattr(spec, "to_dict"):
        spec = spec.to_dict()
    return _file_name(["fdpkit", *([what] if what else []), *_parts(spec)], ext)


def _file_name(parts: list[str], ext: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(p for p in parts if p)).strip("._-") or "fdpkit"
    return f"{stem[:MAX_STEM].rstrip('._-')}.{ext}"


#: The audit settings' defaults, left out of a name.
_AUDIT_DEFAULTS = {"confidence": 0.95, "delta": 1e-5}


def audit_download_name(inputs: dict[str, Any], ext: str) -> str:
    """The file name of an audit's download from its ``inputs`` (what was audited, the
    certified ``mechanism`` if any, the settings that differ from the defaults):
    ``fdpkit-audit-counts-thresholds2-members1000-nonmembers1000-vs-gaussian-sigma1.pdf``.

    >>> audit_download_name({"kind": "scores", "members": 2000, "nonmembers": 2000,
    ...                      "digest": "sha256-0123abcd", "confidence": 0.99}, "json")
    'fdpkit-audit-scores-members2000-nonmembers2000-sha256-0123abcd-confidence0.99.json'
    """
    spec = {k: v for k, v in inputs.items() if not (k in _AUDIT_DEFAULTS and v == _AUDIT_DEFAULTS[k])}
    certified = spec.pop("mechanism", None)
    parts = _parts(spec) + (["vs", *_parts(certified)] if isinstance(certified, dict) else [])
    return _file_name(["fdpkit", "audit", *parts], ext)
