"""Tight mu-GDP for a trade-off curve (:mod:`fdpkit.fit.mu`) and the regret of that summary
(:mod:`fdpkit.fit.regret`). The curve summaries advantage and Bayes risk are in
:mod:`fdpkit.risk.bayes`."""

from fdpkit.fit.mu import ALPHA_MIN_DEFAULT, ALPHA_MIN_FLOOR, GDPFit, fit_gdp, fit_gdp_adapted
from fdpkit.fit.regret import regret, symmetric_regret

__all__ = ["ALPHA_MIN_DEFAULT", "ALPHA_MIN_FLOOR", "GDPFit", "fit_gdp", "fit_gdp_adapted", "regret",
           "symmetric_regret"]
