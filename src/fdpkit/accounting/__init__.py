"""Mechanisms -> certified curves. The only package that imports dp_accounting.

Modules, bottom to top (each imports only those above it in this list, at module level):

- ``_pld_adapter``, ``_rdp_adapter``: the only readers of dp_accounting's internals;
- ``_cumulants``, ``_fftpass``, ``tilted``: the round-off-bounded composition (``tilted.plan``);
- ``single_step``, ``profile``, ``from_curve``, ``pld_curve``: single-step PMFs, privacy
  profiles, curve -> PLD and PLD -> certified curve;
- ``result`` (``Accounting``, discretization constants), ``closed_form`` (exact curves);
- ``pld``: mechanisms (DP-SGD's single steps included) -> composed PLDs;
- ``rdp``: Rényi accounting; ``cost``: the cost model checked before any work;
- ``compose``, ``running``: composing curves and a running total;
- ``entry_point``: :func:`account`, the one entry point.
"""

from fdpkit.accounting.entry_point import account, poisson_comparison, poisson_twin, tradeoff_curve
from fdpkit.accounting.closed_form import closed_form_curve
from fdpkit.accounting.cost import BudgetExceeded, CostBudget, CostEstimate, estimate_cost
from fdpkit.accounting.pld_curve import curve_from_pld
from fdpkit.accounting.result import DISCRETIZATION_DEFAULT, Accounting
from fdpkit.accounting.rdp import RhoFit, rdp_epsilons, rdp_guarantee, renyi_curve, tight_rho

from fdpkit.accounting.compose import compose_curves
from fdpkit.accounting.pld import shared_single_steps
from fdpkit.accounting.from_curve import pld_from_curve
from fdpkit.accounting.running import RUNNING_DISCRETIZATION, Composition, gaussian_mu

__all__ = [
    "RUNNING_DISCRETIZATION",
    "Composition",
    "gaussian_mu",
    "compose_curves",
    "shared_single_steps",
    "pld_from_curve",
    "DISCRETIZATION_DEFAULT",
    "RhoFit",
    "rdp_epsilons",
    "rdp_guarantee",
    "renyi_curve",
    "tight_rho",
    "Accounting",
    "BudgetExceeded",
    "CostBudget",
    "CostEstimate",
    "account",
    "closed_form_curve",
    "curve_from_pld",
    "estimate_cost",
    "poisson_comparison",
    "poisson_twin",
    "tradeoff_curve",
]
