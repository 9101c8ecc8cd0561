"""Numerical building blocks shared by every fdpkit module.

Two rules live here so that the rest of the package can rely on them:

1. **Tails keep their digits.** Gaussian quantities are evaluated with survival functions
   (``norm.sf``/``norm.isf``) and in log space, never as ``1 - norm.cdf(x)`` or
   ``norm.ppf(1 - a)``, which lose every digit once the tail probability is below
   machine epsilon (about 1e-16).
2. **Bad input is a ValueError that names the argument and its value.** The validators
   below are the only place where inputs are checked, so that the messages read alike.

Tolerances used across the package are named constants here.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal
from typing import Any

import numpy as np
from scipy import special

from fdpkit.errors import ParameterError

#: Tolerance (absolute, on beta) within which a user-supplied or numeric curve may violate
#: monotonicity, convexity or beta <= 1 - alpha before it is rejected. Violations inside the
#: tolerance are repaired in the pessimistic direction (lower convex hull, clip towards 1 - alpha).
CURVE_TOL = 1e-9

#: Relative safety margin added to a fitted mu so that floating-point rounding in
#: ``isf(alpha) - isf(tpr)`` can never make the reported mu optimistic.
MU_SAFETY_RTOL = 1e-12

#: Largest finite mu/epsilon fdpkit accepts in closed forms. Beyond these the curves are
#: numerically the perfect-distinguishability curve; the limits keep answers finite
#: (e^epsilon stays below the float range: exp(709.8) overflows).
MU_MAX = 1e3
EPSILON_MAX = 700.0


# --------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------
def _is_scalar(value: Any) -> bool:
    return np.ndim(value) == 0


class InputTypeError(ParameterError, TypeError):
    """A value of the wrong type (a bool, a string, a complex number, an object).

    It is both a TypeError (what Python raises for wrong types) and a ValueError (what
    fdpkit's interfaces turn into exit code 2 / HTTP 422), so either ``except`` catches it;
    a :class:`~fdpkit.errors.ParameterError`, so ``.parameter`` names the argument.
    """


#: Largest number of elements any array argument may have (a guard against accidental
#: multi-gigabyte inputs; every public grid and table in fdpkit is far smaller).
MAX_ARRAY_SIZE = 10_000_000


def _reject_type(name: str, value: Any, what: str) -> None:
    raise InputTypeError(f"{name} must be a number, not {what}, got {_short(value)}", name)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
    integer: bool = False,
    scalar: bool = False,
) -> Any:
    """THE validator of numeric input: every public fdpkit callable goes through it.

    Accepts Python ints and floats, NumPy integer and floating scalars, 0-d arrays, and (unless
    ``scalar``) arrays and lists of them. Refuses bools, strings, bytes, complex numbers and
    other objects (:class:`InputTypeError`, a TypeError that is also a ValueError), NaN, and
    (unless ``allow_inf``) infinities; checks the range ``[low, high]`` (``low_open``/
    ``high_open`` exclude the ends) and, with ``integer``, whole numbers. Integers too large
    for a float count as infinite. Every message starts with ``name``, the PUBLIC parameter
    name, and shows the offending value.

    Returns a Python float (or int with ``integer``) when ``scalar``, else a float ndarray.

    >>> check_real("sigma", np.float32(2.5), low=0, low_open=True, scalar=True)
    2.5
    >>> check_real("sigma", True, scalar=True)
    Traceback (most recent call last):
    ...
    fdpkit._numerics.InputTypeError: sigma must be a number, not a bool, got True
    >>> check_real("steps", 10**400, integer=True, scalar=True)
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: steps must be finite, got a number with 401 digits
    """
    if isinstance(value, (bool, np.bool_)):
        _reject_type(name, value, "a bool")
    if isinstance(value, (str, bytes, bytearray)):
        _reject_type(name, value, "a string")
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            too_big = not math.isfinite(float(value))
        except OverflowError:
            too_big = True
        if too_big:
            if not allow_inf:
                raise ParameterError(f"{name} must be finite, got a number with {int_digits(value)} digits", name)
            value = math.inf if value > 0 else -math.inf
        elif integer and scalar:
            _check_range(name, float(value), low, high, low_open, high_open)
            return int(value)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        _reject_type(name, value, "this object")
    if arr.size > MAX_ARRAY_SIZE:
        raise ParameterError(f"{name} may have at most {MAX_ARRAY_SIZE:,} elements, got {arr.size:,}", name)
    kind = arr.dtype.kind
    if kind == "b":
        _reject_type(name, value, "a bool")
    if kind in "USa":
        _reject_type(name, value, "a string")
    if kind == "c":
        _reject_type(name, value, "a complex number")
    if kind == "O":
        flat = []
        for item in arr.ravel():
            if isinstance(item, (bool, np.bool_, str, bytes)) or not isinstance(
                item, (int, float, np.integer, np.floating)
            ):
                _reject_type(name, value, f"a {type(item).__name__}")
            try:
                flat.append(float(item))
            except OverflowError:
                flat.append(math.inf if item > 0 else -math.inf)
        arr = np.asarray(flat, dtype=float).reshape(arr.shape)
    elif kind not in "iuf":
        _reject_type(name, value, f"dtype {arr.dtype}")
    arr = arr.astype(float)
    if scalar and arr.ndim != 0:
        raise ParameterError(f"{name} must be a single number, got an array of shape {arr.shape}", name)
    if np.isnan(arr).any():
        raise ParameterError(f"{name} must not be NaN, got {_show(value)}", name)
    if not allow_inf and np.isinf(arr).any():
        raise ParameterError(f"{name} must be finite, got {_first_bad(arr, np.isinf(arr))}", name)
    if integer:
        bad = np.isfinite(arr) & (arr != np.floor(arr))
        if bad.any():
            raise ParameterError(f"{name} must be a whole number, got {_first_bad(arr, bad)}", name)
    if low is not None or high is not None:
        if arr.ndim == 0:
            _check_range(name, float(arr), low, high, low_open, high_open)
        else:
            if low is not None:
                bad = arr <= low if low_open else arr < low
                if bad.any():
                    raise ParameterError(f"{name} must be {'>' if low_open else '>='} {low:g}, "
                                         f"got {_first_bad(arr, bad)}", name)
            if high is not None:
                bad = arr >= high if high_open else arr > high
                if bad.any():
                    raise ParameterError(f"{name} must be {'<' if high_open else '<='} {high:g}, "
                                         f"got {_first_bad(arr, bad)}", name)
    if scalar:
        v = float(arr) + 0.0  # -0.0 -> 0.0: a mechanism or curve never shows "epsilon=-0.0"
        return int(v) if integer and math.isfinite(v) else v
    return arr


def _check_range(name, v, low, high, low_open, high_open) -> None:
    if low is not None and (v <= low if low_open else v < low):
        raise ParameterError(f"{name} must be {'>' if low_open else '>='} {low:g}, got {v!r}", name)
    if high is not None and (v >= high if high_open else v > high):
        raise ParameterError(f"{name} must be {'<' if high_open else '<='} {high:g}, got {v!r}", name)


def as_float_array(name: str, value: Any) -> np.ndarray:
    """Convert ``value`` to a float ndarray (via :func:`check_real`; infinities pass), or
    raise ValueError naming ``name``."""
    return check_real(name, value, allow_inf=True)


def _show(value: Any) -> str:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return _short(value)
    if arr.ndim == 0:
        return repr(float(arr))
    return np.array2string(arr, threshold=6, precision=6)


def int_digits(value: int) -> int:
    """The number of decimal digits of an integer, also past Python's 4300-digit limit on
    ``str(int)``.

    >>> int_digits(10**400), int_digits(-999), int_digits(10**5000 - 1)
    (401, 3, 5000)
    """
    n = abs(int(value))
    if n < 10:
        return 1
    d = int(math.log10(n)) + 1  # may be one off near a power of ten
    if 10 ** (d - 1) > n:
        d -= 1
    elif 10 ** d <= n:
        d += 1
    return d


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> str:
    if arr.ndim == 0:
        return repr(float(arr))
    idx = int(np.flatnonzero(bad)[0])
    return f"{float(arr.ravel()[idx])!r} (at index {idx})"


def check_probability(
    name: str, value: Any, *, open_low: bool = False, open_high: bool = False
) -> np.ndarray:
    """Return ``value`` as a float array after checking it lies in [0, 1].

    ``open_low``/``open_high`` exclude 0 and 1 respectively.

    >>> float(check_probability("alpha", 0.25))
    0.25
    >>> check_probability("alpha", 1.5)
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: alpha must be in [0, 1], got 1.5
    """
    arr = as_float_array(name, value)
    low_bad = arr <= 0 if open_low else arr < 0
    high_bad = arr >= 1 if open_high else arr > 1
    bad = low_bad | high_bad
    if bad.any():
        interval = ("(" if open_low else "[") + "0, 1" + (")" if open_high else "]")
        raise ParameterError(f"{name} must be in {interval}, got {_first_bad(arr, bad)}", name)
    return arr


def check_nonnegative(
    name: str, value: Any, *, allow_zero: bool = True, allow_inf: bool = False
) -> np.ndarray:
    """Return ``value`` as a float array after checking it is >= 0 (or > 0), finite unless
    ``allow_inf``.

    >>> check_nonnegative("mu", -1.0)
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: mu must be >= 0, got -1.0
    """
    arr = as_float_array(name, value)
    bad = arr <= 0 if not allow_zero else arr < 0
    if bad.any():
        op = ">= 0" if allow_zero else "> 0"
        raise ParameterError(f"{name} must be {op}, got {_first_bad(arr, bad)}", name)
    if not allow_inf and np.isinf(arr).any():
        raise ParameterError(f"{name} must be finite, got {_first_bad(arr, np.isinf(arr))}", name)
    return arr


def check_positive(
    name: str, value: Any, *, allow_zero: bool = False, allow_inf: bool = False
) -> np.ndarray:
    """Return ``value`` as a float array after checking it is > 0 (>= 0 with ``allow_zero``)."""
    return check_nonnegative(name, value, allow_zero=allow_zero, allow_inf=allow_inf)


def check_scalar(name: str, value: Any) -> float:
    """Return ``value`` as a Python float, requiring a scalar (infinities pass)."""
    return check_real(name, value, allow_inf=True, scalar=True)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ValueError naming ``name``."""
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}", name)
    return value


