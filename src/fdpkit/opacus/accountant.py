r"""A certified Opacus accountant: fdpkit's PLD accounting behind Opacus's ``IAccountant``.

Opacus 1.6 builds accountants from a registry (``opacus.accountants.registry``); importing
:mod:`fdpkit.opacus` registers :class:`FdpkitAccountant` as ``"fdpkit"``, so
``PrivacyEngine(accountant="fdpkit")`` and ``make_private_with_epsilon`` use it.

What it certifies
-----------------
The history is Opacus's: (noise multiplier sigma, sample rate q, steps T) triples, one per
phase, as the optimizer's step hook reports them. :meth:`FdpkitAccountant.get_epsilon` is
*by construction* the number fdpkit's report gives for that history:

    fp.privacy_report(fp.dpsgd_from_opacus_history(acc.history)).epsilon_for_delta(delta)

that is Poisson subsampled Gaussian steps under add/remove, composed with dp_accounting's
pessimistic PLD (discretization 1e-4), epsilon read from the PLD's own privacy profile
(both directions). It is an upper bound on the true epsilon of the history (Gomez et al.
Sec. 3; Doroshenko et al. 2022), never the central-limit estimate Opacus's "gdp" gives.

The accountant trusts that the loader sampled with Poisson (Opacus's ``DPDataLoader``).
:func:`fdpkit.opacus.privacy_report` checks the loader and accounts what really ran
(shuffled batches, a fixed order) instead.

Cost
----
One accounting per distinct history: the composition is cached (keyed by the history),
and the single step's PMF is kept between histories (:func:`fdpkit.accounting.shared_single_steps`
with a persistent store), so a per-epoch ``get_epsilon`` costs one composition of the
cached step however many deltas are asked,
and ``get_mu``/``report`` add one report on top. Opacus's ``get_noise_multiplier``
bisects on ``get_epsilon`` with a fresh accountant (every probe an exact certified
epsilon; the cache is shared between instances); ``make_private_with_epsilon`` is routed
to :func:`fdpkit.calibrate_dpsgd` instead (:mod:`fdpkit.opacus.calibration`), about 8x
faster.
"""

from __future__ import annotations

from collections import OrderedDict
from copy import deepcopy
from typing import Any, Mapping

from opacus.accountants.accountant import IAccountant

from fdpkit._numerics import check_probability, check_scalar
from fdpkit.errors import ParameterError
from fdpkit.accounting import Accounting, account, shared_single_steps
from fdpkit.accounting._resolution import choose_discretization
from fdpkit.mechanisms import DPSGD, dpsgd_from_opacus_history, to_dp_event
from fdpkit.mechanisms._opacus_state import COMPATIBLE, state_history
from fdpkit.vocabulary import OPACUS_RECORDED_KEY, OPACUS_SAMPLING_KEY
from fdpkit.guarantee.privacy import privacy_report

#: Name under which the accountant is registered with Opacus.
MECHANISM = "fdpkit"
#: Attribute of an accountant holding the scheme of the loader(s) ``make_private`` returned
#: (set by :mod:`fdpkit.opacus.engine`).
ATTRIBUTE = OPACUS_SAMPLING_KEY
#: Distinct histories whose accounting is kept (shared between instances).
CACHE_SIZE = 64

_ACCOUNTINGS: "OrderedDict[tuple, Accounting]" = OrderedDict()
#: Single-step PMFs (subsampled Gaussian at one sigma, q), reused by later histories: the
#: composition is then the only work of a new epoch, and the numbers are unchanged.
_STEPS: dict = {}
_REPORTS: "OrderedDict[tuple, Any]" = OrderedDict()


def _remember(store: OrderedDict, key: tuple, value: Any) -> Any:
    store[key] = value
    store.move_to_end(key)
    while len(store) > CACHE_SIZE:
        store.popitem(last=False)
    return value


def _history_key(history: Any) -> tuple:
    """The history as a hashable tuple of (float, float, int) rows (validated by fdpkit)."""
    mech = dpsgd_from_opacus_history(history)  # validates: ValueError names history[i]
    return tuple((p.noise_multiplier, p.sample_rate, p.steps) for p in mech.phases)


def _plain(value: Any) -> Any:
    """A NumPy scalar or 0-d tensor as a Python float; anything else unchanged (validated later)."""
    if value is None or isinstance(value, (bool, str, bytes)) or type(value) in (int, float):
        return value
    if isinstance(value, (int, float)):  # np.float64 subclasses float
        return float(value)
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", None) == 0:
        try:
            v = item()
        except (TypeError, ValueError, RuntimeError):
            return value
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else value
    return value


