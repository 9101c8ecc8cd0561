"""An Opacus accountant's saved state as fdpkit reads it, without torch: the history of a
``state_dict`` (or of a ``PrivacyEngine.save_checkpoint`` checkpoint holding one), refused
where fdpkit's accountant recorded that the run's loader did not sample with Poisson. One
reader for :func:`fdpkit.opacus.history_from_state` and the CLI's ``--opacus-history`` and
``--from-opacus`` files; :func:`fdpkit.dpsgd_from_opacus_history` validates the rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fdpkit.errors import ParameterError
from fdpkit.vocabulary import OPACUS_SAMPLING_KEY

#: Opacus accountants whose ``history`` has the same meaning (and can be loaded).
COMPATIBLE = ("fdpkit", "rdp", "prv", "gdp")


def refuse_non_poisson_state(state: Mapping, what: str) -> None:
    """Refuse an Opacus accountant state dict that fdpkit's accountant saved from a run whose
    loader did not sample with Poisson (its :data:`fdpkit.vocabulary.OPACUS_SAMPLING_KEY`):
    its history read as Poisson steps would understate the run's privacy loss (a shuffled
    run of sigma 1, q 0.05, 80 steps: Poisson's epsilon 3.2 where its own accounting certifies
    15.5). ``what`` names the file or object in the message."""
    scheme = state.get(OPACUS_SAMPLING_KEY)
    if scheme in (None, "poisson"):
        return
    raise ParameterError(f"{what} was saved from a run whose loader sampled {scheme!r} (make_private with "
                         "poisson_sampling=False), not Poisson: its history alone would understate the run's privacy "
                         "loss; account the batches that ran (fdpkit.opacus.privacy_report(engine, data_loader), or "
                         "fdpkit report dpsgd --sampling shuffled with the batch and dataset size)", "history")


def state_history(obj: Any, what: str) -> Any:
    """The history in ``obj``: an accountant ``state_dict`` (``{"history": ..., "mechanism":
    ...}``), a checkpoint with ``privacy_accountant_state_dict``, or the history itself (a list
    of (noise_multiplier, sample_rate, steps); lists of lists become lists of tuples). ``what``
    names ``obj`` in the errors; the rows are not validated here."""
    if isinstance(obj, Mapping):
        if "privacy_accountant_state_dict" in obj:
            obj = obj["privacy_accountant_state_dict"]
        if not isinstance(obj, Mapping) or "history" not in obj:
            raise ValueError(f"{what} holds no accountant history: expected a state_dict with 'history', "
                             "a checkpoint with 'privacy_accountant_state_dict', or a list of "
                             "(noise_multiplier, sample_rate, steps)")
        if "mechanism" in obj and obj["mechanism"] not in COMPATIBLE:
            raise ValueError(f"mechanism must be one of {', '.join(COMPATIBLE)}, got {obj['mechanism']!r}")
        refuse_non_poisson_state(obj, what)
        obj = obj["history"]
    if isinstance(obj, list):
        obj = [tuple(h) if isinstance(h, list) else h for h in obj]
    return obj
