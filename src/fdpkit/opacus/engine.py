r"""What ``PrivacyEngine.make_private`` did to the loader, remembered on the engine's accountant.

Opacus's accountants are told a sample rate by the optimizer's step hook and account
Poisson sampling whatever the loader does: ``make_private(poisson_sampling=False)`` keeps a
shuffled loader, yet ``engine.get_epsilon(delta)`` quotes the Poisson (amplified) figure,
several times below what the shuffled run can be certified at. Importing
:mod:`fdpkit.opacus` wraps ``PrivacyEngine.make_private`` so that the loader it returns is
described (:func:`fdpkit.opacus.describe_loader`) and its scheme stored on the engine's
accountant as ``fdpkit_sampling`` (``"poisson"``, ``"shuffled"``, ``"fixed-order"``, or
``"unknown: ..."``). :class:`fdpkit.opacus.FdpkitAccountant` and
:class:`fdpkit.opacus.BudgetGuard` then refuse to state a Poisson figure for a run whose
loader was not Poisson (:func:`require_poisson`), and ``make_private_with_epsilon`` with the
``"fdpkit"`` accountant refuses ``poisson_sampling=False`` (its noise would be calibrated for
Poisson sampling). Nothing else of Opacus changes.
"""

from __future__ import annotations

import functools
from typing import Any

from fdpkit.errors import ParameterError
from fdpkit.opacus.accountant import ATTRIBUTE, MECHANISM, require_poisson  # noqa: F401  (re-exported)
from fdpkit.opacus.loader import describe_loader


def note_loader(accountant: Any, data_loader: Any) -> str:
    """Store ``data_loader``'s scheme on ``accountant``; a non-Poisson scheme sticks (a later
    Poisson loader does not make earlier shuffled steps Poisson)."""
    try:
        scheme = describe_loader(data_loader).scheme
    except ValueError as exc:
        scheme = f"unknown: {exc}"
    previous = getattr(accountant, ATTRIBUTE, None)
    if previous is None or previous == "poisson":
        try:
            setattr(accountant, ATTRIBUTE, scheme)
        except AttributeError:  # an accountant that takes no attributes: nothing to remember
            pass
    return scheme


def install() -> None:
    """Wrap ``PrivacyEngine.make_private`` and ``make_private_with_epsilon`` (idempotent)."""
    from opacus.privacy_engine import PrivacyEngine

    make_private = PrivacyEngine.make_private
    if not getattr(make_private, "_fdpkit_wrapped", False):
        @functools.wraps(make_private)
        def wrapped_make_private(self: Any, *args: Any, **kwargs: Any) -> Any:
            out = make_private(self, *args, **kwargs)
            note_loader(self.accountant, out[-1])  # (module, optimizer[, criterion], data_loader)
            return out

        wrapped_make_private._fdpkit_wrapped = True  # type: ignore[attr-defined]
        PrivacyEngine.make_private = wrapped_make_private  # type: ignore[method-assign]

    with_epsilon = PrivacyEngine.make_private_with_epsilon
    if not getattr(with_epsilon, "_fdpkit_wrapped", False):
        @functools.wraps(with_epsilon)
        def wrapped_with_epsilon(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self.accountant.mechanism() == MECHANISM and kwargs.get("poisson_sampling", True) is False:
                raise ParameterError(
                    "make_private_with_epsilon with the 'fdpkit' accountant calibrates the noise for "
                    "Poisson sampling; with poisson_sampling=False the shuffled run would exceed "
                    "target_epsilon. Use poisson_sampling=True, or calibrate the shuffled run with "
                    "fdpkit.calibrate_dpsgd and call make_private", "poisson_sampling")
            return with_epsilon(self, *args, **kwargs)

        wrapped_with_epsilon._fdpkit_wrapped = True  # type: ignore[attr-defined]
        PrivacyEngine.make_private_with_epsilon = wrapped_with_epsilon  # type: ignore[method-assign]
