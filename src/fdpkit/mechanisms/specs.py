"""Mechanism specs: plain dicts and JSON -> mechanisms, for every registered kind.

:func:`mechanism_from_dict` dispatches on ``kind`` to the registered class's
:meth:`~fdpkit.mechanisms.Mechanism.from_dict` hook (so the base class never imports its
subclasses) and reads the JSON form of a dp_accounting ``DpEvent`` as well
(:func:`fdpkit.mechanisms.dp_events.from_dp_event`) and an Opacus accountant's state dict.
"""

from __future__ import annotations

from typing import Any

from fdpkit.errors import ParameterError
from fdpkit._inputs import load_json
from fdpkit.mechanisms.base import Mechanism, _from_dict
from fdpkit.mechanisms._opacus_state import state_history
from fdpkit.mechanisms.dp_events import from_dp_event
from fdpkit.mechanisms.training import dpsgd_from_opacus_history


def mechanism_from_dict(data: Any) -> Mechanism:
    """Rebuild a mechanism from :meth:`Mechanism.to_dict` output (or hand-written JSON, or
    the JSON form of a dp_accounting ``DpEvent``: see :func:`fdpkit.from_dp_event`, or a
    saved result that carries its mechanism: a report's JSON (``fdpkit report -f json``, the
    web report's JSON download), a calibration's or a plan's, whose ``"mechanism"`` is read), or
    an Opacus accountant's ``state_dict`` (``{"history": [...], "mechanism": "fdpkit"}``, as
    :func:`fdpkit.dpsgd_from_opacus_history` reads its history).

    Nesting deeper than :data:`fdpkit.mechanisms.base.MAX_SPEC_DEPTH` or more than
    :data:`fdpkit.mechanisms.base.MAX_SPEC_NODES` mechanisms are refused while parsing (a
    ValueError naming ``mechanism``).

    Examples
    --------
    >>> mechanism_from_dict({"kind": "gaussian", "sigma": 2.0}).describe()
    'Gaussian(sigma=2.0, sensitivity=1.0)'
    """
    if isinstance(data, dict) and "kind" not in data and "class_name" in data:  # a DpEvent's JSON
        return from_dp_event(data)
    if (isinstance(data, dict) and "kind" not in data and not isinstance(data.get("mechanism"), dict)
            and ("history" in data or "privacy_accountant_state_dict" in data)):
        # an Opacus accountant's state_dict (or a checkpoint's): its Poisson DP-SGD run (a run saved
        # from a non-Poisson loader is refused, as by fdpkit report dpsgd --opacus-history)
        return dpsgd_from_opacus_history(state_history(data, "mechanism"))
    if isinstance(data, dict) and "kind" not in data and isinstance(data.get("mechanism"), dict):
        data = data["mechanism"]  # a saved report, calibration or plan: the run it is about
    return _from_dict(data, 0, [0])


def mechanism_from_json(text: str) -> Mechanism:
    """Parse a JSON mechanism spec (see :func:`mechanism_from_dict`).

    Examples
    --------
    >>> mechanism_from_json('{"kind": "laplace", "scale": 0.5}').describe()
    'Laplace(scale=0.5, sensitivity=1.0)'
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise ParameterError(f"text must be a JSON string, got {type(text).__name__}", "text")
    return mechanism_from_dict(load_json(text, "mechanism spec", parameter="text"))


__all__ = ["mechanism_from_dict", "mechanism_from_json"]
