"""fdpkit inside the Opacus training loop (optional extra ``fdpkit[opacus]``).

Importing this package registers :class:`FdpkitAccountant` with Opacus 1.6's accountant
registry as ``"fdpkit"``:

    import fdpkit.opacus
    engine = opacus.PrivacyEngine(accountant="fdpkit")

- :class:`FdpkitAccountant`: certified ε, μ (with regret), TPR at FPR, the report;
- :func:`sampling_of` / :func:`describe_loader`: the sampling scheme the loader really uses;
- :func:`privacy_report`: the engine's history read with the loader's real sampling;
- :func:`get_noise_multiplier`: ``make_private_with_epsilon`` with this accountant is solved by
  :func:`fdpkit.calibrate_dpsgd` (installed into ``opacus.privacy_engine`` on import);
- :class:`BudgetGuard`: stop before a ledger's hard limit, record the run when done;
- ``make_private`` remembers the returned loader's sampling scheme on the accountant, so that
  Poisson figures are refused for a shuffled loader (:mod:`fdpkit.opacus.engine`).

Nothing else in fdpkit imports this package.
"""

from opacus.accountants.registry import register_accountant

from fdpkit.opacus.accountant import MECHANISM, FdpkitAccountant, history_from_state
from fdpkit.opacus.calibration import get_noise_multiplier, install
from fdpkit.opacus.engine import install as install_engine_hooks
from fdpkit.opacus.guard import BudgetExhausted, BudgetGuard
from fdpkit.opacus.loader import LoaderSampling, describe_loader, mechanism_of, privacy_report, sampling_of

# force: a reload of this module registers its fresh class in place of the old one
register_accountant(MECHANISM, FdpkitAccountant, force=True)
install()  # make_private_with_epsilon(accountant "fdpkit") -> fdpkit.calibrate_dpsgd
install_engine_hooks()  # make_private remembers the loader's scheme on the accountant

__all__ = [
    "BudgetExhausted",
    "BudgetGuard",
    "FdpkitAccountant",
    "LoaderSampling",
    "describe_loader",
    "get_noise_multiplier",
    "history_from_state",
    "mechanism_of",
    "privacy_report",
    "sampling_of",
]
