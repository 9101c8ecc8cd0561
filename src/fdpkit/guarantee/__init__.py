"""The privacy guarantee of a mechanism as one object: :class:`PrivacyReport` (built by
:func:`privacy_report`), its setting (:mod:`fdpkit.guarantee.setting`), its one-paragraph
statement (:mod:`fdpkit.guarantee.statement`) and its representations
(:mod:`fdpkit.guarantee.representations`). Below :mod:`fdpkit.report`, which lays it out."""

from fdpkit.guarantee.privacy import (
    DEFAULT_DELTAS,
    DEFAULT_FPRS,
    DEFAULT_PRIORS,
    SCHEMA_VERSION,
    PrivacyReport,
    privacy_report,
)

__all__ = ["DEFAULT_DELTAS", "DEFAULT_FPRS", "DEFAULT_PRIORS", "SCHEMA_VERSION", "PrivacyReport",
           "privacy_report"]
