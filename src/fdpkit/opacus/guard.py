r"""Training runs into the ledger: stop before a dataset's hard limit, record the run at the end.

:class:`BudgetGuard` asks the ledger once, before training, for the **last allowed step**:
the largest T <= ``max_steps`` such that releasing DP-SGD (sigma, q, T steps) on top of
the dataset's released total crosses no hard limit (:meth:`fdpkit.ledger.Ledger.check`,
bisection on T: the total is non-decreasing in T, so about log2(max_steps) compositions,
all before the first step). During training it only compares step counts: no accounting
per step. When training ends it records the run (the accountant's history, Poisson
sampling, add/remove) as one release: proposed, approved and released in one transaction.

A run resumed from a checkpoint carries the steps of the run before it in the accountant's
history: those a guard already recorded (and the ledger released) are counted and recorded
once, not again (:mod:`fdpkit.mechanisms._opacus_state`); the guard counts and records only the rest.
"""

from __future__ import annotations

import warnings
from typing import Any

from fdpkit.mechanisms import dpsgd, dpsgd_from_opacus_history
from fdpkit.accounting import shared_single_steps
from fdpkit.opacus.accountant import require_poisson
from fdpkit.mechanisms._opacus_state import after_prefix, recorded_in
from fdpkit.vocabulary import OPACUS_RECORDED_KEY


class BudgetExhausted(RuntimeError):
    """Raised by an attached optimizer instead of a step that would cross the hard limit."""