def require_poisson(accountant: Any, what: str) -> None:
    """Raise :class:`fdpkit.errors.ParameterError` (``poisson_sampling``) when ``make_private``
    gave ``accountant`` a loader that does not sample with Poisson."""
    scheme = getattr(accountant, ATTRIBUTE, None)
    if scheme is None or scheme == "poisson":
        return
    if scheme.startswith("unknown: "):
        raise ParameterError(
            f"{what} assumes Poisson sampling, but make_private (poisson_sampling=False) returned a loader "
            f"with no sound accounting: {scheme[len('unknown: '):]}", "poisson_sampling")
    raise ParameterError(
        f"{what} assumes Poisson sampling, but make_private returned a loader that samples "
        f"{scheme!r} (poisson_sampling=False): the Poisson figure would understate the run's privacy "
        "loss. Use fdpkit.opacus.privacy_report(engine, data_loader), which accounts the batches that "
        "ran, or make_private(poisson_sampling=True)", "poisson_sampling")


class FdpkitAccountant(IAccountant):
    """Opacus accountant with fdpkit's certified (pessimistic PLD) composition.

    ``history`` is a list of (noise_multiplier, sample_rate, steps) triples, as for every
    Opacus accountant. Queries are cached per history (see the module docs).

    Examples
    --------
    >>> acc = FdpkitAccountant()
    >>> for _ in range(100):
    ...     acc.step(noise_multiplier=1.0, sample_rate=0.01)
    >>> acc.history, len(acc)
    ([(1.0, 0.01, 100)], 100)
    >>> eps = acc.get_epsilon(1e-5)
    >>> import fdpkit as fp
    >>> eps == fp.privacy_report(fp.dpsgd_from_opacus_history(acc.history)).epsilon_for_delta(1e-5)
    True
    """

    def __init__(self) -> None:
        self.history: list = []
        #: Scheme of the loader ``make_private`` returned (None: not made private through an
        #: engine; see :mod:`fdpkit.opacus.engine`). A non-Poisson scheme makes the Poisson
        #: figures (``get_epsilon``, ``get_mu``, ``get_tpr``, ``report``) an error.
        self.fdpkit_sampling: str | None = None
        #: Which ledger releases hold the history's first steps (written by
        #: :class:`fdpkit.opacus.BudgetGuard`, kept by the state dict; see :mod:`fdpkit.mechanisms._opacus_state`).
        self.fdpkit_recorded: dict | None = None

    def _require_poisson(self, what: str) -> None:
        require_poisson(self, what)

    # --- the IAccountant interface -------------------------------------------------------
    @classmethod
    def mechanism(cls) -> str:
        """The name Opacus's accountant registry knows this accountant by (``"fdpkit"``)."""
        return MECHANISM

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimizer step (merged into the last phase when nothing changed).

        NumPy and 0-d torch numbers are stored as Python floats (so that the state dict stays
        plain data for ``torch.load(weights_only=True)`` and JSON); the values are validated
        when the history is accounted (a bad one is an error naming ``history[i]``)."""
        noise_multiplier, sample_rate = _plain(noise_multiplier), _plain(sample_rate)
        if self.history:
            nm, q, t = self.history[-1]
            if nm == noise_multiplier and q == sample_rate:
                self.history[-1] = (nm, q, t + 1)
                return
        self.history.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        try:
            return int(sum(int(t) for _, _, t in self.history))
        except (TypeError, ValueError):
            _history_key(self.history)  # the named error (history[i]: ...)
            raise

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """Certified ε at ``delta`` for the steps taken so far (0 before any step).

        Equal to ``fp.privacy_report(fp.dpsgd_from_opacus_history(self.history))
        .epsilon_for_delta(delta)``. Extra arguments (Opacus forwards ``make_private_with_epsilon``'s
        keywords here) are accepted and ignored: fdpkit's accounting has no tuning knobs
        that could make it optimistic.
        """
        d = check_scalar("delta", check_probability("delta", delta))
        if not self.history:
            return 0.0
        self._require_poisson("get_epsilon")
        return float(self.accounting().epsilon_for_delta(d))

    # --- fdpkit's readings ------------------------------------------------------------------
    def dpsgd(self) -> DPSGD:
        """The history as an fdpkit mechanism (Poisson sampling, add/remove)."""
        if not self.history:
            raise ValueError("history is empty: no optimizer step has been accounted yet")
        return dpsgd_from_opacus_history(self.history)

    def dp_event(self) -> dict:
        """The history as dp_accounting's DpEvent (its JSON dict form, :func:`fdpkit.to_dp_event`):
        ``SelfComposed(PoissonSampled(q, Gaussian(sigma)), T)`` per phase; ``ParameterError``
        (``poisson_sampling``) when the loader did not sample with Poisson."""
        self._require_poisson("dp_event")
        return to_dp_event(self.dpsgd())

    def accounting(self) -> Accounting:
        """The (cached) accounting of the history: curve and privacy profile."""
        key = _history_key(self.history) if self.history else ()
        hit = _ACCOUNTINGS.get(key)
        if hit is not None:
            _ACCOUNTINGS.move_to_end(key)
            return hit
        with shared_single_steps(_STEPS):  # the single step is built once per (sigma, q)
            mech = self.dpsgd()  # the report's discretization (finer only at tiny sample rates)
            acc = account(mech, discretization=choose_discretization(mech)[0])
        if len(_STEPS) > CACHE_SIZE:
            _STEPS.clear()
        return _remember(_ACCOUNTINGS, key, acc)

    def report(self):
        """The full :class:`fdpkit.PrivacyReport` of the history (cached)."""
        key = _history_key(self.history) if self.history else ()
        self._require_poisson("report")
        hit = _REPORTS.get(key)
        if hit is not None:
            return hit
        with shared_single_steps(_STEPS):
            report = privacy_report(self.dpsgd())
        return _remember(_REPORTS, key, report)

    def get_mu(self) -> float:
        """Tight pessimistic μ-GDP of the steps so far (0 before any step); its regret
        and FPR range are in :meth:`report`."""
        if not self.history:
            return 0.0
        self._require_poisson("get_mu")
        return float(self.report().mu)

    def get_tpr(self, fpr: float) -> float:
        """Certified bound on any membership attack's TPR at ``fpr`` (from the numeric curve)."""
        a = check_scalar("fpr", check_probability("fpr", fpr))
        if not self.history:
            return a
        self._require_poisson("get_tpr")
        return float(self.accounting().curve.tpr(a))

    # --- checkpoints -----------------------------------------------------------------------
    def state_dict(self, destination: Any = None) -> Any:
        """``{"history": [...], "mechanism": "fdpkit"}`` (Opacus's layout), with
        ``fdpkit_sampling`` for a run that did not sample with Poisson and ``fdpkit_recorded``
        once a :class:`~fdpkit.opacus.BudgetGuard` recorded steps of the history in a ledger."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(list(self.history))
        destination["mechanism"] = self.mechanism()
        scheme = getattr(self, ATTRIBUTE, None)
        if scheme not in (None, "poisson"):  # a shuffled run's file must not read as a Poisson one
            destination[ATTRIBUTE] = scheme
        recorded = getattr(self, OPACUS_RECORDED_KEY, None)
        if recorded:
            destination[OPACUS_RECORDED_KEY] = deepcopy(recorded)
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load a state dict of this accountant or of Opacus's RDP, PRV or GDP accountant
        (their histories mean the same); the history is validated."""
        if not isinstance(state_dict, Mapping) or not state_dict:
            raise ValueError(f"state_dict must be a non-empty mapping with 'history' and 'mechanism', "
                             f"got {state_dict!r}")
        for k in ("history", "mechanism"):
            if k not in state_dict:
                raise ValueError(f"state_dict has no key {k!r}; cannot load it into FdpkitAccountant")
        if state_dict["mechanism"] not in COMPATIBLE:
            raise ValueError(f"state_dict['mechanism'] must be one of {', '.join(COMPATIBLE)}, got "
                             f"{state_dict['mechanism']!r}")
        raw = state_dict["history"]
        if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, (list, tuple)):
            raise ParameterError(f"state_dict['history'] must be a list of (noise_multiplier, sample_rate, "
                                 f"steps), got {raw!r}", "state_dict")
        history = [tuple(h) if isinstance(h, (list, tuple)) else h for h in raw]
        scheme = state_dict.get(ATTRIBUTE)
        if scheme is not None and not isinstance(scheme, str):
            raise ParameterError(f"state_dict[{ATTRIBUTE!r}] must be a sampling scheme's name, got {scheme!r}",
                                 "state_dict")
        recorded = state_dict.get(OPACUS_RECORDED_KEY)
        if recorded is not None and not isinstance(recorded, Mapping):
            raise ParameterError(f"state_dict[{OPACUS_RECORDED_KEY!r}] must be a mapping (what a BudgetGuard "
                                 f"recorded), got {recorded!r}", "state_dict")
        # validate before replacing anything; keep the validated numbers (floats, int steps)
        self.history = list(_history_key(history)) if history else []
        # what a guard recorded of this history (checked against the ledger by the next guard)
        setattr(self, OPACUS_RECORDED_KEY, deepcopy(dict(recorded)) if recorded is not None else None)
        if scheme not in (None, "poisson"):  # steps that ran without Poisson sampling: never Poisson figures
            setattr(self, ATTRIBUTE, scheme)


def history_from_state(obj: Any) -> list[tuple[float, float, int]]:
    """A validated history from an accountant ``state_dict``, a ``{"history": ...}`` mapping,
    a checkpoint with ``privacy_accountant_state_dict`` or a plain list of triples."""
    obj = state_history(obj, "the file")
    key = _history_key(obj)
    return [(nm, q, t) for nm, q, t in key]