def scalar_or_array(result: np.ndarray, *inputs: Any) -> float | np.ndarray:
    """Return a Python float when every input was a scalar, else the array."""
    if all(_is_scalar(x) for x in inputs):
        return float(np.asarray(result).reshape(()))
    return result


# --------------------------------------------------------------------------------------
# Gaussian tails
# --------------------------------------------------------------------------------------
def json_safe(payload: Any) -> Any:
    """A JSON-ready copy of ``payload`` (dicts, lists, tuples, scalars): non-finite floats
    become the strings "inf", "-inf" and "nan", as fdpkit's JSON schema spells them.

    >>> json_safe({"mu": float("inf"), "eps": [1.0, -float("inf")]})
    {'mu': 'inf', 'eps': [1.0, '-inf']}
    """
    if isinstance(payload, float) and not math.isfinite(payload):
        return "nan" if math.isnan(payload) else ("inf" if payload > 0 else "-inf")
    if isinstance(payload, dict):
        return {k: json_safe(v) for k, v in payload.items()}
    if isinstance(payload, (list, tuple)):
        return [json_safe(v) for v in payload]
    return payload


def norm_sf(x: Any) -> np.ndarray:
    """Phi(-x) = 1 - Phi(x), accurate in the upper tail."""
    return special.ndtr(-np.asarray(x, dtype=float))


