"""Frozen descriptions of mechanisms (what ran). No algorithms here: see fdpkit.accounting.

Modules, bottom to top: ``base`` (``Mechanism``, its registry and ``from_dict`` hook),
``basic``, ``curve``, ``renyi_guarantees``, ``combinators``, ``training`` (DP-SGD as it
ran), ``dp_events`` (dp_accounting's DpEvents), ``specs`` (dicts/JSON -> mechanisms),
``tree`` (``walk`` over mechanism trees, DP-SGD in elementary form).
"""

from fdpkit.mechanisms.base import Mechanism
from fdpkit.mechanisms.basic import ApproxDP, Gaussian, Laplace, PureDP, RandomizedResponse
from fdpkit.mechanisms.curve import CurveMechanism, UniformSampling
from fdpkit.mechanisms.combinators import Composed, Repeated, Subsampled
from fdpkit.mechanisms.training import (
    DPSGD,
    Phase,
    dpsgd,
    dpsgd_from_opacus_history,
    dpsgd_from_training,
    dpsgd_schedule,
)
from fdpkit.mechanisms.renyi_guarantees import RDP, ZCDP
from fdpkit.mechanisms.dp_events import dp_event_to_dict, from_dp_event, to_dp_event
from fdpkit.mechanisms.specs import mechanism_from_dict, mechanism_from_json
from fdpkit.mechanisms.tree import elementary_tree, fold, leaves, training_run, walk

__all__ = [
    "DPSGD",
    "Phase",
    "dpsgd_from_opacus_history",
    "dpsgd_schedule",
    "ApproxDP",
    "Composed",
    "CurveMechanism",
    "Gaussian",
    "Laplace",
    "Mechanism",
    "PureDP",
    "RDP",
    "RandomizedResponse",
    "Repeated",
    "Subsampled",
    "ZCDP",
    "UniformSampling",
    "dpsgd",
    "dpsgd_from_training",
    "dp_event_to_dict",
    "elementary_tree",
    "fold",
    "leaves",
    "training_run",
    "walk",
    "from_dp_event",
    "to_dp_event",
    "mechanism_from_dict",
    "mechanism_from_json",
]
