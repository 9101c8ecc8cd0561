r"""Running composition of many releases, kept as a state that grows one release at a time.

A privacy-budget ledger composes every release of a dataset (Dong et al. 2022, Thm. 3.2:
the composition of f_i-DP mechanisms is f_1 (x) ... (x) f_k-DP). This module keeps that
composition as a :class:`Composition` state with two parts:

- the Gaussian family (Gaussian, repeated or composed Gaussians), composed *exactly* in
  closed form: mu_total = sqrt(sum_i mu_i^2) (Dong et al. Cor. 3.3), kept as the sum of
  squares;
- everything else, composed by dp_accounting's pessimistic connect-the-dots PLD at one
  fixed discretization (Doroshenko et al. 2022), kept as one PLD.

When every release is Gaussian-family the total is exactly mu-GDP (``method == "GDP"``,
``bound == "exact"``). Otherwise the Gaussian part is turned into the pessimistic PLD of
one Gaussian with sensitivity 1 and sigma = 1 / mu_total and composed with the rest: one
composition, whatever the number of releases behind each part (``method == "PLD"``,
``bound == "lower"``: the certified curve lies below the true one, so every reported
epsilon, mu and TPR is pessimistic). Adding one release to a state therefore costs one
PLD composition (or one addition), not a recomposition of the whole history.

The state serialises to bytes (:meth:`Composition.to_bytes`) so that a ledger can store it
beside the releases it covers; the PMF arrays pass through the adapter module, the only
place that reads dp_accounting's internals.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from fdpkit.accounting import _pld_adapter as _adapter
from fdpkit.accounting._pld_adapter import PmfArrays, pld_from_arrays, pmf_arrays
from fdpkit.accounting.closed_form import _gaussian_mu
from fdpkit.accounting.pld_curve import curve_from_pld
from fdpkit.accounting.pld import TAIL_MASS_TRUNCATION, build_pld, build_pld_for_composition
from fdpkit.accounting.profile import PldProfile
from fdpkit.accounting.result import DISCRETIZATION_DEFAULT
from fdpkit.curves import GaussianCurve, TradeOffCurve
from fdpkit.mechanisms import Gaussian, Mechanism

#: PLD discretization of a running composition: coarser than a single report's 1e-4 (the
#: composed PLD of a long ledger spans a wide loss range) and still pessimistic.
RUNNING_DISCRETIZATION = 1e-3
#: Why a ledger figure can sit a little above the same run's privacy report (eps 1.642 in the
#: ledger, 1.636 in the report of a DP-SGD run): said beside the ledger's totals.
GRID_NOTE = (f"Ledger totals of non-Gaussian releases are accounted at PLD discretization {RUNNING_DISCRETIZATION:g}, "
             f"coarser than a single report's default {DISCRETIZATION_DEFAULT:g} and rounded pessimistically: they "
             "can sit slightly above the same run's privacy report, never below the exact figure. Where such a "
             "figure would cross a threshold by a little, the total is read again at the releases' own grid (as "
             "their reports and calibrations read them) and the smaller certified figure counts.")


def gaussian_mu(mechanism: Mechanism) -> float | None:
    """mu of a Gaussian-family mechanism (exact GDP), else None.

    >>> from fdpkit.mechanisms import Gaussian, Repeated
    >>> gaussian_mu(Repeated(Gaussian(2.0), 4))
    1.0
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")
    return _gaussian_mu(mechanism)