def norm_cdf(x: Any) -> np.ndarray:
    """Phi(x)."""
    return special.ndtr(np.asarray(x, dtype=float))


def norm_isf(p: Any) -> np.ndarray:
    """Phi^-1(1 - p), accurate for tiny p (the inverse survival function)."""
    return -special.ndtri(np.asarray(p, dtype=float))


def norm_ppf(p: Any) -> np.ndarray:
    """Phi^-1(p)."""
    return special.ndtri(np.asarray(p, dtype=float))


def norm_logcdf(x: Any) -> np.ndarray:
    """log Phi(x), accurate far in the lower tail."""
    return special.log_ndtr(np.asarray(x, dtype=float))


def log1mexp(x: Any) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, without cancellation (Maechler 2012)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def round_safe(x: float, digits: int = 4, *, up: bool) -> float:
    """``x`` rounded to ``digits`` significant digits towards the safe side: up (an upper
    bound such as mu, epsilon or a TPR; a noise scale a user will copy: more noise) or down (a
    lower bound such as an FNR; a sample rate: fewer samples), never to nearest. The float
    that :func:`safe_g` prints: ``round_safe(x, up=True) >= x`` and ``round_safe(x, up=False)
    <= x`` for every float.

    >>> round_safe(1.18544, up=True), round_safe(0.0159484, up=False)
    (1.186, 0.01594)
    """
    return float(safe_g(x, digits, up=up))


