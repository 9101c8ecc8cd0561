"""Bad input to a public callable raises :class:`fdpkit.ParameterError` whose ``parameter`` (or
one of its ``parameters``) is the argument at fault, so that the CLI and the web map it to the
option or field without reading the message. About 50 callables raised a plain ValueError
without it (``level must be in (0, 1)``, ``discretization must be in [1e-08, 1]``, ``orders
must be a non-empty list``, ``seed must be an integer``, ...), and ``ZTestSpec(alpha=2)`` named
``level``; ``mu_min_for_power_loss(level=5e-324)`` ended in scipy's bare "f(a) and f(b) must
have different signs". Every row of the hostile-input table (``test_core_hostile.CALLS``) is
walked with each bad value on each argument."""

from __future__ import annotations

import math

import pytest
from test_core_hostile import CALLS, _guarded_call, _params

from fdpkit.errors import ParameterError

BAD = [math.nan, math.inf, -1.0, 0, 1e308, 5e-324, 10**400, True, "1", None, [1.0, math.nan], 2.5, 1e6, object()]

#: Refusals deliberately named by another argument: {callable: {argument: the name used}}.
NAMED_OTHERWISE = {
    # a spec's structure is the "mechanism" (the name the CLI's --mechanism and the web's field use)
    "mechanism_from_dict": {"data": "mechanism"},
    "mechanism_from_json": {"text": "mechanism"},
    # an unreachable power target: the criterion to relax (every argument moves the target)
    "mu_min_for_power_loss": {k: "max_relative_loss" for k in ("data_range", "effect", "level", "n", "sd")},
    # noise so small that no grid holds one step: the cost model names the discretization to raise
    "calibrate_dpsgd": {"noise_multiplier": "discretization"},
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_refusal_names_its_argument(name):
    fn, base = CALLS[name]
    wrong = []
    for param in _params(name):
        for value in BAD:
            try:
                _guarded_call(fn, {**base, param: value})
            except (ValueError, TypeError) as exc:
                named = {getattr(exc, "parameter", None), *getattr(exc, "parameters", ())} - {None}
                ok = isinstance(exc, ParameterError) and (
                    param in named or any(n.startswith(f"{param}[") for n in named)  # "alpha[1]": an element
                    or NAMED_OTHERWISE.get(name, {}).get(param) in named)
                if not ok:
                    wrong.append(f"{name}({param}={value!r}): {type(exc).__name__} naming {sorted(named)}: {exc}")
    assert not wrong, "\n".join(wrong[:10])


def test_the_level_is_named_by_its_public_name():
    from fdpkit import ZTestSpec

    with pytest.raises(ParameterError, match="alpha must be in") as info:
        ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=2.0)
    assert info.value.parameter == "alpha"
