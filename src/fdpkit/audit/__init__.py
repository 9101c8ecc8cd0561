"""Audits: empirical membership-inference attacks read against a certified guarantee,
and Monte Carlo attacks on a canary against the mechanism itself."""

from fdpkit.audit.empirical import (
    AuditResult,
    BoundedThresholds,
    Certified,
    audit,
    audit_from_counts,
    certified_guarantee,
    empirical_roc,
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
    "scores_csv",
    "simulate_attack",
]
