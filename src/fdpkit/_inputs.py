"""Inputs as users type them (a bottom module, importable by every layer): the fraction parser
and the plausibility checks, warnings rather than errors.

Values that are valid but probably not meant (a prior of 1, a delta of one in a hundred, a
mu of 50) are answered, with a warning that says what the user may have meant. Every
interface (library, CLI, web) shows the same sentences from :func:`plausibility_warnings`.

Percentages: :func:`parse_fraction` reads "5%" as 0.05, so CLI options and form fields that
hold probabilities accept either spelling; any other text is refused with a hint.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from fdpkit.errors import ParameterError

#: delta above this is a weak guarantee whatever n is (common advice: delta << 1/n, <= 1e-5).
DELTA_MAX_PLAUSIBLE = 1e-3
#: mu above this is almost certainly an epsilon typed into the mu field.
MU_MAX_PLAUSIBLE = 10.0
#: epsilon above this gives essentially no protection.
EPSILON_MAX_PLAUSIBLE = 20.0

#: Fields read as probabilities (fractions in [0, 1]) where "5%" means 0.05.
FRACTION_FIELDS = ("prior", "fpr", "delta", "delta_prime", "level", "alpha", "required_power", "max_relative_loss",
                   "max_attack_power", "sample_rate", "recall", "max_power", "p0", "p1", "p2")


#: A plain decimal number ("-1.5", ".5", "2e-3"): what a number typed by a user (a CLI option, a
#: cell of a score file) may be written as. Python's float() also reads "1_000", "١٢" (other
#: scripts' digits) and surrounding whitespace of every kind; none of those is taken as a number.
DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
#: The words for the non-finite values (read as numbers; each caller refuses them in its own words).
NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def is_plain_number(text: str) -> bool:
    """Whether ``text`` is a plain decimal number (or nan/inf spelled out), with nothing around it.

    >>> is_plain_number("2e-3"), is_plain_number("-inf"), is_plain_number("1_000"), is_plain_number("\u0661")
    (True, True, False, False)
    """
    return bool(DECIMAL.fullmatch(text) or NON_FINITE.fullmatch(text))


def beyond_floats(text: str) -> str | None:
    """Why the plain decimal number ``text`` cannot be read as the number it names, or None:
    ``float`` reads a nonzero number below the smallest positive float (about 4.9e-324) as 0
    and one above the largest (about 1.8e308) as inf, so that "1e-400" silently became a zero
    delta and "1e400" was refused as "got inf". Text that is not a plain decimal number
    (nan, inf spelled out, "1_000") is left to the caller's own check.

    >>> beyond_floats("1e-400"), beyond_floats("1e-300"), beyond_floats("0e-400"), beyond_floats("nan")
    ("'1e-400' is too small to tell from 0 (the smallest positive number is about 4.9e-324)", None, None, None)
    >>> beyond_floats("-1e400")
    "'-1e400' is beyond the largest number (about 1.8e308)"
    """
    raw = str(text).strip(" \t")
    if not DECIMAL.fullmatch(raw):
        return None
    v = float(raw)
    shown = repr(raw) if len(raw) <= 40 else f"{raw[:12]!r}... ({len(raw)} characters)"
    if math.isinf(v):
        return f"{shown} is beyond the largest number (about 1.8e308)"
    if v == 0.0 and re.search(r"[1-9]", re.split(r"[eE]", raw)[0]):
        return f"{shown} is too small to tell from 0 (the smallest positive number is about 4.9e-324)"
    return None


def parse_decimal(text: Any, name: str) -> float:
    """``text`` as a float when it is a plain decimal number (see :data:`DECIMAL`; ASCII spaces
    around it are ignored); otherwise a ValueError naming ``name``.

    >>> parse_decimal(" 1e3", "--steps")
    1000.0
    >>> parse_decimal("1_000", "--steps")
    Traceback (most recent call last):
    ValueError: --steps must be a plain decimal number such as 2, 0.5 or 1e-3, got '1_000'
    """
    raw = str(text).strip(" \t")
    if not is_plain_number(raw):
        raise ValueError(f"{name} must be a plain decimal number such as 2, 0.5 or 1e-3, got {text!r}")
    why = beyond_floats(raw)
    if why is not None:
        raise ValueError(f"{name}: {why}")
    return float(raw)


def parse_fraction(text: Any, name: str) -> float:
    """A number, or a percentage "5%" read as 0.05.

    Examples
    --------
    >>> parse_fraction("5%", "prior"), parse_fraction("0.05", "prior")
    (0.05, 0.05)
    >>> parse_fraction("1_000%", "prior")
    Traceback (most recent call last):
    fdpkit.errors.ParameterError: prior must be a number such as 0.05 (or 5%), got '1_000%'
    >>> parse_fraction("five", "prior")
    Traceback (most recent call last):
    fdpkit.errors.ParameterError: prior must be a number such as 0.05 (or 5%), got 'five'
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        v = float(text)
    else:
        raw = str(text).strip(" \t") if text is not None else ""
        pct = raw.endswith("%")
        number = raw[:-1].strip(" \t") if pct else raw
        if not is_plain_number(number):  # float() would also read "1_000" and other scripts' digits
            raise ParameterError(f"{name} must be a number such as 0.05 (or 5%), got {text!r}", name)
        why = beyond_floats(number)
        if why is not None:
            raise ParameterError(f"{name}: {why}", name)
        v = float(number)
        if pct:
            v = v / 100.0
    if math.isnan(v):
        raise ParameterError(f"{name} must be a number such as 0.05 (or 5%), got {text!r}", name)
    return v


