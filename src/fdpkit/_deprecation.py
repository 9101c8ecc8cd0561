"""Deprecated public names (issue 23: one naming grammar).

fdpkit 0.x renames a public name at once and keeps the old one for one minor version as an
alias that raises a :class:`DeprecationWarning` naming the new spelling. This bottom-layer
module holds the two tools for that: :func:`deprecated_alias` (an old function name) and
:class:`CallablePackage` (a package that also answers the call its old, shadowing function
of the same name took, as ``fdpkit.sweep(...)`` and ``fdpkit.audit(...)`` do). Library code
never calls a deprecated name (tests may turn warnings into errors).
"""

from __future__ import annotations

import functools
import sys
import types
import warnings
from typing import Any, Callable


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Raise the :class:`DeprecationWarning` of a renamed public name.

    Parameters
    ----------
    old, new : str
        The old and the new spelling, as the user writes them.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (3: the caller of the deprecated function).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_renamed("fp.old", "fp.new")
    >>> str(caught[0].message)
    'fp.old is deprecated and will be removed in the next minor version; use fp.new'
    """
    warnings.warn(f"{old} is deprecated and will be removed in the next minor version; use {new}",
                  DeprecationWarning, stacklevel=stacklevel)


def deprecated_alias(func: Callable[..., Any], old: str, new: str | None = None) -> Callable[..., Any]:
    """A deprecated alias of ``func``: calls it and raises a :class:`DeprecationWarning`.

    Parameters
    ----------
    func : callable
        The function under its new name.
    old : str
        The old public name (the alias's ``__name__``).
    new : str, optional
        The new spelling shown in the warning (default ``func.__name__``).

    Returns
    -------
    callable
        ``func`` wrapped: same signature and docstring, a deprecation note first.

    Examples
    --------
    >>> import warnings
    >>> def double(x):
    ...     return 2 * x
    >>> twice = deprecated_alias(double, "twice")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     twice(2)
    4
    >>> caught[0].category.__name__
    'DeprecationWarning'
    """
    shown = new or func.__name__

    @functools.wraps(func)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warn_renamed(old, shown)
        return func(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old.rsplit(".", 1)[-1]
    alias.__doc__ = f"Deprecated alias of :func:`{shown}` (issue 23); use that name.\n\n{func.__doc__ or ''}"
    alias.__deprecated__ = shown  # type: ignore[attr-defined]
    return alias


class CallablePackage(types.ModuleType):
    """A package module that can also be called: ``fdpkit.sweep(...)`` runs ``run_sweep``.

    fdpkit 0.x had public functions named like their packages (``fdpkit.sweep``,
    ``fdpkit.audit``), so that the function shadowed the package. The package is now the
    public name; calling it still works, with a :class:`DeprecationWarning`, and forwards to
    the function named in the module attribute ``__call_target__`` (e.g. ``"run_sweep"``).
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        target = self.__dict__["__call_target__"]
        warn_renamed(f"calling {self.__name__}(...)", f"{self.__name__}.{target}(...)")
        return getattr(self, target)(*args, **kwargs)


def make_callable(module_name: str, target: str) -> None:
    """Make the imported package ``module_name`` callable, forwarding to its ``target``.

    Parameters
    ----------
    module_name : str
        The package's ``__name__`` (it must already be in :data:`sys.modules`).
    target : str
        The name of the function in that package which a call runs.
    """
    module = sys.modules[module_name]
    module.__call_target__ = target  # type: ignore[attr-defined]
    module.__class__ = CallablePackage


def renamed_keywords(**renames: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Keep old keyword names of a function working, with a :class:`DeprecationWarning`.

    Parameters
    ----------
    **renames : str
        ``old="new"`` pairs: a call with ``old=value`` becomes ``new=value``. Giving both is
        a :class:`TypeError`, as for any argument given twice.

    Returns
    -------
    callable
        A decorator.

    Examples
    --------
    >>> import warnings
    >>> @renamed_keywords(alpha="level")
    ... def power(*, level=0.05):
    ...     return level
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     power(alpha=0.01)
    0.01
    >>> str(caught[0].message)
    'power(alpha=...) is deprecated and will be removed in the next minor version; use power(level=...)'
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__name__}() got both {new}= and its deprecated name {old}=")
                    warn_renamed(f"{func.__name__}({old}=...)", f"{func.__name__}({new}=...)")
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper

    return decorate
