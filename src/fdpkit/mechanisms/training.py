r"""DP-SGD as people train: what ran, in training terms (no algorithm here).

A :class:`DPSGD` value object records a training run: one or more *phases* (noise
multiplier, sample rate, steps), the **sampling scheme** (how batches were drawn), the
**neighbouring relation** (which pairs of datasets the guarantee compares) and the
**privacy unit** (an example, or a user). ``fdpkit.accounting`` turns it into a curve.

Training-shaped inputs and their rounding rules
-----------------------------------------------
- sample rate q = ``sample_rate``, or q = batch_size / dataset_size (the expected batch
  size for Poisson sampling, the fixed batch size otherwise);
- steps T = ``steps``, or T = ceil(epochs x dataset_size / batch_size) (= ceil(epochs / q)
  when only the sample rate is known), computed in exact decimal arithmetic and rounded
  **up**: more steps never make the guarantee look better than what ran;
- fixed-size and shuffled batches given in epochs: the steps are counted as a data loader
  runs them, ceil(dataset_size / batch_size) batches per epoch (the last one smaller), or
  floor(dataset_size / batch_size) with ``drop_last=True`` (PyTorch ``DataLoader(drop_last=True)``);
  T = ceil(epochs x batches per epoch);
- shuffled batches (each example once per pass over a fresh permutation): an example takes
  part in P = ceil(epochs) steps when epochs are given, else in at most
  P = ceil(T / floor(dataset_size / batch_size)) steps (every pass has at least
  floor(N/B) batches, dropped last batch or not); a schedule whose loader may run on
  across its phases is also accounted pass by pass, each at its smallest noise, and the
  larger mu is reported (:func:`fdpkit.accounting.closed_form.shuffled_mu`).

Schemes and relations
---------------------
=================  ========================================================================
sampling           relations (what fdpkit accounts)
=================  ========================================================================
poisson            add-remove, zero-out (same PLD), replace-one (dp_accounting's PLD)
truncated-poisson  all three: dp_accounting 0.6.0's truncated subsampled Gaussian
fixed-size         replace-one: Dong, Roth & Su 2022 Thm. 4.2, C_q(G_{2/sigma}) composed T
                   times; zero-out: its exact single step, composed per direction;
                   add-remove is refused (the batch size would not change
                   with the dataset, which Thm. 4.2 does not cover)
shuffled           replace-one, zero-out: no amplification, mu = sqrt(P) Delta / sigma;
                   add-remove is refused (adding or removing one example reshuffles the
                   whole partition into batches)
=================  ========================================================================

Delta = 2 for replace-one (the clipped gradient of one example is replaced by another: the
sum moves by up to 2C) and 1 for zero-out (replaced by a zero gradient) and add-remove.
Fixed-size zero-out is *not* the Gaussian of Delta = 1 subsampled: whether the example is
in the batch changes how many other examples are, so their gradients reveal it (issue 29;
``tests/dpsgd/test_dpsgd_fixed_size_instance.py``). Its exact single step
(:mod:`fdpkit.accounting.without_replacement`) has the worst case "every other example's
gradient opposite the example's": (1 - q) N(0) + q N(2C) against (1 - q) N(0) + q N(C) for
eps >= 0. Replace-one keeps Thm. 4.2 with :data:`FIXED_SIZE_SENSITIVITY` (tight there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Iterable, Sequence

from fdpkit.errors import ParameterError
from fdpkit.mechanisms._training_spec import _check_written, _spec_args, _whole
from fdpkit.mechanisms.base import Mechanism, _number, check_sample_rate_normal
from fdpkit.mechanisms.basic import Gaussian
from fdpkit.mechanisms.combinators import Composed, Repeated, Subsampled
from fdpkit.vocabulary import RELATIONS, SAMPLINGS, UNITS, spelling

#: Largest number of steps accepted (beyond it accounting is impractical).
MAX_STEPS = 10**7

#: Why a (sampling, relation) pair is refused.
REFUSED = {
    ("shuffled", "add-remove"): (
        "relation 'add-remove' cannot be accounted with sampling 'shuffled': adding or "
        "removing one example reshuffles the whole partition into batches, so every batch "
        "may change; use relation='replace-one' or 'zero-out'"
    ),
    ("fixed-size", "add-remove"): (
        "relation 'add-remove' cannot be accounted with sampling 'fixed-size': the "
        "without-replacement subsampling theorem (Dong, Roth & Su Thm. 4.2) compares datasets "
        "of the same size; use relation='replace-one' or 'zero-out'"
    ),
}

#: Sensitivity of the summed clipped gradients in units of the clipping norm.
SENSITIVITY = {"add-remove": 1.0, "zero-out": 1.0, "replace-one": 2.0}
#: Sensitivity between two batches of a fixed-size scheme that differ in one element: Dong,
#: Roth & Su's Thm. 4.2 needs it, and fixed-size replace-one is accounted as C_q(G_{2/sigma}).
FIXED_SIZE_SENSITIVITY = 2.0


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    v = spelling(value)
    if v not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(choices)}, got {value!r}", name)
    return v


@dataclass(frozen=True)
class Phase:
    """One phase of training: ``steps`` steps at one noise multiplier and sample rate.

    ``batch_size``, ``epochs`` and ``max_batch_size`` keep what the user typed (and the
    truncation of truncated Poisson); ``participations`` is, for shuffled batches, the
    number of steps any one example takes part in (see the module docs)."""

    noise_multiplier: float
    sample_rate: float
    steps: int
    batch_size: int | None = None
    epochs: float | None = None
    max_batch_size: int | None = None
    participations: int | None = None
    #: fixed-size or shuffled batches in epochs: the loader dropped the last, smaller batch
    drop_last: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        out = {"noise_multiplier": self.noise_multiplier, "sample_rate": self.sample_rate, "steps": self.steps}
        for k in ("batch_size", "epochs", "max_batch_size", "participations"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        if self.drop_last:
            out["drop_last"] = True
        return out

    def batches_per_epoch(self, dataset_size: int | None) -> int | None:
        """Batches a data loader runs per epoch: ceil(N/B), or floor(N/B) with drop_last."""
        if self.batch_size is None or dataset_size is None:
            return None
        return dataset_size // self.batch_size if self.drop_last else -(-dataset_size // self.batch_size)


def _rate_hint(value: Any) -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    if v > 1 and v == int(v):
        b = int(v)
        return (f": did you mean batch_size={b} with dataset_size=N "
                f"(--batch-size {b} --dataset-size N)?")
    return ""


def _steps_from_epochs(epochs: float, dataset_size: int | None, batch_size: int | None,
                       sample_rate: float, per_epoch: int | None = None) -> int:
    """ceil(epochs * N / B) (or ceil(epochs / q), or ceil(epochs * per_epoch) for a loader's
    whole batches) in exact decimal arithmetic."""
    e = Decimal(repr(float(epochs)))
    if per_epoch is not None:
        exact = e * per_epoch
    elif dataset_size is not None and batch_size is not None:
        exact = e * dataset_size / batch_size
    else:
        exact = e / Decimal(repr(float(sample_rate)))
    return int(exact.to_integral_value(rounding="ROUND_CEILING"))


def make_phase(noise_multiplier: Any, sample_rate: Any = None, steps: Any = None, *,
               batch_size: Any = None, dataset_size: int | None = None, epochs: Any = None,
               sampling: str = "poisson", max_batch_size: Any = None, drop_last: Any = False,
               participations: Any = None) -> Phase:
    """Validate one phase in training terms (see the module docs for the rules).

    ``participations`` (shuffled batches only; default: from the steps or epochs) is the
    number of steps any one example takes part in, where the loader knows it better (a
    phase that starts in the middle of a pass touches one pass more). It takes effect as
    given, between ceil(T / batches per pass) (fewer is impossible: every pass puts each
    example in one step) and T."""
    nm = _number("noise_multiplier", noise_multiplier, positive=True, allow_zero=False)
    if drop_last not in (True, False, None, 0, 1):
        raise ParameterError(f"drop_last must be true or false, got {drop_last!r}", "drop_last")
    drop = bool(drop_last)
    if drop and sampling not in ("fixed-size", "shuffled"):
        raise ParameterError(f"drop_last applies only to sampling 'shuffled' or 'fixed-size' (a data loader's "
                             f"batches), got sampling={sampling!r}", "drop_last", ("drop_last", "sampling"))
    if (sample_rate is None) == (batch_size is None):
        raise ParameterError("give exactly one of sample_rate or batch_size (with dataset_size), got "
                             + ("both" if sample_rate is not None else "neither"), "sample_rate",
                             ("sample_rate", "batch_size"))
    if batch_size is not None:
        try:
            fb = float(batch_size)
        except (TypeError, ValueError):
            fb = math.nan
        if 0 < fb < 1:
            raise ParameterError(f"batch_size must be a whole number of examples, got {batch_size!r}: "
                                 f"did you mean sample_rate={batch_size!r} (--sample-rate {batch_size})?",
                                 "batch_size")
        b = _whole("batch_size", batch_size)
        if dataset_size is None:
            raise ParameterError(f"dataset_size is required with batch_size (sample rate = batch_size / "
                                 f"dataset_size), got batch_size={b} and no dataset_size", "dataset_size")
        if b > dataset_size:
            raise ParameterError(f"batch_size must be at most dataset_size={dataset_size}, got {b}", "batch_size",
                                 ("batch_size", "dataset_size"))
        q = b / dataset_size
    else:
        q = _number("sample_rate", sample_rate, positive=True, allow_zero=False)
        if q > 1:
            raise ParameterError(f"sample_rate must be in (0, 1], got {sample_rate!r}{_rate_hint(sample_rate)}",
                                 "sample_rate")
        check_sample_rate_normal(q)
        b = None
    if sampling in ("fixed-size", "shuffled") and (b is None or dataset_size is None):
        raise ParameterError(f"sampling {sampling!r} needs batch_size and dataset_size (fixed batches of "
                             "batch_size examples out of dataset_size)", "batch_size",
                             ("batch_size", "dataset_size", "sampling"))
    if (steps is None) == (epochs is None):
        raise ParameterError("give exactly one of steps or epochs, got " + ("both" if steps is not None else "neither"),
                             "steps", ("steps", "epochs"))
    e = None
    if epochs is not None:
        e = _number("epochs", epochs, positive=True, allow_zero=False)
        per = None
        if sampling in ("fixed-size", "shuffled"):  # the loader's whole batches per epoch
            per = dataset_size // b if drop else -(-dataset_size // b)
        t = _steps_from_epochs(e, dataset_size, b, q, per)
        if t > MAX_STEPS:
            count = f"{t:,}" if t < 10**15 else f"over 10^{len(str(t)) - 1}"  # not 309 digits at epochs=1e308
            raise ParameterError(f"epochs={epochs!r} give {count} steps, more than the {MAX_STEPS:,} fdpkit accounts",
                                 "epochs")
    else:
        hint = ""
        try:
            if float(steps) != int(float(steps)):
                hint = " (steps count whole optimizer steps; to give epochs use epochs=..., rounded up)"
        except (TypeError, ValueError, OverflowError):
            pass
        t = _whole("steps", steps, hint=hint, high=MAX_STEPS)
    mb = None
    if sampling == "truncated-poisson":
        if max_batch_size is None:
            raise ParameterError("sampling 'truncated-poisson' needs max_batch_size (the largest batch kept)",
                                 "max_batch_size")
        if dataset_size is None:
            raise ParameterError("sampling 'truncated-poisson' needs dataset_size (dp_accounting's truncated "
                                 "subsampled Gaussian depends on it)", "dataset_size")
        mb = _whole("max_batch_size", max_batch_size, high=dataset_size)
    elif max_batch_size is not None:
        raise ParameterError(f"max_batch_size applies only to sampling='truncated-poisson', got sampling={sampling!r}",
                             "max_batch_size", ("max_batch_size", "sampling"))
    parts = None
    if sampling == "shuffled":
        per_epoch = dataset_size // b
        parts = math.ceil(e) if e is not None else -(-t // per_epoch)
        if participations is not None:
            most = per_epoch if drop else -(-dataset_size // b)  # batches in one pass, at most
            parts = _whole("participations", participations, low=-(-t // most), high=t,
                           hint=f" (the steps one example takes part in: at most the {t:,} steps, at least "
                                f"ceil({t:,} / {most:,}) since each pass of at most {most:,} batches puts every "
                                "example in one step)")
    elif participations is not None:
        raise ParameterError(f"participations applies only to sampling 'shuffled' (one step per pass over the "
                             f"data for each example); {sampling} batches are accounted from the sample rate and "
                             f"the steps, got sampling={sampling!r}", "participations", ("participations", "sampling"))
    return Phase(nm, q, t, b, e, mb, parts, drop)


@dataclass(frozen=True)
class DPSGD(Mechanism):
    """DP-SGD as it ran: phases, sampling scheme, neighbouring relation, privacy unit.

    Build it with :func:`dpsgd`, :func:`dpsgd_schedule` or :func:`dpsgd_from_opacus_history`.
    The noise multiplier is the noise standard deviation over the clipping norm C.

    Attributes
    ----------
    phases : tuple of Phase
    sampling : {"poisson", "truncated-poisson", "fixed-size", "shuffled"}
    relation : {"add-remove", "replace-one", "zero-out"}
    dataset_size : int or None
    unit : {"example", "user"}
        "user": users (not examples) are sampled and clipped; the maths is the same.
    examples_per_user : int or None
        With ``unit="user"``: examples are sampled, and each user has at most this many;
        the example-level curve is turned into a user-level one by group privacy (Dong,
        Roth & Su Thm. 2.14).

    Examples
    --------
    >>> run = dpsgd(1.1, batch_size=256, dataset_size=60000, epochs=3)  # a DPSGD
    >>> run.phases[0].steps, run.sampling, run.relation
    (704, 'poisson', 'add-remove')
    """

    kind = "dpsgd"
    unbounded_loss = True
    phases: tuple
    sampling: str = "poisson"
    relation: str = "add-remove"
    dataset_size: int | None = None
    unit: str = "example"
    examples_per_user: int | None = None

    def __post_init__(self) -> None:
        s = _choice("sampling", self.sampling, SAMPLINGS)
        r = _choice("relation", self.relation, RELATIONS)
        if (s, r) in REFUSED:
            raise ParameterError(REFUSED[(s, r)], "relation", ("relation", "sampling"))
        u = _choice("unit", self.unit, UNITS)
        k = self.examples_per_user
        if k is not None:
            if u != "user":
                raise ParameterError(f"examples_per_user needs unit='user', got unit={self.unit!r}", "examples_per_user",
                                     ("examples_per_user", "unit"))
            k = _whole("examples_per_user", k, high=10**4)
        phases = tuple(self.phases) if isinstance(self.phases, (list, tuple)) else ()
        if not phases or not all(isinstance(p, Phase) for p in phases):
            raise ParameterError(f"phases must be a non-empty list of phases, got {self.phases!r}", "phases")
        if sum(p.steps for p in phases) > MAX_STEPS:
            raise ParameterError(f"steps must total at most {MAX_STEPS:,}, got {sum(p.steps for p in phases):,}", "steps",
                                 ("steps", "phases"))
        for name, v in (("sampling", s), ("relation", r), ("unit", u), ("examples_per_user", k),
                        ("phases", phases)):
            object.__setattr__(self, name, v)

    # --- single-phase shorthands ---------------------------------------------------------
    def _only(self, name: str):
        vals = {getattr(p, name) for p in self.phases}
        return vals.pop() if len(vals) == 1 else None

    @property
    def noise_multiplier(self) -> float | None:
        """The noise multiplier (None when the phases differ)."""
        return self._only("noise_multiplier")

    @property
    def sample_rate(self) -> float | None:
        """The sample rate (None when the phases differ)."""
        return self._only("sample_rate")

    @property
    def steps(self) -> int:
        """Total number of steps."""
        return sum(p.steps for p in self.phases)

    @property
    def sensitivity(self) -> float:
        """Sensitivity of one step's noisy sum, in clipping norms: 2 for replace-one, 1 for
        zero-out and add-remove (fixed-size zero-out is accounted by its exact single step,
        whose worst case also moves another example's gradient: see the module docs)."""
        return SENSITIVITY[self.relation]

    def with_(self, **changes: Any) -> "DPSGD":
        """A copy with single-phase fields changed (noise_multiplier, sample_rate, steps)."""
        if len(self.phases) != 1:
            return replace(self, phases=tuple(replace(p, **changes) for p in self.phases))
        return replace(self, phases=(replace(self.phases[0], **changes),))

    def training_run(self) -> "DPSGD":
        """The run itself (see :meth:`Mechanism.training_run`)."""
        return self

    def example_level(self) -> "DPSGD":
        """The same run without group privacy (``examples_per_user=None``): what is
        accounted before Dong, Roth & Su's Thm. 2.14 turns it into a user-level curve."""
        if self.examples_per_user is None:
            return self
        return DPSGD(self.phases, self.sampling, self.relation, self.dataset_size, self.unit, None)

    def elementary(self) -> Mechanism | None:
        """The same run in elementary mechanisms, where one exists (for simulation):
        Poisson add-remove/zero-out as Repeated(Subsampled(Gaussian(σ), q), T) per phase,
        shuffled as Repeated(Gaussian(σ, Δ), P); None otherwise (replace-one
        Poisson, truncated Poisson, fixed-size batches, group privacy)."""
        if self.examples_per_user is not None:
            return None
        if self.sampling == "poisson" and self.relation in ("add-remove", "zero-out"):
            parts = [Repeated(Subsampled(Gaussian(p.noise_multiplier, 1.0), p.sample_rate), p.steps)
                     for p in self.phases]
        elif self.sampling == "shuffled":
            parts = [Repeated(Gaussian(p.noise_multiplier, self.sensitivity), p.participations)
                     for p in self.phases]
        else:
            return None
        return parts[0] if len(parts) == 1 else Composed(tuple(parts))

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        out: dict[str, Any] = {"kind": self.kind}
        if len(self.phases) == 1:
            out.update(self.phases[0].to_dict())
        else:
            out["phases"] = [p.to_dict() for p in self.phases]
        out.update(sampling=self.sampling, relation=self.relation, unit=self.unit)
        if self.dataset_size is not None:
            out["dataset_size"] = self.dataset_size
        if self.examples_per_user is not None:
            out["examples_per_user"] = self.examples_per_user
        return out

    def setting(self) -> dict[str, Any]:
        """Sampling scheme, neighbouring relation and privacy unit, spelled out."""
        return {"sampling": self.sampling, "relation": self.relation, "unit": self.unit,
                "examples_per_user": self.examples_per_user, "dataset_size": self.dataset_size,
                "steps": self.steps, "phases": len(self.phases)}

    def label(self) -> str:
        """A short name for reports, tables and plot legends."""
        unit = {"example": "example-level", "user": "user-level"}[self.unit]
        how = f"{self.sampling} sampling, {self.relation}, {unit}"
        if len(self.phases) == 1:
            p = self.phases[0]
            # fixed batches (shuffled, fixed-size) have no sample rate: quote the loader's batches
            batches = (f"batch size {p.batch_size} of {self.dataset_size}"
                       if self.sampling in ("shuffled", "fixed-size") and p.batch_size is not None
                       and self.dataset_size is not None else f"sample rate {p.sample_rate:.4g}")
            return f"DP-SGD (noise multiplier {p.noise_multiplier:g}, {batches}, {p.steps} steps; {how})"
        return f"DP-SGD schedule ({len(self.phases)} phases, {self.steps} steps; {how})"

    def describe(self) -> str:
        """A one-line human-readable description (used in reports)."""
        return self.label()

    @classmethod
    def from_dict(cls, data: dict) -> "DPSGD":
        """A DPSGD from its spec dict (one phase's fields, or ``phases``); unknown keys are refused."""
        known = {"kind", "noise_multiplier", "sample_rate", "steps", "batch_size", "epochs",
                 "max_batch_size", "participations", "phases", "sampling", "relation", "unit",
                 "dataset_size", "examples_per_user", "drop_last"}
        extra = set(data) - known
        if extra:
            raise ParameterError(f"unknown field(s) for 'dpsgd': {', '.join(sorted(extra))}", "mechanism")
        common = {k: data[k] for k in ("sampling", "relation", "unit", "dataset_size", "examples_per_user")
                  if k in data}
        if "phases" in data:
            return dpsgd_schedule(data["phases"], **common)
        if "noise_multiplier" not in data:
            raise ParameterError("'dpsgd' needs the field 'noise_multiplier'", "mechanism")
        args, written = _spec_args(data)
        run = dpsgd(data["noise_multiplier"], **args, **common, drop_last=data.get("drop_last", False))
        _check_written(run.phases[0], written)
        if data.get("participations") is None:
            return run
        # as to_dict writes it (e.g. a loader's count, fdpkit.opacus): checked, and it takes effect
        phase = make_phase(data["noise_multiplier"], **args, dataset_size=run.dataset_size, sampling=run.sampling,
                           drop_last=data.get("drop_last", False), participations=data["participations"])
        return replace(run, phases=(phase,))


def _common(dataset_size: Any, sampling: str, relation: str, unit: str) -> tuple[int | None, str, str, str]:
    n = None if dataset_size is None else _whole("dataset_size", dataset_size, high=10**12)
    s = _choice("sampling", sampling, SAMPLINGS)
    r = _choice("relation", relation, RELATIONS)
    if (s, r) in REFUSED:
        raise ParameterError(REFUSED[(s, r)], "relation", ("relation", "sampling"))
    return n, s, r, _choice("unit", unit, UNITS)


def dpsgd(noise_multiplier: float, sample_rate: float | None = None, steps: int | None = None, *,
          batch_size: int | None = None, dataset_size: int | None = None, epochs: float | None = None,
          sampling: str = "poisson", relation: str = "add-remove", max_batch_size: int | None = None,
          unit: str = "example", examples_per_user: int | None = None, drop_last: bool = False) -> DPSGD:
    """DP-SGD in training terms.

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation / clipping norm (σ).
    sample_rate : float, optional
        Sampling probability q in (0, 1]; or give ``batch_size`` and ``dataset_size``.
    steps : int, optional
        Number of steps T; or give ``epochs`` (T = ceil(epochs x dataset_size / batch_size),
        rounded up in exact decimal arithmetic).
    batch_size, dataset_size : int, optional
        q = batch_size / dataset_size (expected batch size for Poisson sampling).
    epochs : float, optional
    sampling : {"poisson", "truncated-poisson", "fixed-size", "shuffled"}
    relation : {"add-remove", "replace-one", "zero-out"}
    max_batch_size : int, optional
        Truncated Poisson: batches larger than this are cut down to it.
    unit : {"example", "user"}
    examples_per_user : int, optional
        With ``unit="user"``: the most examples one user has (group privacy).
    drop_last : bool
        Shuffled or fixed-size batches given in epochs: the data loader dropped the last,
        smaller batch of each epoch (floor(N/B) steps per epoch instead of ceil(N/B)).

    Examples
    --------
    >>> m = dpsgd(1.1, batch_size=256, dataset_size=60000, epochs=60)
    >>> m.steps, round(m.sample_rate, 6), m.sampling, m.relation
    (14063, 0.004267, 'poisson', 'add-remove')
    >>> shuffled = dict(batch_size=256, dataset_size=60000, epochs=60, sampling="shuffled", relation="replace-one")
    >>> dpsgd(1.1, **shuffled).steps, dpsgd(1.1, **shuffled, drop_last=True).steps   # 60 x 235, 60 x 234
    (14100, 14040)
    >>> dpsgd(1.1, 256, 100)
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: sample_rate must be in (0, 1], got 256: did you mean batch_size=256 with dataset_size=N (--batch-size 256 --dataset-size N)?
    """
    n, s, r, u = _common(dataset_size, sampling, relation, unit)
    phase = make_phase(noise_multiplier, sample_rate, steps, batch_size=batch_size, dataset_size=n,
                       epochs=epochs, sampling=s, max_batch_size=max_batch_size, drop_last=drop_last)
    return DPSGD((phase,), s, r, n, u, examples_per_user)


def dpsgd_schedule(phases: Sequence[Any], *, dataset_size: int | None = None, sampling: str = "poisson",
                   relation: str = "add-remove", unit: str = "example",
                   examples_per_user: int | None = None) -> DPSGD:
    """DP-SGD whose noise multiplier, batch size or sample rate change during training.

    Parameters
    ----------
    phases : list of dict or tuple
        Each a dict with the arguments of :func:`dpsgd` for that phase (noise_multiplier;
        sample_rate or batch_size; steps or epochs; max_batch_size), or a tuple
        (noise_multiplier, sample_rate, steps).

    Examples
    --------
    >>> dpsgd_schedule([(1.0, 0.01, 100), {"noise_multiplier": 2.0, "sample_rate": 0.02, "steps": 50}]).steps
    150
    """
    n, s, r, u = _common(dataset_size, sampling, relation, unit)
    if isinstance(phases, (str, bytes)) or not isinstance(phases, Iterable) or getattr(phases, "ndim", 1) == 0:
        raise ParameterError(f"phases must be a list of phases, got {phases!r}", "phases")
    out = []
    for i, ph in enumerate(list(phases)):
        try:
            if isinstance(ph, dict):
                extra = set(ph) - {"noise_multiplier", "sample_rate", "steps", "batch_size", "epochs",
                                   "max_batch_size", "participations", "drop_last"}
                if extra:
                    raise ParameterError(f"unknown field(s): {', '.join(sorted(extra))}", "phases")
                if "noise_multiplier" not in ph:
                    raise ParameterError("noise_multiplier is required", "phases")
                args, written = _spec_args(ph)
                out.append(make_phase(ph["noise_multiplier"], **args, dataset_size=n, sampling=s,
                                      drop_last=ph.get("drop_last", False),
                                      participations=ph.get("participations")))
                _check_written(out[-1], written)
            elif isinstance(ph, (list, tuple)) and len(ph) == 3:
                out.append(make_phase(ph[0], ph[1], ph[2], dataset_size=n, sampling=s))
            else:
                raise ParameterError(f"must be a dict or a (noise_multiplier, sample_rate, steps) triple, got {ph!r}", "phases")
        except ParameterError as exc:  # still naming the argument
            raise ParameterError(f"phases[{i}]: {exc}", exc.parameter, exc.parameters) from None
        except ValueError as exc:
            raise ParameterError(f"phases[{i}]: {exc}", "phases") from None
    if not out:
        raise ParameterError("phases must be a non-empty list of phases, got []", "phases")
    return DPSGD(tuple(out), s, r, n, u, examples_per_user)



def dpsgd_from_training(noise_multiplier: float, *, sample_rate: float | None = None,
                        batch_size: int | None = None, dataset_size: int | None = None,
                        steps: int | None = None, epochs: float | None = None, **kwargs: Any) -> DPSGD:
    """Kept for callers of the keyword-only form: :func:`dpsgd`.

    >>> dpsgd_from_training(9.4, batch_size=16384, dataset_size=50000, steps=2000).sample_rate
    0.32768
    """
    return dpsgd(noise_multiplier, sample_rate, steps, batch_size=batch_size, dataset_size=dataset_size,
                 epochs=epochs, **kwargs)

def dpsgd_from_opacus_history(history: Sequence[Any], **kwargs: Any) -> DPSGD:
    """DP-SGD from an Opacus accountant's ``history``: a list of
    (noise_multiplier, sample_rate, num_steps) triples, one per phase (Opacus
    ``RDPAccountant.history`` / ``PRVAccountant.history``). Opacus samples with Poisson
    (its ``DPDataLoader``) under add/remove, fdpkit's defaults; other keywords as for
    :func:`dpsgd_schedule`.

    Examples
    --------
    >>> dpsgd_from_opacus_history([(1.1, 0.004, 1000), (1.1, 0.004, 500)]).steps
    1500
    """
    if isinstance(history, (str, bytes, dict)) or not isinstance(history, Iterable) or getattr(history, "ndim", 1) == 0:
        raise ParameterError(f"history must be a list of (noise_multiplier, sample_rate, steps), got {history!r}", "history")
    rows = []
    for i, h in enumerate(list(history)):
        if not isinstance(h, (list, tuple)) or len(h) != 3:
            raise ParameterError(f"history[{i}] must be a (noise_multiplier, sample_rate, steps) triple, got {h!r}", "history")
        rows.append(tuple(h))
    if not rows:
        raise ParameterError("history must hold at least one (noise_multiplier, sample_rate, steps) entry, got []", "history")
    try:
        return dpsgd_schedule(rows, **kwargs)
    except ValueError as exc:
        named = getattr(exc, "parameter", None)  # a keyword argument's own error keeps its name
        raise ParameterError(str(exc).replace("phases[", "history[", 1),
                             named if named in kwargs else "history") from None
