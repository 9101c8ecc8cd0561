r"""What the data loader really did, and the report of the run that it implies.

Opacus's accountants are told a sample rate by the optimizer's step hook and assume Poisson
sampling; the loader may have done something else (Opacus #813: a ``WeightedRandomSampler``;
``make_private(poisson_sampling=False)`` keeps a shuffled loader and still accounts Poisson).
:func:`describe_loader` reads the scheme from the loader itself:

======================================================  =====================================
loader                                                  scheme and accounting
======================================================  =====================================
Opacus ``DPDataLoader`` / ``UniformWithReplacement-``   ``"poisson"``: each example in each
``Sampler`` (also under ``BatchMemoryManager``)         step with probability q, independently
``RandomSampler`` (no replacement, whole dataset) in a  ``"shuffled"``: a fresh permutation per
``BatchSampler`` of fixed ``batch_size``                epoch cut into batches; no amplification
                                                        (each example in P steps, mu =
                                                        sqrt(P) Delta / sigma; see
                                                        :mod:`fdpkit.mechanisms.training`)
``SequentialSampler``                                   ``"fixed-order"``: the same analysis
                                                        (it never uses the shuffle), stated so
``WeightedRandomSampler``, sampling with replacement,   ``ValueError``: inclusion is not one
a subset per epoch, custom samplers, iterable datasets  rate q for every example (or unknown),
                                                        so no sound accounting applies
======================================================  =====================================

Steps are counted as the optimizer stepped (Opacus's hook runs on real steps only, so
virtual steps of ``BatchMemoryManager`` are not counted twice). With fixed batches the
optimizer reports sample rate k / L for k accumulated batches of an L-batch epoch: the
logical batch is k B examples, which :func:`privacy_report` accounts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

from fdpkit._numerics import check_real
from fdpkit.errors import ParameterError
from fdpkit.mechanisms import DPSGD, dpsgd_from_opacus_history
from fdpkit.mechanisms.training import _choice, make_phase
from fdpkit.vocabulary import ADD_REMOVE, POISSON, RELATIONS, REPLACE_ONE, SHUFFLED
from fdpkit.guarantee.privacy import DEFAULT_DELTAS, DEFAULT_FPRS, privacy_report as _report

#: Relative tolerance when the history's sample rate is compared with the loader's.
RATE_RTOL = 1e-9
SCHEMES = ("poisson", "shuffled", "fixed-order")
#: Neighbouring relation used when none is given, per scheme (add/remove is refused for
#: fixed batches: see :data:`fdpkit.mechanisms.training.REFUSED`).
DEFAULT_RELATION = {POISSON: ADD_REMOVE, SHUFFLED: REPLACE_ONE, "fixed-order": REPLACE_ONE}

FIXED_ORDER_NOTE = (
    "The loader visits the examples in a fixed order (SequentialSampler): accounted without "
    "any amplification by sampling, with the shuffled-batch analysis (each example in P steps, "
    "mu = sqrt(P) Delta / sigma), which does not use the shuffle."
)


@dataclass(frozen=True)
class LoaderSampling:
    """How a data loader draws its batches.

    Attributes
    ----------
    scheme : {"poisson", "shuffled", "fixed-order"}
    dataset_size : int
    batches_per_epoch : int
        ``len(loader)``: N // B with ``drop_last``, ceil(N / B) without (Poisson: 1 / q
        rounded as Opacus does).
    sample_rate : float or None
        Poisson rate q (None for fixed batches).
    batch_size : int or None
        Fixed batch size B (None for Poisson).
    drop_last : bool
    sampler : str
        The sampler's class name, for messages.
    """

    scheme: str
    dataset_size: int
    batches_per_epoch: int
    sample_rate: float | None = None
    batch_size: int | None = None
    drop_last: bool = False
    sampler: str = ""


def _opacus_samplers() -> tuple[tuple, tuple]:
    from opacus.utils.batch_memory_manager import BatchSplittingSampler
    from opacus.utils.uniform_sampler import (
        DistributedUniformWithReplacementSampler,
        UniformWithReplacementSampler,
    )

    return (UniformWithReplacementSampler, DistributedUniformWithReplacementSampler), (BatchSplittingSampler,)


def _refuse(name: str, why: str) -> ValueError:
    return ValueError(f"data_loader samples with {name}: {why}; no sound privacy accounting applies "
                      "(use Opacus's DPDataLoader for Poisson sampling, or a DataLoader with "
                      "shuffle=True and a fixed batch_size)")


def describe_loader(data_loader: Any) -> LoaderSampling:
    """Read the sampling scheme, dataset size and batch layout from ``data_loader``.

    Raises
    ------
    ValueError
        Naming the sampler and why no sound accounting applies to it (see the module docs).
    """
    from torch.utils.data import (
        BatchSampler,
        DataLoader,
        IterableDataset,
        RandomSampler,
        SequentialSampler,
        WeightedRandomSampler,
    )

    if not isinstance(data_loader, DataLoader):
        raise ParameterError(f"data_loader must be a torch DataLoader, got {type(data_loader).__name__}",
                             "data_loader")
    if isinstance(data_loader.dataset, IterableDataset):
        raise _refuse("an IterableDataset", "the loader does not sample; the dataset streams its own order")
    poisson, splitting = _opacus_samplers()
    bs = data_loader.batch_sampler
    while isinstance(bs, splitting):  # BatchMemoryManager: physical batches of a logical one
        bs = bs.sampler
    if isinstance(bs, poisson):
        n = int(getattr(bs, "total_size", bs.num_samples))  # distributed: the whole dataset
        return LoaderSampling("poisson", n, len(bs), sample_rate=float(bs.sample_rate),
                              sampler=type(bs).__name__)
    if bs is None or type(bs) is not BatchSampler:
        name = type(bs).__name__ if bs is not None else "no batch sampler (batch_size=None)"
        raise _refuse(name, "a custom batch sampler whose inclusion probabilities fdpkit cannot read")
    s = bs.sampler
    n = len(data_loader.dataset)
    b, drop = int(bs.batch_size), bool(bs.drop_last)
    layout = dict(dataset_size=n, batches_per_epoch=len(bs), batch_size=b, drop_last=drop,
                  sampler=type(s).__name__)
    if isinstance(s, WeightedRandomSampler):
        raise _refuse("WeightedRandomSampler", "examples are drawn with unequal weights (and with "
                      "replacement), so one example's inclusion probability is not the batch rate "
                      "(Opacus #813)")
    if type(s) is RandomSampler:
        if s.replacement:
            raise _refuse("RandomSampler(replacement=True)", "an example can appear several times in one "
                          "batch, which multiplies its sensitivity")
        if s.num_samples != n:
            raise _refuse(f"RandomSampler(num_samples={s.num_samples})", f"each epoch draws {s.num_samples} "
                          f"of the {n} examples, neither a full permutation nor Poisson sampling")
        return LoaderSampling("shuffled", **layout)
    if type(s) is SequentialSampler:
        return LoaderSampling("fixed-order", **layout)
    raise _refuse(type(s).__name__, "a sampler fdpkit does not know")


def sampling_of(data_loader: Any) -> str:
    """The sampling scheme of ``data_loader``: ``"poisson"``, ``"shuffled"`` or ``"fixed-order"``.

    ``ValueError`` for a ``WeightedRandomSampler``, samplers with replacement and anything
    unknown (see :func:`describe_loader`).

    Examples
    --------
    >>> import torch
    >>> from torch.utils.data import DataLoader, TensorDataset
    >>> data = TensorDataset(torch.zeros(100, 3))
    >>> sampling_of(DataLoader(data, batch_size=10, shuffle=True))
    'shuffled'
    >>> from opacus.data_loader import DPDataLoader
    >>> sampling_of(DPDataLoader.from_data_loader(DataLoader(data, batch_size=10)))
    'poisson'
    """
    return describe_loader(data_loader).scheme


def _accountant_of(privacy_engine: Any) -> Any:
    acc = getattr(privacy_engine, "accountant", privacy_engine)
    if not hasattr(acc, "history"):
        raise ParameterError(f"privacy_engine must be an Opacus PrivacyEngine or accountant, got "
                             f"{type(privacy_engine).__name__}", "privacy_engine")
    return acc


def mechanism_of(privacy_engine: Any, data_loader: Any, *, relation: str | None = None,
                 epochs: int | None = None) -> DPSGD:
    """The DP-SGD run that ``privacy_engine``'s history and ``data_loader`` describe together.

    Raises
    ------
    ValueError
        When the loader and the history contradict each other (sample rate, or the step
        count of ``epochs`` full epochs), or the loader has no sound accounting.
    """
    acc = _accountant_of(privacy_engine)
    layout = describe_loader(data_loader)
    rel = _choice("relation", relation if relation is not None else DEFAULT_RELATION[layout.scheme], RELATIONS)
    history = list(acc.history)
    if not history:
        raise ValueError("the accountant's history is empty: no optimizer step has been taken")
    mech = dpsgd_from_opacus_history(history)  # validates the rows
    expected_steps = 0
    if layout.scheme == "poisson":
        for i, p in enumerate(mech.phases):
            if not math.isclose(p.sample_rate, layout.sample_rate, rel_tol=RATE_RTOL):
                raise ValueError(
                    f"history[{i}] has sample_rate {p.sample_rate!r}, but the loader's {layout.sampler} "
                    f"samples each example with probability {layout.sample_rate!r}: the accountant and "
                    "the loader disagree (gradient accumulation over Poisson batches is not Poisson "
                    "sampling at the accounted rate)")
            expected_steps = layout.batches_per_epoch
        out = dpsgd_from_opacus_history(history, relation=rel, dataset_size=layout.dataset_size)
    else:
        n, b, per_epoch = layout.dataset_size, layout.batch_size, layout.batches_per_epoch
        phases, start = [], 0  # start: physical batches before the phase
        for i, p in enumerate(mech.phases):
            k_float = p.sample_rate * per_epoch
            k = round(k_float)
            if k < 1 or not math.isclose(k_float, k, rel_tol=RATE_RTOL) or per_epoch % k:
                raise ValueError(
                    f"history[{i}] has sample_rate {p.sample_rate!r}, but the loader ({layout.sampler}, "
                    f"batch_size {b}, {per_epoch} batches per epoch) steps with rate k / {per_epoch} for "
                    f"k accumulated batches, k dividing {per_epoch}: the accountant and the loader disagree")
            if start % k:
                raise ValueError(f"history[{i}] accumulates {k} batches per step from batch {start} on: its "
                                 "steps may straddle an epoch boundary (an example twice in one step), which "
                                 "fdpkit does not account")
            expected_steps = per_epoch // k  # logical steps per epoch (drop_last honoured)
            ph = make_phase(p.noise_multiplier, steps=p.steps, batch_size=min(k * b, n), dataset_size=n,
                            sampling="shuffled")
            # an example takes part once in every epoch the phase touches: the phase covers the
            # physical batches [start, start + k T), so epochs start // L .. (start + k T - 1) // L
            end = start + k * p.steps
            touched = (end - 1) // per_epoch - start // per_epoch + 1
            phases.append(replace(ph, participations=touched))
            start = end
        out = DPSGD(tuple(phases), "shuffled", rel, n)
    if epochs is not None:
        e = check_real("epochs", epochs, low=1, integer=True, scalar=True)  # named: NaN, inf, bool, 1.5
        if len(mech.phases) == 1 and mech.steps != e * expected_steps:
            raise ValueError(f"the accountant's history has {mech.steps} steps, but {e} epochs of this "
                             f"loader take {e * expected_steps}: the accountant and the loader disagree")
    return out


def privacy_report(privacy_engine: Any, data_loader: Any, *, relation: str | None = None,
                   epochs: int | None = None, deltas: Sequence[float] | None = None,
                   fprs: Sequence[float] | None = None):
    """Report what ran: the engine's step history read with the loader's real sampling.

    Parameters
    ----------
    privacy_engine : opacus.PrivacyEngine or an Opacus accountant
        Any accountant (``"fdpkit"``, ``"rdp"``, ``"prv"``): only its history is used.
    data_loader : torch.utils.data.DataLoader
        The loader training iterated (the one ``make_private`` returned).
    relation : {"add-remove", "replace-one", "zero-out"}, optional
        Default: add-remove for Poisson sampling, replace-one for fixed batches (add-remove
        is refused there).
    epochs : int, optional
        When given, the history's step count must match this many full epochs.
    deltas, fprs : sequences of float, optional
        As for :func:`fdpkit.privacy_report`.

    Returns
    -------
    fdpkit.PrivacyReport

    Raises
    ------
    ValueError
        A loader with no sound accounting, or a contradiction between the loader and the
        history (sample rate, steps).
    """
    mech = mechanism_of(privacy_engine, data_loader, relation=relation, epochs=epochs)
    report = _report(mech, deltas=DEFAULT_DELTAS if deltas is None else deltas,
                     fprs=DEFAULT_FPRS if fprs is None else fprs)
    notes = []
    if describe_loader(data_loader).scheme == "fixed-order":
        notes.append(FIXED_ORDER_NOTE)
    mech_name = getattr(_accountant_of(privacy_engine), "mechanism", None)
    if mech.sampling == "shuffled" and callable(mech_name):
        notes.append(f"The engine's {mech_name()!r} accountant assumes Poisson sampling; its epsilon does "
                     "not describe this shuffled loader. This report accounts the batches that ran.")
    return replace(report, warnings=report.warnings + tuple(notes)) if notes else report
