"""fdpkit inside the Opacus training loop (optional extra ``fdpkit[opacus]``).

Importing this package registers :class:`FdpkitAccountant` with Opacus 1.6's accountant
registry as ``"fdpkit"``::

    import fdpkit.opacus
    engine = opacus.PrivacyEngine(accountant="fdpkit")

- :class:`FdpkitAccountant`: certified epsilon, mu (with regret), TPR at FPR, the report;
- :func:`sampling_of` / :func:`describe_loader`: the sampling scheme the loader really uses;
- :func:`privacy_report`: the engine's history read with the loader's real sampling;
- :class:`BudgetGuard`: stop before a ledger's hard limit, record the run when done.

Nothing else in fdpkit imports this package.
"""

from opacus.accountants.registry import register_accountant

from fdpkit.opacus.accountant import MECHANISM, FdpkitAccountant, history_from_state
from fdpkit.opacus.guard import BudgetExhausted, BudgetGuard
from fdpkit.opacus.loader import LoaderSampling, describe_loader, mechanism_of, privacy_report, sampling_of

# force: a reload of this module registers its fresh class in place of the old one
register_accountant(MECHANISM, FdpkitAccountant, force=True)

__all__ = [
    "BudgetExhausted",
    "BudgetGuard",
    "FdpkitAccountant",
    "LoaderSampling",
    "describe_loader",
    "history_from_state",
    "mechanism_of",
    "privacy_report",
    "sampling_of",
]
