"""The ONE place where fdpkit reads dp_accounting's private PMF attributes.

dp_accounting (pinned to 0.6.0 in pyproject.toml) exposes privacy loss distributions but
not their probability mass functions. fdpkit needs the PMFs to build trade-off curves, so
this adapter reads, for each adjacency direction:

- ``PrivacyLossDistribution._pmf_remove`` / ``._pmf_add`` / ``._symmetric``;
- on the dense form (public ``to_dense_pmf()``): ``_lower_loss`` (int), ``_probs`` (array),
  ``_infinity_mass`` (float), ``_discretization`` (float).

fdpkit's own PLDs (native single steps, compositions) are :class:`NativePld` objects: the
arrays, with dp_accounting's object built from them only when something asks for it (its
import costs about half a second); :func:`pmf_arrays` reads either kind.

It also composes the two directions of a PLD concurrently (``self_compose``, ``compose``):
dp_accounting composes ``_pmf_remove`` and then ``_pmf_add`` one after the other with the
same public PMF methods; their FFTs release the GIL, so two threads give the identical PLD
sooner. ``FDPKIT_THREADS=1`` turns this off. (``build_pld`` composes mechanisms with
:mod:`fdpkit.accounting.tilted` instead, whose round-off is bounded; it reads the
single-step PMFs here and runs the two directions through :func:`_both` too.)

The PMF is the distribution of the privacy loss L = ln(mu_upper(o)/mu_lower(o)) with o drawn
from mu_upper (dp_accounting's PLDPmf docstring): in the notation of Gomez et al. Thm. A.7
these are the probabilities Pr[Y = l], and ``infinity_mass`` is Pr[Y = +inf].

``tests/accounting/test_accounting_adapter.py`` round-trips arrays through
:func:`pld_from_arrays` and compares delta(eps) with the original PLD, so an upgrade of
dp_accounting that renames these attributes fails loudly there and nowhere else.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution
else:  # dp_accounting (and scipy.signal) load when its first PLD object is built
    pld_pmf = lazy_module("dp_accounting.pld.pld_pmf")
    privacy_loss_distribution = lazy_module("dp_accounting.pld.privacy_loss_distribution")

#: The dp_accounting version these private attributes were read from.
PINNED_VERSION = "0.6.0"


@dataclass(frozen=True)
class PmfArrays:
    """One adjacency direction of a PLD as plain arrays.

    Attributes
    ----------
    losses : ndarray
        Privacy-loss grid values (ascending), ``(lower_loss + i) * discretization``.
    probs : ndarray
        Pr[Y = losses[i]] under the upper (alternative) distribution.
    infinity_mass : float
        Pr[Y = +inf].
    discretization : float
    """

    losses: np.ndarray
    probs: np.ndarray
    infinity_mass: float
    discretization: float


def _dense_arrays(pmf) -> PmfArrays:
    known = getattr(pmf, "_fdpkit_arrays", None)
    if known is not None:  # built by pld_from_arrays from arrays on its exact grid
        return known
    dense = pmf.to_dense_pmf()
    probs = np.asarray(dense._probs, dtype=float)  # noqa: SLF001 - adapter module
    lower = int(dense._lower_loss)  # noqa: SLF001
    disc = float(dense._discretization)  # noqa: SLF001
    losses = (np.arange(len(probs)) + lower) * disc
    return PmfArrays(losses, probs, float(dense._infinity_mass), disc)  # noqa: SLF001


def pmf_arrays(pld) -> tuple[PmfArrays, PmfArrays | None]:
    """(remove, add) directions of ``pld`` (dp_accounting's or a :class:`NativePld`) as
    arrays; ``add`` is None when symmetric."""
    if isinstance(pld, NativePld):
        return pld.arrays
    remove = _dense_arrays(pld._pmf_remove)  # noqa: SLF001
    if pld._symmetric:  # noqa: SLF001
        return remove, None
    return remove, _dense_arrays(pld._pmf_add)  # noqa: SLF001


def pld_from_arrays(remove: PmfArrays, add: PmfArrays | None = None):
    """Rebuild a pessimistic dp_accounting PLD from arrays (used by the round-trip test)."""

    def dense(a: PmfArrays):
        lower = int(round(a.losses[0] / a.discretization))
        pmf = pld_pmf.DensePLDPmf(a.discretization, lower, np.array(a.probs), a.infinity_mass, True)
        if a.__dict__.get("_grid_exact"):
            # the composition's arrays (fdpkit.accounting.tilted) hold losses (lower + i) d
            # exactly as _dense_arrays would rebuild them, and the same masses: reading the
            # PLD back returns them (issue 27: no second grid of the composed size)
            pmf._fdpkit_arrays = PmfArrays(a.losses, a.probs, float(a.infinity_mass), float(a.discretization))
        return pmf

    return privacy_loss_distribution.PrivacyLossDistribution(
        dense(remove), None if add is None else dense(add)
    )


def _read_back(a: PmfArrays) -> PmfArrays:
    """What :func:`pmf_arrays` returns for a direction that :func:`pld_from_arrays` built
    from ``a``, without building it: ``a`` itself on the composition's exact grid, else its
    masses on the grid (lower + i) d that the dense PMF rebuilds (the same floats)."""
    if a.__dict__.get("_grid_exact"):
        return PmfArrays(a.losses, a.probs, float(a.infinity_mass), float(a.discretization))
    lower = int(round(a.losses[0] / a.discretization))
    # the values DensePLDPmf holds (its copy of a.probs); not copied here, as the arrays
    # are never modified (fdpkit.accounting.pld.shared_step_arrays even locks them)
    probs = np.asarray(a.probs, dtype=float)
    disc = float(a.discretization)
    losses = (np.arange(len(probs)) + lower) * disc
    return PmfArrays(losses, probs, float(a.infinity_mass), disc)


#: Held while a NativePld builds its dp_accounting object (one object per NativePld).
_BUILDING = threading.Lock()


class NativePld:
    """A privacy loss distribution built by fdpkit, held as arrays; dp_accounting's
    ``PrivacyLossDistribution`` is made from them only when something asks for it.

    fdpkit's single steps and compositions are NumPy (:mod:`fdpkit.accounting.single_step`,
    :mod:`fdpkit.accounting.tilted`): wrapping them in dp_accounting's object at once cost
    its import (``scipy.signal``, about half a second) on every report. :func:`pmf_arrays`
    reads this object's arrays directly, and they are exactly what it would read from
    :func:`pld_from_arrays`'s object (:func:`_read_back`). :func:`as_dp_accounting` (and any
    attribute this class does not define, such as ``get_delta_for_epsilon``) builds that
    object once, from the same arrays as before (or by ``build``, a ``(function, args)``
    pair that returns it), so every dp_accounting method gives the same numbers as before.

    Parameters
    ----------
    remove, add : PmfArrays
        The two adjacency directions (``add`` None when symmetric), as
        :func:`pld_from_arrays` takes them.
    build : tuple, optional
        ``(function, args)`` returning the dp_accounting object instead of
        ``pld_from_arrays(remove, add)`` (it must hold the same arrays).
    """

    __slots__ = ("_source", "_build", "_pld", "arrays")

    def __init__(self, remove: PmfArrays, add: PmfArrays | None = None, build: tuple | None = None) -> None:
        self._source = (remove, add)
        self._build = build
        self._pld = None
        #: (remove, add or None), as :func:`pmf_arrays` returns them
        self.arrays = (_read_back(remove), None if add is None else _read_back(add))

    def to_dp_accounting(self):
        """dp_accounting's ``PrivacyLossDistribution`` of these arrays (built once: every
        call, from any thread, returns the same object)."""
        if self._pld is None:
            with _BUILDING:
                if self._pld is None:
                    if self._build is not None:
                        fn, args = self._build
                        self._pld = fn(*args)
                    else:
                        self._pld = pld_from_arrays(*self._source)
        return self._pld

    def __getattr__(self, name: str):
        if name.startswith("__") or name in NativePld.__slots__:  # copy/pickle probes, unset slots
            raise AttributeError(name)
        return getattr(self.to_dp_accounting(), name)

    def __reduce__(self):
        return (NativePld, (*self._source, self._build))

    def __repr__(self) -> str:
        state = "built" if self._pld is not None else "not built yet"
        return f"<NativePld ({'symmetric' if self.arrays[1] is None else 'remove/add'}; dp_accounting object {state})>"


def native_pld(remove: PmfArrays, add: PmfArrays | None = None) -> NativePld:
    """:func:`pld_from_arrays` without dp_accounting until it is needed (:class:`NativePld`)."""
    return NativePld(remove, add)


def as_dp_accounting(pld):
    """``pld`` as dp_accounting's ``PrivacyLossDistribution`` (a :class:`NativePld` builds
    its object; anything else, None included, is returned as it is)."""
    return pld.to_dp_accounting() if isinstance(pld, NativePld) else pld


def _parallel() -> bool:
    return os.environ.get("FDPKIT_THREADS", "").strip() != "1"


def _both(fn_remove, fn_add, threads: bool = True):
    """(fn_remove(), fn_add()), in two threads unless ``threads`` is false or FDPKIT_THREADS=1."""
    if not threads or not _parallel():
        return fn_remove(), fn_add()
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="fdpkit-pld") as pool:
        fut = pool.submit(fn_add)
        first = fn_remove()
        return first, fut.result()


def self_compose(pld, times: int, tail_mass_truncation: float):
    """``pld.self_compose(times, tail_mass_truncation)``, with both directions composed at
    once (the result is identical: the same PMF methods on the same inputs)."""
    pld = as_dp_accounting(pld)
    if pld._symmetric:  # noqa: SLF001
        return pld.self_compose(times, tail_mass_truncation=tail_mass_truncation)
    remove, add = _both(
        lambda: pld._pmf_remove.self_compose(times, tail_mass_truncation),  # noqa: SLF001
        lambda: pld._pmf_add.self_compose(times, tail_mass_truncation),  # noqa: SLF001
    )
    return privacy_loss_distribution.PrivacyLossDistribution(remove, add)


def compose(pld, other, tail_mass_truncation: float):
    """``pld.compose(other, tail_mass_truncation)``, with both directions composed at once."""
    pld, other = as_dp_accounting(pld), as_dp_accounting(other)
    if pld._symmetric and other._symmetric:  # noqa: SLF001
        return pld.compose(other, tail_mass_truncation=tail_mass_truncation)
    remove, add = _both(
        lambda: pld_pmf.compose_pmfs(pld._pmf_remove, other._pmf_remove,  # noqa: SLF001
                                     tail_mass_truncation),
        lambda: pld_pmf.compose_pmfs(pld._pmf_add, other._pmf_add,  # noqa: SLF001
                                     tail_mass_truncation),
    )
    return privacy_loss_distribution.PrivacyLossDistribution(remove, add)