class DuplicateKeyError(ValueError):
    """A JSON object naming one key twice (see :func:`load_json`)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of :func:`load_json`: a dict, refusing a key named twice."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"names the field {key[:40]!r} twice")
        out[key] = value
    return out


class _NotAFloat:
    """A number literal of :func:`load_json` that no float is: ``NaN``, ``Infinity``, ``1e400``."""

    def __init__(self, text: str, why: str) -> None:
        self.text, self.why = text, why


def _float_or_not(text: str) -> Any:
    why = beyond_floats(text)
    return _NotAFloat(text, why) if why is not None else float(text)


def _constant(text: str) -> _NotAFloat:
    return _NotAFloat(text, f"{text} is not a number JSON allows (only finite numbers are)")


def _first_not_a_float(data: Any, where: str = "") -> tuple[str, _NotAFloat] | None:
    """The path (``phases[1].sigma``) and literal of the first :class:`_NotAFloat` in ``data``."""
    stack = [(where, data)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, _NotAFloat):
            return at, item
        if isinstance(item, dict):
            stack.extend(reversed([(f"{at}.{k}" if at else str(k), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(f"{at}[{i}]", v) for i, v in enumerate(item)]))
    return None


def load_json(text: str | bytes, name: str, *, parameter: str | None = None, parse_float: Any = None) -> Any:
    """JSON a user wrote (a mechanism spec, a schedule), strictly: a ParameterError (its
    message starting with ``name``, its ``parameter`` that argument, default ``name``) for text that is not JSON, nesting deeper than the parser holds, an integer
    longer than Python converts (4,300 digits), an object naming one key twice (``json``
    keeps the last: ``{"sigma": 1, "sigma": 0.01}`` was accounted at sigma 0.01) and a number
    no float is, named by its field: ``NaN``, ``Infinity`` (which ``json`` reads although JSON
    has no such literals) and a literal beyond the floats (``1e400`` was read as inf,
    ``1e-400`` as 0; see :func:`beyond_floats`). A ``parse_float`` given reads the decimal literals instead.

    >>> load_json('{"kind": "gaussian", "sigma": 2}', "mechanism")
    {'kind': 'gaussian', 'sigma': 2}
    >>> load_json('{"sigma": 1, "sigma": 0.01}', "mechanism")
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: mechanism names the field 'sigma' twice
    >>> load_json('{"kind": "gaussian", "sigma": 1e400}', "mechanism")
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: mechanism: sigma: '1e400' is beyond the largest number (about 1.8e308)
    """
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_float=parse_float or _float_or_not,
                          parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"{name} is not valid JSON: {exc}", parameter or name) from None
    except RecursionError:
        raise ParameterError(f"{name} is nested too deeply", parameter or name) from None
    except DuplicateKeyError as exc:
        raise ParameterError(f"{name} {exc}", parameter or name) from None
    except UnicodeDecodeError:
        raise ParameterError(f"{name} is not UTF-8 text", parameter or name) from None
    except ValueError:  # int("9" * 5000): past sys.get_int_max_str_digits()
        import sys

        raise ParameterError(f"{name} holds a number with more than {sys.get_int_max_str_digits():,} digits",
                             parameter or name) from None
    found = _first_not_a_float(data)
    if found is not None:
        where, literal = found
        raise ParameterError(f"{name}: {where + ': ' if where else ''}{literal.why}", parameter or name)
    return data


def _exp_text(x: float) -> str:
    """e^x to three digits, also past the floats (e^710 = 2.23e+308, e^1e4 = 8.81e+4342).

    >>> _exp_text(8.0), _exp_text(1e4), _exp_text(1e308)
    ('2.98e+03', '8.81e+4342', '10^4.34e+307')
    """
    if x <= 700.0:
        return f"{math.exp(x):.3g}"
    exponent = x / math.log(10.0)
    if exponent > 1e6:
        return f"10^{exponent:.3g}"
    k = math.floor(exponent)
    return f"{10.0 ** (exponent - k):.3g}e+{k}"


def plausibility_warnings(*, mu: float | None = None, epsilon: float | None = None,
                          delta: float | None = None, prior: float | None = None,
                          n: float | None = None, deltas: Any = ()) -> list[str]:
    """Warnings for valid but implausible inputs (empty when all look deliberate).

    Parameters
    ----------
    mu, epsilon, delta : float, optional
        A guarantee's parameters.
    prior : float, optional
        An attacker's prior probability of membership.
    n : float, optional
        Number of people in the data, for the δ ≥ 1/n check.
    deltas : sequence of float
        Further deltas (e.g. of several releases) checked like ``delta``.

    Examples
    --------
    >>> plausibility_warnings(prior=1.0)[0][:40]
    'prior = 1 means the attacker already kno'
    >>> plausibility_warnings(mu=1.0, epsilon=1.0, delta=1e-5)
    []
    """
    from fdpkit._numerics import check_real  # NumPy only when called: `import fdpkit._inputs` stays light

    # a string, an array, an integer past the floats, Decimal("NaN"): was a TypeError or OverflowError
    mu, epsilon, delta, prior, n = (None if v is None else check_real(name, v, allow_inf=True, scalar=True)
                                    for name, v in (("mu", mu), ("epsilon", epsilon), ("delta", delta),
                                                    ("prior", prior), ("n", n)))
    deltas = [float(x) for x in check_real("deltas", deltas if deltas is not None else (), allow_inf=True).ravel()]
    out: list[str] = []
    if prior is not None and prior >= 1.0:
        out.append("prior = 1 means the attacker already knows the person is in the data, so no release "
                   "can add risk. Did you mean 1% (0.01)?")
    elif prior is not None and prior == 0.0:
        out.append("prior = 0 means the attacker is certain the person is not in the data: every posterior "
                   "is 0. Did you mean a small prior such as 0.01?")
    if mu is not None and math.isinf(mu) and mu > 0:  # not "far beyond": none at all
        out.append("μ = inf gives no protection at all (an attacker can tell members from non-members "
                   f"perfectly); published settings keep μ below {MU_MAX_PLAUSIBLE:g}.")
    elif mu is not None and mu > MU_MAX_PLAUSIBLE:
        out.append(f"μ = {mu:g} is far beyond any meaningful protection (μ above {MU_MAX_PLAUSIBLE:g} lets "
                   "an attacker identify members almost perfectly). Did you mean ε?")
    if epsilon is not None and math.isinf(epsilon) and epsilon > 0:  # e^ε was "≈ 10^inf"
        out.append("ε = inf gives no protection at all (the guarantee bounds nothing); "
                   f"published deployments use ε below {EPSILON_MAX_PLAUSIBLE:g}.")
    elif epsilon is not None and epsilon > EPSILON_MAX_PLAUSIBLE:
        out.append(f"ε = {epsilon:g} gives essentially no protection (e^ε ≈ {_exp_text(epsilon)}); "
                   f"published deployments use ε below {EPSILON_MAX_PLAUSIBLE:g}.")
    for d in ([delta] if delta is not None else []) + deltas:
        if n is not None and n > 0 and d >= 1.0 / n and d > 0:
            out.append(f"δ = {d:g} is at least 1/n = {1.0 / n:.3g}: a mechanism may then publish one "
                       "person's record outright and still satisfy the guarantee. Use δ well below 1/n.")
        elif d > DELTA_MAX_PLAUSIBLE:
            out.append(f"δ = {d:g} is large: δ is the probability that the ε bound fails, and common "
                       f"practice keeps it at or below 1e-5 and well below 1/n (anything above "
                       f"{DELTA_MAX_PLAUSIBLE:g} is rarely defensible).")
    return out
