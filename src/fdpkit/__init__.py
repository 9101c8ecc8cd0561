"""fdpkit: honest, tight, readable privacy guarantees.

Trade-off curves (f-DP), tight pessimistic mu-GDP with its regret, conversions between
epsilon, delta and mu, attack-risk readings and utility planning.

Glossary (issue 23: written once here, used everywhere in fdpkit, never swapped):

- alpha: false-positive rate (FPR, type I error) of a membership-inference test. The public
  API says ``fpr``; the symbol alpha appears only inside the curve maths (``curve.beta(alpha)``).
- beta: false-negative rate (FNR, type II error); TPR = 1 - beta, the attack's power.
- f(alpha): the trade-off curve, the smallest beta any test reaches at FPR alpha.
- level: a statistical test's significance level (``ztest_power(..., level=0.05)``), never
  called alpha (the old keyword ``alpha=`` still works, with a DeprecationWarning).
- mu: Gaussian DP parameter, G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu).
- epsilon, delta: (epsilon, delta)-DP; delta(epsilon) is the privacy profile.
- rho: zero-concentrated DP (rho-zCDP); RDP: Renyi DP, epsilon(order) over orders.
- relation: the neighbouring relation, "add-remove", "replace-one" or "zero-out"; sampling:
  "poisson", "truncated-poisson", "fixed-size" or "shuffled"; unit: "example" or "user". The
  strings live in :mod:`fdpkit.vocabulary`, imported by mechanisms, ledger, web and CLI alike.

Naming grammar:

- One spelling per query: ``curve.tpr(fpr)``, ``curve.epsilon_for_delta(delta)`` and its
  inverse pair ``curve.delta_for_epsilon(epsilon)``.
- Conversions read ``<quantity>_for_<given>_from_<representation>``:
  ``epsilon_for_delta_from_mu(mu, delta)``, ``epsilon_for_delta_from_rho(rho, delta)``,
  ``delta_for_epsilon_from_rdp(orders, epsilons, epsilon)``.
- A function never shadows a package: ``run_sweep`` and ``run_audit`` run the packages
  ``fdpkit.sweep`` and ``fdpkit.audit`` (calling the package itself still works, deprecated).
- Renamed public names stay for one minor version as aliases raising a DeprecationWarning
  (listed in CHANGELOG.md under "Renamed").

The public API loads lazily (PEP 562): ``import fdpkit`` imports no NumPy, SciPy or
dp_accounting, and ``fdpkit.privacy_report`` (say) imports its module on first use. The table
:data:`_LAZY` maps each public name to the module that defines it; ``__all__``, ``dir(fdpkit)``
and tab completion come from it, and ``__init__.pyi`` gives static type checkers the same names.
To add a public name, add one line ``"name": "fdpkit.module",`` to the table (and the matching
``from fdpkit.module import name as name`` to ``__init__.pyi``; ``tests/core/test_lazy_import.py``
says which line is missing).
"""

from __future__ import annotations

import importlib

