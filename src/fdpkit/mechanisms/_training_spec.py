"""Reading a DP-SGD spec's phase fields (helpers of :mod:`fdpkit.mechanisms.training`):
``to_dict`` writes the derived sample rate beside the batch size and the steps beside the
epochs; a spec is built from what the user gave, and what it also wrote must agree."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

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
