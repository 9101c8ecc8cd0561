"""The words of de Fondeville Sec. 5 that the decision guides (:mod:`fdpkit.planning.guides`),
the Plan page and ``fdpkit plan`` show: the mechanism families of Table 1, where the paper's
printed μ_min come from, and the settings of Sec. 5.2."""

FAMILIES = {
    "catastrophic": "mechanisms that can fail catastrophically (f(0) < 1): uniform random sampling, "
                    "(eps, delta)-DP with delta > 0",
    "graceful": "gracefully failing mechanisms (unbounded relative risk, f(0) = 1): Gaussian / mu-GDP",
    "bounded": "bounded relative risk: pure eps-DP such as the Laplace mechanism",
}


#: Where de Fondeville's printed mu_min come from (stated wherever a mu_min is shown).
MU_MIN_NOTE = ("μ_min depends on the criterion and the test level: de Fondeville's printed μ_min = 7.9, 0.28, "
               "0.048 (n = 15, 100, 500; shift 0.2, sd 0.25, data in [0, 1]) are for power ≥ 99% of the "
               "non-private power with a one-sided Z-test at level 0.01 (at level 0.05 the same criterion "
               "gives 5.01, 0.229, 0.041).")


#: de Fondeville Sec. 5.2's settings, in fdpkit's words (shown by the Plan page and CLI).
GUIDANCE = (
    ("Who runs the analysis",
     "With a central curator, trusted staff see the raw data and release only the noisy answer: "
     "the plan can use what the curator knows. With eyes-off users, analysts run DP queries on a "
     "platform without seeing the data: every number they use to plan (n, sd) must be public or "
     "itself released with DP, and a conservative bound is safest."),
    ("Observational or experimental",
     "Observational work explores existing data and its plan may change along the way; each extra "
     "look spends privacy budget and risks fitting the noise. Experimental work fixes the test, its "
     "level and the sample size before seeing data. Plan DP releases the experimental way even for "
     "existing data: choose μ from public facts (for yes/no data sd ≤ 0.5), so planning leaks "
     "nothing and the choice is not steered by what the data show."),
    ("Unknown sizes",
     "If n is not public, spend a small part of the budget on a noisy count and plan with a lower "
     "bound of it."),
)
