"""Decision guides: privacy-first and utility-first (de Fondeville Sec. 5)."""

from fdpkit.planning.guidance import FAMILIES, GUIDANCE
from fdpkit.planning.guides import (
    MechanismOption,
    PrivacyFirstPlan,
    UtilityFirstPlan,
    privacy_first,
    utility_first,
)
from fdpkit.planning.spec import CORRECTIONS, STATISTICS, ZTestSpec

__all__ = ["FAMILIES", "GUIDANCE", "MechanismOption", "PrivacyFirstPlan", "UtilityFirstPlan", "ZTestSpec",
           "privacy_first", "utility_first"]
