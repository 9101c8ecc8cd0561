"""Reading a DP-SGD spec's phase fields (helpers of :mod:`fdpkit.mechanisms.training`):
``to_dict`` writes the derived sample rate beside the batch size and the steps beside the
epochs; a spec is built from what the user gave, and what it also wrote must agree."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fdpkit._numerics import int_digits
from fdpkit.errors import ParameterError
from fdpkit.mechanisms.base import _number

if TYPE_CHECKING:
    from fdpkit.mechanisms.training import Phase


def _spec_args(data: dict) -> tuple[dict, dict]:
    """A spec's phase arguments, and the values it also wrote for them. ``to_dict`` writes
    the sample rate beside the batch size and the steps beside the epochs: the batch size
    and epochs are what the user gave, so they are built from, and the written values are
    returned to be checked against the result (:func:`_check_written`)."""
    args = {k: data.get(k) for k in ("sample_rate", "steps", "batch_size", "epochs", "max_batch_size")}
    written = {}
    for derived, given in (("sample_rate", "batch_size"), ("steps", "epochs")):
        if args[derived] is not None and args[given] is not None:
            written[derived], args[derived] = args[derived], None
    return args, written


def _check_written(phase: Phase, written: dict) -> None:
    """Refuse a spec whose written sample rate or steps disagree with the batch size or
    epochs it also gives (the written value was ignored: a spec with sample_rate 0.5 and
    batch_size 256 of 60,000 was accounted at q = 0.0043, a far smaller privacy loss)."""
    if "sample_rate" in written:
        q = _number("sample_rate", written["sample_rate"], positive=True, allow_zero=False)
        if not math.isclose(q, phase.sample_rate, rel_tol=1e-9):
            raise ParameterError(f"sample_rate {written['sample_rate']!r} disagrees with batch_size / dataset_size = "
                                 f"{phase.sample_rate:.6g}: give one of them", "sample_rate",
                                 ("sample_rate", "batch_size"))
    if "steps" in written:
        t = _number("steps", written["steps"], positive=True, allow_zero=False)
        if t != phase.steps:
            raise ParameterError(f"steps {written['steps']!r} disagrees with the {phase.steps} steps of the "
                                 f"epochs given: give one of steps or epochs", "steps", ("steps", "epochs"))


def _whole(name: str, value: Any, *, hint: str = "", low: int = 1, high: int | None = None) -> int:
    """``value`` as a whole number in [``low``, ``high``], or a ParameterError naming ``name``."""
    if isinstance(value, bool) or value is None:
        raise ParameterError(f"{name} must be a whole number, got {value!r}", name)
    if isinstance(value, (str, bytes)):
        raise ParameterError(f"{name} must be a whole number, got {value!r}{hint}", name)
    try:
        v = float(value)
    except OverflowError:  # an int beyond float range: far above any bound
        raise ParameterError(f"{name} must be at most {high if high is not None else 'finite'}, got a "
                             f"{int_digits(value)}-digit number", name) from None
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a whole number, got {value!r}", name) from None
    if not math.isfinite(v) or v != int(v):
        raise ParameterError(f"{name} must be a whole number, got {value!r}{hint}", name)
    if v < low or (high is not None and v > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high:,}]"
        shown = f"{v:.6g}" if abs(v) >= 1e16 else repr(value)  # 1e308 typed for a count: 1e+308
        raise ParameterError(f"{name} must be {rng}, got {shown}{hint}", name)
    return int(v)