class BudgetGuard:
    """Stop DP-SGD before the next step would cross ``dataset``'s hard limit in ``ledger``.

    Parameters
    ----------
    ledger : fdpkit.ledger.Ledger
    dataset : str
    privacy_engine : opacus.PrivacyEngine or an Opacus accountant
        Whose history counts the steps taken (and is recorded at the end).
    noise_multiplier, sample_rate : float
        What every step of the run uses (a step with other values is an error: the last
        allowed step was computed for these).
    max_steps : int
        The most steps training would take without the guard (the search's upper end).
    title, user : str
        The release's title and who proposes it.
    approver : str, optional
        Who approves and releases the run when it ends (four-eyes: someone other than
        ``user``, unless the dataset relaxes it). Without one the run is only proposed, for an
        approver to decide in the ledger.
    report : bool
        Store the privacy report (JSON and PDF) with the release.

    Notes
    -----
    A run resumed from a checkpoint (``PrivacyEngine.load_checkpoint`` with the ``"fdpkit"``
    accountant) keeps which of its steps an earlier guard recorded: steps already *released*
    in ``dataset`` are in its total, so they are neither counted again (``steps_taken``,
    ``last_allowed_step`` count the new steps) nor recorded again (the release holds the new
    steps). Steps recorded only as a proposal count as this run's; the proposal is withdrawn
    when this run's release, which covers them, is recorded. Steps no guard recorded (or
    another accountant's, whose state dict cannot carry the record) count as this run's.
    Make the guard after ``load_checkpoint``: it reads the record when it is made.

    Examples
    --------
    ```python
    guard = BudgetGuard(ledger, "mnist", engine, noise_multiplier=1.1, sample_rate=0.004,
                        max_steps=20_000, title="CNN run 7", user="ana")
    with guard:                       # records the run when the block ends
        guard.attach(optimizer)       # optimizer.step() raises BudgetExhausted in time
        for epoch in range(epochs):
            for x, y in loader:
                ...
    ```
    """

    def __init__(self, ledger: Any, dataset: str, privacy_engine: Any, *, noise_multiplier: float,
                 sample_rate: float, max_steps: int, title: str, user: str, approver: str | None = None,
                 report: bool = True) -> None:
        probe = dpsgd(noise_multiplier, sample_rate, max_steps)  # validates the three numbers
        self.ledger, self.dataset = ledger, dataset
        self.accountant = getattr(privacy_engine, "accountant", privacy_engine)
        if not hasattr(self.accountant, "history"):
            raise ValueError(f"privacy_engine must be an Opacus PrivacyEngine or accountant, got "
                             f"{type(privacy_engine).__name__}")
        self.noise_multiplier, self.sample_rate = probe.noise_multiplier, probe.sample_rate
        self.max_steps, self.title, self.user, self.report = probe.steps, title, user, report
        self.approver = approver
        self.release = None
        #: the parts of the history already released in ``dataset`` (and proposals they replace)
        self.recorded = recorded_in(ledger, dataset, self.accountant)
        self.last_allowed_step = self._last_allowed(probe)

    def _blocked(self, steps: int) -> bool:
        mech = dpsgd(self.noise_multiplier, self.sample_rate, steps)
        return bool(self.ledger.check(self.dataset, mech.to_dict()).blocked)

    def _last_allowed(self, probe) -> int:
        with shared_single_steps():  # the bisection composes one single step many times
            return self._bisect(probe)

    def _bisect(self, probe) -> int:
        if not self._blocked(probe.steps):
            return probe.steps
        if self._blocked(1):
            return 0
        low, high = 1, probe.steps  # low allowed, high blocked
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (mid, high) if not self._blocked(mid) else (low, mid)
        return low

    # --- during training --------------------------------------------------------------------
    def _new_history(self) -> list:
        """The accountant's history less the steps already released (a resumed run)."""
        rest = after_prefix(self.accountant.history, self.recorded.prefix)
        if rest is None:  # the history was replaced since the guard was made
            raise ValueError(f"the accountant's history {self.accountant.history} no longer begins with the steps "
                             f"already released in {self.dataset!r} ({self.recorded.prefix})")
        return rest

    def steps_taken(self) -> int:
        """Steps in the accountant's history that are not yet in the ledger (those of a
        resumed run that an earlier guard recorded are), each checked to use the guarded (σ, q);
        ``ParameterError`` (``poisson_sampling``) when ``make_private`` returned a non-Poisson
        loader (the guard's limit and the recorded run assume Poisson sampling)."""
        require_poisson(self.accountant, "BudgetGuard")
        total = 0
        for i, (nm, q, t) in enumerate(self._new_history()):
            if nm != self.noise_multiplier or q != self.sample_rate:
                raise ValueError(f"new history[{i}] = ({nm}, {q}, {t}) differs from the guarded noise_multiplier="
                                 f"{self.noise_multiplier} and sample_rate={self.sample_rate}: the last allowed "
                                 "step no longer applies")
            total += int(t)
        return total

    def allows_next_step(self) -> bool:
        """Whether one more step stays within the hard limit (a comparison of counts)."""
        return self.steps_taken() < self.last_allowed_step

    def attach(self, optimizer: Any) -> Any:
        """Make ``optimizer.step()`` raise :class:`BudgetExhausted` instead of a step past the limit."""
        step = optimizer.step

        def guarded_step(*args: Any, **kwargs: Any):
            if not self.allows_next_step():
                raise BudgetExhausted(f"step {self.steps_taken() + 1} would cross the hard limit of dataset "
                                      f"{self.dataset!r} (last allowed step: {self.last_allowed_step})")
            return step(*args, **kwargs)

        optimizer.step = guarded_step
        return optimizer

    # --- at the end ---------------------------------------------------------------------------
    def record(self):
        """Record the run's new steps (nothing when none was taken): proposed, or released
        with an ``approver``; returns the release. The accountant then remembers what was
        recorded (kept by its state dict), so that a run resumed from a later checkpoint
        records only its own steps."""
        if self.release is not None or not self.accountant.history:
            return self.release
        if not self.steps_taken():  # also the consistency check
            return self.release
        rows = self._new_history()
        mech = dpsgd_from_opacus_history(rows)
        if self.approver is None:
            self.release = self.ledger.propose(self.dataset, mech.to_dict(), title=self.title, user=self.user)
        else:
            self.release = self.ledger.record(self.dataset, mech.to_dict(), title=self.title, user=self.user,
                                              approver=self.approver, report=self.report)
        setattr(self.accountant, OPACUS_RECORDED_KEY, self.recorded.marker(self.dataset, self.release.id, rows))
        for rid in self.recorded.pending:  # their steps are in this release: withdraw them (after, never before)
            try:
                self.ledger.withdraw(rid, user=self.user,
                                     comment=f"superseded by release {self.release.id} (the resumed run)")
            except ValueError as exc:  # LedgerError: e.g. another user proposed it; the run stays recorded
                warnings.warn(f"release {rid} holds steps that release {self.release.id} holds too and could not be "
                              f"withdrawn ({exc}): withdraw or reject it, or they count twice", RuntimeWarning,
                              stacklevel=2)
        return self.release

    def __enter__(self) -> "BudgetGuard":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.record()
        return exc_type is BudgetExhausted  # stopping at the limit ends training normally