#: Public name -> the module that defines it (imported on first attribute access).
_LAZY: dict[str, str] = {
    # --- curves (core)
    "CurveGrid": "fdpkit.curves",
    "EpsDeltaCurve": "fdpkit.curves",
    "GaussianCurve": "fdpkit.curves",
    "LaplaceCurve": "fdpkit.curves",
    "PiecewiseLinearCurve": "fdpkit.curves",
    "RDPCurve": "fdpkit.curves",
    "RandomizedResponseCurve": "fdpkit.curves",
    "TradeOffCurve": "fdpkit.curves",
    "UniformSamplingCurve": "fdpkit.curves",
    "ZCDPCurve": "fdpkit.curves",
    "curve_from_points": "fdpkit.curves",
    "envelope": "fdpkit.curves",
    "group_curve": "fdpkit.curves",
    "worst_case": "fdpkit.curves",
    # --- fit: tight mu, regret
    "GDPFit": "fdpkit.fit",
    "advantage": "fdpkit.risk",
    "bayes_risk": "fdpkit.risk",
    "fit_gdp": "fdpkit.fit",
    "regret": "fdpkit.fit",
    "symmetric_regret": "fdpkit.fit",
    # --- convert
    "Table": "fdpkit.convert",
    "dpsgd_before_after_table": "fdpkit.convert",
    "classic_epsilon_for_delta_from_rho": "fdpkit.convert",
    "delta_for_epsilon_from_rdp": "fdpkit.convert",
    "delta_for_epsilon_from_rho": "fdpkit.convert",
    "epsilon_for_delta_from_rdp": "fdpkit.convert",
    "epsilon_for_delta_from_rho": "fdpkit.convert",
    "gaussian_mu_from_rho": "fdpkit.convert",
    "mu_bound_from_rho": "fdpkit.convert",
    "profile_regret": "fdpkit.convert",
    "rho_from_gaussian_mu": "fdpkit.convert",
    "delta_for_epsilon": "fdpkit.convert",
    "delta_for_epsilon_from_mu": "fdpkit.convert",
    "epsilon_for_delta": "fdpkit.convert",
    "epsilon_for_delta_from_mu": "fdpkit.convert",
    "epsilon_for_delta_table": "fdpkit.convert",
    "mu_for_epsilon_delta": "fdpkit.convert",
    "mu_for_epsilon_delta_table": "fdpkit.convert",
    "mu_from_pure_epsilon": "fdpkit.convert",
    "mu_rule_of_thumb": "fdpkit.convert",
    "multiplicative_advantage_table": "fdpkit.convert",
    "precision_at_recall_table": "fdpkit.convert",
    "recommend_epsilon": "fdpkit.convert",
    "recommend_mu": "fdpkit.convert",
    "seed_tables": "fdpkit.convert",
    # --- risk
    "attack_power": "fdpkit.risk",
    "failure_mode": "fdpkit.risk",
    "laplace_epsilon_for_attack_power": "fdpkit.risk",
    "laplace_epsilon_for_relative_risk": "fdpkit.risk",
    "multiplicative_advantage": "fdpkit.risk",
    "mu_for_attack_power": "fdpkit.risk",
    "mu_for_relative_risk": "fdpkit.risk",
    "posterior": "fdpkit.risk",
    "precision_at_recall": "fdpkit.risk",
    "relative_risk": "fdpkit.risk",
    "Grade": "fdpkit.risk.grade",
    "grade": "fdpkit.risk.grade",
    "RiskReading": "fdpkit.risk.reading",
    "read_guarantee": "fdpkit.risk.reading",
    "parse_fraction": "fdpkit._inputs",
    "plausibility_warnings": "fdpkit._inputs",
    # --- mechanisms / accounting / report / calibration
    "RhoFit": "fdpkit.accounting",
    "account": "fdpkit.accounting",
    "compose_curves": "fdpkit.accounting",
    "tight_rho": "fdpkit.accounting",
    "tradeoff_curve": "fdpkit.accounting",
    "CalibrationResult": "fdpkit.calibrate",
    "calibrate_dpsgd": "fdpkit.calibrate",
    "DPSGD": "fdpkit.mechanisms",
    "ApproxDP": "fdpkit.mechanisms",
    "Composed": "fdpkit.mechanisms",
    "CurveMechanism": "fdpkit.mechanisms",
    "Gaussian": "fdpkit.mechanisms",
    "Laplace": "fdpkit.mechanisms",
    "Mechanism": "fdpkit.mechanisms",
    "PureDP": "fdpkit.mechanisms",
    "RDP": "fdpkit.mechanisms",
    "RandomizedResponse": "fdpkit.mechanisms",
    "Repeated": "fdpkit.mechanisms",
    "Subsampled": "fdpkit.mechanisms",
    "ZCDP": "fdpkit.mechanisms",
    "UniformSampling": "fdpkit.mechanisms",
    "dpsgd": "fdpkit.mechanisms",
    "dpsgd_from_opacus_history": "fdpkit.mechanisms",
    "from_dp_event": "fdpkit.mechanisms",
    "to_dp_event": "fdpkit.mechanisms",
    "dpsgd_schedule": "fdpkit.mechanisms",
    "mechanism_from_dict": "fdpkit.mechanisms",
    "mechanism_from_json": "fdpkit.mechanisms",
    "PrivacyReport": "fdpkit.guarantee",
    "privacy_report": "fdpkit.guarantee",
    # --- audits (``fdpkit.audit`` is the package; calling it is a deprecated ``run_audit``)
    "AuditResult": "fdpkit.audit",
    "SimulatedAttack": "fdpkit.audit",
    "audit_from_counts": "fdpkit.audit",
    "audit_one_run": "fdpkit.audit",
    "OneRunAudit": "fdpkit.audit",
    "simulate_attack": "fdpkit.audit",
    "audit": "fdpkit.audit",
    "run_audit": "fdpkit.audit",
    # --- utility / planning
    "ZTestSpec": "fdpkit.planning",
    "privacy_first": "fdpkit.planning",
    "utility_first": "fdpkit.planning",
    "adjusted_alpha": "fdpkit.utility",
    "adjusted_level": "fdpkit.utility",
    "mc_regression_power": "fdpkit.utility",
    "mc_ttest_power": "fdpkit.utility",
    "mu_min_for_power_loss": "fdpkit.utility",
    "solve_ztest": "fdpkit.utility",
    "two_proportion_power": "fdpkit.utility",
    "two_sample_power": "fdpkit.utility",
    "two_sample_power_laplace": "fdpkit.utility",
    "ztest_power": "fdpkit.utility",
    "ztest_power_laplace": "fdpkit.utility",
    # --- sweeps (``fdpkit.sweep`` is the package; calling it is a deprecated ``run_sweep``)
    "run_sweep": "fdpkit.sweep",
    "sweep": "fdpkit.sweep",
    # --- errors (bad input: a ValueError naming the public argument in .parameter)
    "ParameterError": "fdpkit.errors",
}

__all__ = ["__version__", *_LAZY]

#: Public names that are packages (``fdpkit.sweep``, ``fdpkit.audit``): the name is the package
#: itself, which stays callable (a deprecated alias of ``run_sweep``/``run_audit``), so that
#: ``import fdpkit.sweep`` and ``fp.sweep(...)`` both work and no function shadows a package.
_PACKAGES = frozenset(name for name, module in _LAZY.items() if module == f"{__name__}.{name}")


def __getattr__(name: str):
    """Import a public name's module on first use (PEP 562), then cache the name here."""
    module = _LAZY.get(name)
    if name in _PACKAGES:
        value = importlib.import_module(module)
    elif module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name == "__version__":
        value = _version()
    elif name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:  # a submodule reached as an attribute (``fdpkit.report.build_document``)
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        return value
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:  # pragma: no cover - trivial
        return version("fdpkit")
    except PackageNotFoundError:  # pragma: no cover
        return "0.0.0"

