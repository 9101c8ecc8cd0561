"""Audits: empirical membership-inference attacks read against a certified guarantee,
and Monte Carlo attacks on a canary against the mechanism itself.

:func:`run_audit` audits an attack's scores. The package itself is callable for
compatibility: ``fdpkit.audit(...)`` (and the name ``fdpkit.audit.audit``) still run an
audit, with a :class:`DeprecationWarning` (issue 23: a function never shadows a package).
"""

from fdpkit._deprecation import deprecated_alias, make_callable
from fdpkit.audit.empirical import (
    AuditResult,
    BoundedThresholds,
    Certified,
    audit_from_counts,
    certified_guarantee,
    empirical_roc,
    run_audit,
)
from fdpkit.audit.one_run import OneRunAudit, audit_one_run
from fdpkit.audit.io import read_counts_csv, read_scores_csv, scores_csv
from fdpkit.audit.simulate import SimulatedAttack, simulate_attack

__all__ = [
    "AuditResult",
    "BoundedThresholds",
    "Certified",
    "SimulatedAttack",
    "audit",
    "audit_from_counts",
    "audit_one_run",
    "OneRunAudit",
    "certified_guarantee",
    "empirical_roc",
    "read_counts_csv",
    "read_scores_csv",
    "run_audit",
    "scores_csv",
    "simulate_attack",
]

audit = deprecated_alias(run_audit, "fdpkit.audit.audit", "fdpkit.run_audit")
"""Deprecated alias of :func:`run_audit` (renamed in 0.x, issue 23). ``fdpkit.audit`` itself is
this package, and calling it, ``fp.audit(...)``, runs :func:`run_audit` with a
:class:`DeprecationWarning`."""

make_callable(__name__, "run_audit")
