"""The one exception fdpkit raises for bad input: :class:`ParameterError`.

A bottom-layer module (it imports nothing from fdpkit), so that every layer — the curve
maths, the mechanisms, the accountants, the CLI and the web — raises and reads the same
exception. It is a :class:`ValueError` (``except ValueError`` keeps working) whose
``parameter`` attribute is the PUBLIC name of the argument at fault, so that interfaces
map an error to its input (a form field, a CLI option) without parsing the message.
"""

from __future__ import annotations

from typing import Any


class ParameterError(ValueError):
    """Bad input for one public argument: a ``ValueError`` that names it.

    Parameters
    ----------
    message : str
        The message; it starts with (or names) the argument, as every fdpkit message does.
    parameter : str or None, optional
        The public name of the argument at fault (``"sample_rate"``, ``"steps"``), or None
        when the error belongs to no single argument. Where two arguments conflict, the
        first one named; ``parameters`` lists all of them.
    parameters : tuple of str, optional
        Every argument the error concerns (default: ``(parameter,)``).

    Examples
    --------
    >>> import fdpkit as fp
    >>> try:
    ...     fp.dpsgd(noise_multiplier=-1.0, sample_rate=0.01, steps=10)
    ... except fp.ParameterError as exc:
    ...     print(exc.parameter)
    noise_multiplier
    """

    def __init__(self, message: str, parameter: str | None = None,
                 parameters: tuple[str, ...] | None = None) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.parameters = tuple(parameters) if parameters else ((parameter,) if parameter else ())

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across worker processes
        return (type(self), (str(self), self.parameter, self.parameters))


def parameter_of(exc: BaseException) -> str | None:
    """The public argument an exception names (its ``parameter``), or None.

    Parameters
    ----------
    exc : BaseException
        Any exception; only :class:`ParameterError` (or an exception carrying a
        ``parameter`` attribute) names one.

    Returns
    -------
    str or None
        The argument's public name.

    Examples
    --------
    >>> parameter_of(ParameterError("steps must be >= 1, got 0", "steps"))
    'steps'
    >>> parameter_of(ValueError("no parameter")) is None
    True
    """
    value = getattr(exc, "parameter", None)
    return value if isinstance(value, str) else None