def safe_g(x: float, digits: int = 4, *, up: bool) -> str:
    """``x`` printed ``{:.{digits}g}``-style, its last digit on the safe side (see
    :func:`round_safe`): the one formatter of fdpkit's bounds for people (the report model's
    :func:`fdpkit.report.model.fmt` with ``up=`` calls it). The text read back as a float is
    never below ``x`` (``up``) or above it (``up=False``); where the nearest text already is, it
    is that text (``0.1`` stays ``0.1``, though the float 0.1 lies above one tenth).

    >>> safe_g(1.6363, up=True), safe_g(1.4948e-09, 3, up=True), safe_g(0.0, 2, up=True)
    ('1.637', '1.5e-09', '0')
    """
    x = float(x)
    nearest = f"{x:.{digits}g}"
    if not math.isfinite(x) or (float(nearest) >= x if up else float(nearest) <= x):
        return nearest
    # the exact decimal value of x, rounded in the safe direction (no float round-off)
    r = Context(prec=digits, rounding=ROUND_CEILING if up else ROUND_FLOOR).plus(Decimal(x)).normalize()
    e = r.adjusted()
    if -4 <= e < digits:  # the layout of {:g}: fixed point, trailing zeros dropped
        return format(r, "f")
    return f"{format(r.scaleb(-e), 'f')}e{'-' if e < 0 else '+'}{abs(e):02d}"


def safe_percent(x: float, decimals: int = 1, *, up: bool) -> str:
    """``x`` as a percentage ``{:.{decimals}%}``-style, its last decimal on the safe side (see
    :func:`safe_g`): a TPR "at most 0.38%" that is 0.3728% prints up.

    >>> safe_percent(0.0037281, 2, up=True), safe_percent(0.01, 1, up=True), safe_percent(0.0362, 1, up=False)
    ('0.38%', '1.0%', '3.6%')
    """
    x = float(x)
    nearest = f"{x:.{decimals}%}"
    if not math.isfinite(x):
        return nearest
    read = float(Decimal(nearest[:-1]) / 100)
    if read >= x if up else read <= x:
        return nearest
    step = Decimal(1).scaleb(-decimals)
    r = (Decimal(x) * 100).quantize(step, rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return f"{r}%"


#: Below 10^this percent, :func:`plain_percent` writes the percentage in scientific notation
#: (1e-10 is "0.00000001%"; 1e-12 "1e-10%").
PLAIN_PERCENT_MIN_EXPONENT = -8


def plain_percent(x: float, decimals: int = 1, *, up: bool | None) -> str:
    """``x`` as a percentage for a sentence: ``decimals`` decimals as :func:`safe_percent`
    prints them, or, for a small ``x`` that they would show with fewer than two significant
    digits (an FPR of 1e-6 read "0.00%"), two significant digits (trailing zeros dropped).
    ``up`` True or False rounds the last digit towards the safe side of an upper or lower
    bound; None (an input echoed back) rounds to nearest.

    >>> plain_percent(0.001, 2, up=None), plain_percent(1e-6, 2, up=None), plain_percent(7.203e-4, 2, up=True)
    ('0.10%', '0.0001%', '0.073%')
    >>> plain_percent(0.0637, 2, up=True), plain_percent(1e-4, 1, up=None), plain_percent(0.0, 1, up=True)
    ('6.37%', '0.01%', '0.0%')
    >>> plain_percent(1e-10, 2, up=None), plain_percent(1e-12, 2, up=None), plain_percent(5e-324, 2, up=True)
    ('0.00000001%', '1e-10%', '5e-322%')
    """
    x = float(x)
    if not (math.isfinite(x) and 0 < x < 10.0 ** (1 - decimals) / 100):
        return f"{x:.{decimals}%}" if up is None else safe_percent(x, decimals, up=up)
    d = Decimal(x) * 100
    rounding = ROUND_HALF_EVEN if up is None else ROUND_CEILING if up else ROUND_FLOOR
    q = d.quantize(Decimal(1).scaleb(d.adjusted() - 1), rounding=rounding)
    if q.adjusted() < PLAIN_PERCENT_MIN_EXPONENT:  # an FPR of 5e-324 read "0.000...00049%", 322 zeros
        mantissa, exponent = format(q, "e").split("e")
        return (mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa) + f"e{int(exponent)}%"
    text = format(q, "f")
    return (text.rstrip("0").rstrip(".") if "." in text else text) + "%"


def safe_text(x: Any, digits: int = 4, *, up: bool) -> str:
    """:func:`round_safe` as text (its shortest repr: what is printed is what was rounded).

    >>> safe_text(1.18544, up=True), safe_text(200, up=False), safe_text(None, up=True)
    ('1.186', '200', '-')
    """
    if x is None:
        return "-"
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return str(int(x))
    return repr(round_safe(float(x), digits, up=up))
