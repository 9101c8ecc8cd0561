"""Published settings from the seed papers, to place a guarantee among them.

Each reference is a mu-GDP value (tight, from a numeric accountant or a closed form) with its
source, so a report can say "between the CIFAR-10 run at eps = 6 and the headline run at
eps = 8". The DP-SGD values are fdpkit's own recomputations of the De et al. (2022) runs
listed in Gomez et al. Table 4 (dp_accounting PLD, discretization 1e-4; see
``tests/data/published.json``, which the tests compare against).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fdpkit._numerics import safe_g
from fdpkit.convert import epsilon_for_delta_from_mu, mu_from_pure_epsilon


@dataclass(frozen=True)
class Reference:
    """One published setting: its name, its tight mu and where it comes from."""

    name: str
    mu: float
    source: str
    epsilon_at_1e5: float | None = None

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return dict(self.__dict__)


def _rr(eps: float) -> float:
    return float(mu_from_pure_epsilon(eps))


#: Ordered by mu. DP-SGD: CIFAR-10 from scratch, batch 4096 ... sample rate 0.32768.
PUBLISHED: tuple[Reference, ...] = tuple(sorted((
    Reference("K&H rule of thumb for ε = 1 (μ = ε/5)", 0.2, "Kulynych & Honkela, rule of thumb"),
    Reference("De et al. CIFAR-10 run at ε = 1 (noise 40, 906 steps)", 0.24701809013920073,
              "Gomez et al. Table 4 (De et al. 2022)", 0.9135269679610384),
    Reference("pure ε = 1 matched on TPR/FPR at FPR 1e-3", 0.31027255699464584,
              "Kulynych & Honkela Prop. 3.1, Fig. 1"),
    Reference("De et al. CIFAR-10 run at ε = 2 (noise 24, 1156 steps)", 0.4654352409977509,
              "Gomez et al. Table 4 (De et al. 2022)", 1.8382240524385258),
    Reference("De et al. CIFAR-10 run at ε = 3 (noise 20, 1656 steps)", 0.6684901358405826,
              "Gomez et al. Table 4 (De et al. 2022)", 2.759453465741447),
    Reference("De et al. CIFAR-10 run at ε = 4 (noise 16, 1765 steps)", 0.8631536888457907,
              "Gomez et al. Table 4 (De et al. 2022)", 3.6910448839674213),
    Reference("K&H worked example μ = 1 (TPR/FPR 18.3 at FPR 1e-3)", 1.0, "Kulynych & Honkela Figs. 1a–3a",
              float(epsilon_for_delta_from_mu(1.0, 1e-5))),
    Reference("De et al. CIFAR-10 run at ε = 6 (noise 12, 2007 steps)", 1.2282196368023817,
              "Gomez et al. Table 4 (De et al. 2022)", 5.558357621027417),
    Reference("randomized response at ε = 1", _rr(1.0), "Gomez et al. Sec. 6, Fig. 5 (μ* = 1.232, regret 0.058)"),
    Reference("De et al. headline CIFAR-10 run at ε = 8 (noise 9.4, 2000 steps)", 1.5669487011652663,
              "Gomez et al. Sec. 5, Table 2 (μ = 1.57)", 7.42438505921918),
), key=lambda r: r.mu))


def _named(r: Reference) -> str:
    """The reference with its mu in one pair of brackets: "run (noise 9.4, 2000 steps; μ = 1.567)"
    (rounded up, as every printed mu: the references' mu are upper bounds too)."""
    if r.name.endswith(")"):
        return f"{r.name[:-1]}; μ = {safe_g(r.mu, up=True)})"
    return f"{r.name} (μ = {safe_g(r.mu, up=True)})"


def place_among(mu: float, references: tuple[Reference, ...] = PUBLISHED) -> str:
    """One sentence placing ``mu`` among published settings (smaller mu = more private).

    >>> place_among(1.4)
    'μ = 1.4 lies between randomized response at ε = 1 (μ = 1.233) and De et al. headline CIFAR-10 run at ε = 8 (noise 9.4, 2000 steps; μ = 1.567).'
    >>> place_among(0.1)[:59]
    'μ = 0.1 is more private than every published setting listed'
    """
    if math.isnan(mu):
        raise ValueError("mu must be a number, got nan")
    refs = sorted(references, key=lambda r: r.mu)
    for r in refs:
        if math.isclose(mu, r.mu, rel_tol=5e-3):
            return f"μ = {safe_g(mu, up=True)} matches {r.name} (μ = {safe_g(r.mu, up=True)}; {r.source})."
    if mu < refs[0].mu:
        return (f"μ = {safe_g(mu, up=True)} is more private than every published setting listed here; the most private is "
                f"{_named(refs[0])}.")
    if mu > refs[-1].mu:
        return (f"μ = {safe_g(mu, up=True)} is less private than every published setting listed here, including "
                f"{_named(refs[-1])}.")
    lo = max((r for r in refs if r.mu < mu), key=lambda r: r.mu)
    hi = min((r for r in refs if r.mu > mu), key=lambda r: r.mu)
    return f"μ = {safe_g(mu, up=True)} lies between {_named(lo)} and {_named(hi)}."