@dataclass(frozen=True)
class Composition:
    """A running composition (see the module docs). Immutable: :meth:`add` returns a new one.

    >>> from fdpkit.mechanisms import Gaussian
    >>> s = Composition.empty().add([Gaussian(1.0), Gaussian(1.0)])
    >>> s.method, s.curve()
    ('GDP', GaussianCurve(mu=1.4142135623730951))
    """

    count: int = 0
    gaussian_mu_sq: float = 0.0
    pld: Any = field(default=None, repr=False)
    discretization: float = RUNNING_DISCRETIZATION

    @classmethod
    def empty(cls, discretization: float = RUNNING_DISCRETIZATION) -> "Composition":
        """The composition of nothing, at the given PLD ``discretization`` (ValueError outside [1e-6, 1])."""
        if not (isinstance(discretization, float) and 1e-6 <= discretization <= 1.0):
            raise ValueError(f"discretization must be a float in [1e-6, 1], got {discretization!r}")
        return cls(0, 0.0, None, discretization)

    @property
    def gaussian_only(self) -> bool:
        """Whether every part so far is Gaussian-family (then the total is exact GDP, no PLD)."""
        return self.pld is None

    def add(self, mechanisms: Iterable[Mechanism]) -> "Composition":
        """This composition followed by ``mechanisms`` (one PLD composition per
        non-Gaussian mechanism; Gaussian-family ones add mu^2)."""
        count, mu_sq, pld = self.count, self.gaussian_mu_sq, self.pld
        for m in mechanisms:
            mu = gaussian_mu(m)
            count += 1
            if mu is not None:
                mu_sq += mu * mu
                continue
            p = build_pld_for_composition(m, self.discretization)  # whole loss range: composed again
            pld = p if pld is None else _adapter.compose(pld, p, TAIL_MASS_TRUNCATION)
        return Composition(count, mu_sq, pld, self.discretization)

    def merge(self, other: "Composition") -> "Composition":
        """The composition of both states (same discretization)."""
        if other.discretization != self.discretization:
            raise ValueError("other must use the same discretization, got "
                             f"{other.discretization!r} and {self.discretization!r}")
        if self.pld is None or other.pld is None:
            pld = self.pld if other.pld is None else other.pld
        else:
            pld = _adapter.compose(self.pld, other.pld, TAIL_MASS_TRUNCATION)
        return Composition(self.count + other.count, self.gaussian_mu_sq + other.gaussian_mu_sq,
                           pld, self.discretization)

    @property
    def gaussian_mu(self) -> float:
        """μ of the Gaussian-family parts together: sqrt of the sum of their μ² (Dong et al. Cor. 3.3)."""
        return math.sqrt(self.gaussian_mu_sq)

    def total_pld(self):
        """The whole composition as one pessimistic PLD (None when it is exactly GDP)."""
        if self.pld is None:
            return None
        if self.gaussian_mu_sq <= 0.0:
            return self.pld
        g = build_pld(Gaussian(sigma=1.0 / self.gaussian_mu), self.discretization)
        return _adapter.compose(self.pld, g, TAIL_MASS_TRUNCATION)

    def _reading(self):
        if "_reading_cache" not in self.__dict__:
            pld = self.total_pld()
            if pld is None:
                value = (GaussianCurve(self.gaussian_mu), None)
            else:
                profile = PldProfile(pld)
                value = (curve_from_pld(pld, profile), profile)
            object.__setattr__(self, "_reading_cache", value)
        return self.__dict__["_reading_cache"]

    @property
    def method(self) -> str:
        """``"GDP"`` (exact closed form), ``"PLD"`` (numeric) or ``"none"`` (empty)."""
        return "PLD" if self.pld is not None else ("GDP" if self.count else "none")

    def curve(self) -> TradeOffCurve:
        """The composed trade-off curve: exact ``GaussianCurve`` for the Gaussian family,
        else the certified PLD curve (``bound == "lower"``)."""
        return self._reading()[0]

    def epsilon_for_delta(self, delta: float) -> float:
        """epsilon at ``delta`` from the accountant's profile (closed form for GDP)."""
        d = float(delta)
        if not (0.0 < d < 1.0):
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
        curve, profile = self._reading()
        if profile is None:
            return float(curve.epsilon_for_delta(d))
        return float(profile.epsilon_for_delta(d))

    # ------------------------------------------------------------------ storage
    def to_bytes(self) -> bytes:
        """Serialise (numpy ``.npz``; no pickle)."""
        arrays: dict[str, np.ndarray] = {
            "meta": np.array([self.count, self.gaussian_mu_sq, self.discretization], dtype=float)}
        if self.pld is not None:
            remove, add = pmf_arrays(self.pld)
            for name, a in (("remove", remove), ("add", add)):
                if a is None:
                    continue
                arrays[f"{name}_losses0"] = np.array([a.losses[0], a.infinity_mass, a.discretization])
                arrays[f"{name}_probs"] = a.probs
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Composition":
        """Inverse of :meth:`to_bytes`."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                count, mu_sq, disc = (float(x) for x in z["meta"])
                parts = {}
                for name in ("remove", "add"):
                    if f"{name}_probs" in z:
                        lo, inf_mass, d = (float(x) for x in z[f"{name}_losses0"])
                        probs = np.array(z[f"{name}_probs"], dtype=float)
                        losses = lo + np.arange(len(probs)) * d
                        parts[name] = PmfArrays(losses, probs, inf_mass, d)
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"data is not a serialised Composition: {exc}") from None
        pld = pld_from_arrays(parts["remove"], parts.get("add")) if "remove" in parts else None
        return cls(int(count), mu_sq, pld, disc)


__all__ = ["RUNNING_DISCRETIZATION", "Composition", "gaussian_mu"]
