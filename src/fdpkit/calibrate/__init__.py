"""Solve a DP-SGD setting for its one unknown (:mod:`fdpkit.calibrate.solver`) so that it
meets a target (:mod:`fdpkit.calibrate.targets`: mu, epsilon at delta, certified TPR at an
FPR, advantage or posterior)."""

from fdpkit.calibrate.outcome import CalibrationResult
from fdpkit.calibrate.solver import CALIBRATION_RTOL, UNKNOWNS, calibrate_dpsgd, dpsgd_mu
from fdpkit.calibrate.targets import TARGETS, Target, achieved_values, make_target

__all__ = ["CALIBRATION_RTOL", "TARGETS", "UNKNOWNS", "CalibrationResult", "Target", "achieved_values",
           "calibrate_dpsgd", "dpsgd_mu", "make_target"]
