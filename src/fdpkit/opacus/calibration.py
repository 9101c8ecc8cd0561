r"""``make_private_with_epsilon`` with the fdpkit accountant: routed to :func:`fdpkit.calibrate_dpsgd`.

Opacus's ``PrivacyEngine.make_private_with_epsilon`` calls
``opacus.accountants.utils.get_noise_multiplier``, which builds a fresh accountant and
bisects on ``get_epsilon`` (doubling sigma from 20, then halving the bracket until epsilon is
within ``epsilon_tolerance`` below the target). With fdpkit's accountant every probe is an
exact certified epsilon, but each is a full PLD composition at discretization 1e-4: about
14 of them (2.4-3 s for 703 steps at q = 256/60000 on 2 shared cores; 37 s before the
accounting got faster).

:func:`get_noise_multiplier` has Opacus's signature. For ``accountant="fdpkit"`` it solves
with :func:`fdpkit.calibrate_dpsgd` (coarse search, then certification at 1e-4: 0.4-0.7 s
for the same run) and returns the smallest noise multiplier whose certified epsilon at
``target_delta`` is at most ``target_epsilon``; the accountant later reports exactly that
epsilon for the run (:class:`fdpkit.opacus.FdpkitAccountant`). Steps are
``epochs / sample_rate`` rounded **up** (Opacus truncates, which can drop a step when the
float quotient falls just below a whole number). Every other accountant goes to Opacus's
own function unchanged.

Importing :mod:`fdpkit.opacus` installs it as the name ``get_noise_multiplier`` in
``opacus.privacy_engine`` (the module-level name ``make_private_with_epsilon`` looks up),
and nowhere else.
"""

from __future__ import annotations

import math
from typing import Any

from opacus.accountants import utils as _opacus_utils

from fdpkit._numerics import check_real
from fdpkit.errors import ParameterError
from fdpkit.opacus.accountant import MECHANISM
from fdpkit.calibrate import calibrate_dpsgd

_OPACUS_GET_NOISE_MULTIPLIER = _opacus_utils.get_noise_multiplier
#: calibrate_dpsgd's argument names -> get_noise_multiplier's (Opacus's) names.
_OPACUS_NAMES = {"epsilon": "target_epsilon", "delta": "target_delta"}
#: Relative slack under which epochs / sample_rate counts as a whole number of steps.
WHOLE_RTOL = 1e-9


def _steps(epochs: Any, sample_rate: float) -> int:
    q = float(check_real("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True, scalar=True))
    exact = float(check_real("epochs", epochs, low=0.0, low_open=True, scalar=True)) / q
    near = round(exact)
    return int(near) if math.isclose(exact, near, rel_tol=WHOLE_RTOL) else math.ceil(exact)


def get_noise_multiplier(*, target_epsilon: float, target_delta: float, sample_rate: float,
                         epochs: int | None = None, steps: int | None = None, accountant: str = "rdp",
                         epsilon_tolerance: float = 0.01, **kwargs: Any) -> float:
    """Opacus's ``get_noise_multiplier``; with ``accountant="fdpkit"`` solved by
    :func:`fdpkit.calibrate_dpsgd` (certified, see the module docs).

    Raises
    ------
    ValueError
        As Opacus does for steps/epochs, and when no noise multiplier meets the target.
    """
    if accountant != MECHANISM:
        return _OPACUS_GET_NOISE_MULTIPLIER(target_epsilon=target_epsilon, target_delta=target_delta,
                                            sample_rate=sample_rate, epochs=epochs, steps=steps,
                                            accountant=accountant, epsilon_tolerance=epsilon_tolerance, **kwargs)
    if (steps is None) == (epochs is None):
        raise ParameterError("get_noise_multiplier takes as input EITHER a number of steps or a number of epochs",
                             "epochs", ("epochs", "steps"))
    t = steps if steps is not None else _steps(epochs, sample_rate)
    try:
        result = calibrate_dpsgd(epsilon=target_epsilon, delta=target_delta, sample_rate=sample_rate, steps=t)
    except ValueError as exc:  # name Opacus's arguments, not calibrate_dpsgd's
        name = _OPACUS_NAMES.get(getattr(exc, "parameter", None) or "", None)
        if name is None:
            raise
        message = str(exc)
        if message.startswith(exc.parameter):  # type: ignore[attr-defined]
            message = name + message[len(exc.parameter):]  # type: ignore[attr-defined]
        raise ParameterError(message, name) from None
    # not converged but met on the safe side (a certified, if not the smallest, sigma): returned
    value, achieved = result.value, (result.achieved or {}).get("epsilon")
    if value is None or achieved is None or not (math.isfinite(value) and achieved <= target_epsilon):
        raise ValueError(f"target_epsilon={target_epsilon!r} at target_delta={target_delta!r} cannot be met "
                         f"with sample_rate={sample_rate!r} and {t} steps: {result.reason}")
    return float(value)


def install() -> None:
    """Make ``opacus.privacy_engine`` call :func:`get_noise_multiplier` (idempotent)."""
    import opacus.privacy_engine as engine_module

    engine_module.get_noise_multiplier = get_noise_multiplier
