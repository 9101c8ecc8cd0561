"""Pydantic request models of the JSON API, mirroring the library's value objects. The HTML
forms are read through the same models (:func:`fdpkit.web.forms.parse_form`); a field's
``title`` is the label its form shows, used in error messages."""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal, Optional

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from fdpkit._inputs import beyond_floats, is_plain_number

from fdpkit._numerics import EPSILON_MAX, MU_MAX
from fdpkit.vocabulary import ADD_REMOVE, EXAMPLE, POISSON, Relation, Sampling, Unit

#: The library's own limit on mu (one place: ``fdpkit._numerics.MU_MAX``): every model below
#: takes its mu bound from it, so the web, the CLI and the library agree.
MU_LE = MU_MAX
#: The pages' epsilon bound: the library's EPSILON_MAX (700, where e^epsilon still fits a
#: float) capped at 100, beyond which every reading is "no protection" and the composition
#: calculator's sums would only grow. One constant for every model.
EPSILON_LE = min(100.0, EPSILON_MAX)


def takes_numbers(annotation: Any) -> bool:
    """Whether a field's type holds numbers (``float``/``int``, alone, optional, annotated or
    in a list or tuple); ``bool`` is not a number here."""
    if annotation is bool:
        return False
    if annotation in (float, int):
        return True
    if typing.get_origin(annotation) is Literal:
        return False
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is Annotated:
        args = args[:1]
    return any(takes_numbers(a) for a in args)


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` unchanged, unless it is (or holds) text that is not a plain decimal number
    ("1_000", other scripts' digits, a no-break space around it: pydantic's lax mode would
    read those as numbers): then a ``plain_number`` error."""
    if isinstance(value, str):
        try:
            float(value)  # what float() cannot read, pydantic refuses itself ("must be a number")
        except ValueError:
            return value
        if not is_plain_number(value.strip(" \t")):
            raise PydanticCustomError("plain_number", "must be a plain decimal number such as 2, 0.5 or 1e-3, "
                                      "got {given}", {"given": repr(value)[:60]})
        why = beyond_floats(value)  # "1e-400" read as 0, "1e400" as inf
        if why is not None:
            raise PydanticCustomError("plain_number", "cannot be read: {why}", {"why": why[:120]})
    elif isinstance(value, (list, tuple)) and depth < 2:
        for item in value:
            _plain(item, depth + 1)
    return value


class RequestModel(BaseModel):
    """Base of every request model (JSON bodies and the forms read through them): no unknown
    fields, and numbers sent as text must be plain decimal numbers, the rule of the CLI and
    the score files (:func:`fdpkit._inputs.is_plain_number`)."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _plain_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        return _plain(value) if field is not None and takes_numbers(field.annotation) else value


class CalculatorRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["laplace", "gaussian", "composition"]
    sensitivity: float = Field(1.0, gt=0, allow_inf_nan=False)
    epsilon: Optional[float] = Field(None, ge=0, le=EPSILON_LE, allow_inf_nan=False)
    delta: Optional[float] = Field(None, ge=0, le=1, allow_inf_nan=False)
    scale: Optional[float] = Field(None, gt=0, allow_inf_nan=False)
    sigma: Optional[float] = Field(None, gt=0, allow_inf_nan=False)
    k: int = Field(1, ge=1, le=10**7)
    delta_prime: float = Field(1e-5, gt=0, lt=1, allow_inf_nan=False)
    releases: Optional[list[tuple[Annotated[float, Field(ge=0, le=EPSILON_LE, allow_inf_nan=False)],
                                  Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]]]] = Field(
        None, max_length=10_000, description="composition of different releases: [[epsilon_i, delta_i], ...]")
    fpr: float = Field(1e-3, gt=0, lt=1, allow_inf_nan=False,
                       description="reference FPR of the attack-success comparison before and after noise")
    standard_error: Optional[float] = Field(None, ge=0, le=1e12, allow_inf_nan=False,
                                            description="standard error of the statistic without noise (95% CI widths)")


#: What an empty discretization means (the library's default, issue 29).
DISCRETIZATION_RULE = ("PLD discretization; empty: the library's rule (fdpkit.privacy_report's default: 1e-4, "
                       "finer where a DP-SGD run's steps are too small for it, coarser (up to 1e-3) where they are so "
                       "large that this adds an estimated relative 1e-6 or less to mu, coarsened to fit the server's "
                       "budget), stated in the report's provenance")


#: The report routes' ``deltas`` (``fdpkit report --delta``, repeatable; the Report page's "δ of the
#: headline's ε" leads the default ones): each in (0, 1), at most :data:`MAX_DELTAS` of them.
MAX_DELTAS = 20
Deltas = Optional[list[Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]]]


def deltas_field() -> Any:
    """The optional ``deltas`` body field of the report routes (one definition for all four)."""
    return Field(None, min_length=1, max_length=MAX_DELTAS, title="δ of the report's ε",
                 description="δ at which the report gives ε from the accountant's privacy profile, each in (0, 1); "
                             "the first is the headline's (as `fdpkit report --delta`, repeatable); empty: "
                             "1e-5, 1e-6, 1e-9")


class TrainingShape(RequestModel):
    """How DP-SGD ran, beside its noise multiplier: sample rate or batch size + dataset size,
    steps or epochs, sampling scheme, neighbouring relation, privacy unit (shared by the
    report and calibration requests)."""

    model_config = ConfigDict(extra="forbid")
    sample_rate: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False, title="Sample rate q")
    batch_size: Optional[int] = Field(None, ge=1, title="Batch size")
    dataset_size: Optional[int] = Field(None, ge=1, title="Dataset size")
    steps: Optional[int] = Field(None, ge=1, title="Steps")
    epochs: Optional[float] = Field(None, gt=0, allow_inf_nan=False, title="Epochs")
    # fdpkit.vocabulary: the strings of the library and the CLI
    sampling: Sampling = Field(POISSON, title="Sampling scheme")
    relation: Relation = Field(ADD_REMOVE, title="Neighbouring relation")
    max_batch_size: Optional[int] = Field(None, ge=1, title="Max batch size")
    unit: Unit = Field(EXAMPLE, title="Privacy unit")
    examples_per_user: Optional[int] = Field(None, ge=1, le=10_000, title="Examples per user")
    discretization: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False, title="PLD discretization",
                                            description=DISCRETIZATION_RULE)


class DPSGDRequest(TrainingShape):
    noise_multiplier: float = Field(..., gt=0, le=1e4, allow_inf_nan=False, title="Noise multiplier σ")
    drop_last: bool = Field(False, title="Loader dropped the last batch",
                            description="shuffled or fixed-size batches in epochs: the loader dropped the "
                                        "last, smaller batch (floor(n/b) steps per epoch)")
    deltas: Deltas = deltas_field()


class CalibrateRequest(TrainingShape):
    """Calibrate DP-SGD: one target, and every training parameter but the one to solve for."""

    mu: Optional[float] = Field(None, gt=0, le=MU_LE, allow_inf_nan=False)
    epsilon: Optional[float] = Field(None, gt=0, le=EPSILON_LE, allow_inf_nan=False)
    delta: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False)
    tpr: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False)
    fpr: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False)
    advantage: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False)
    posterior: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False)
    prior: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False)
    noise_multiplier: Optional[float] = Field(None, gt=0, le=1e4, allow_inf_nan=False)
    drop_last: bool = Field(False, description="shuffled or fixed-size batches in epochs: the loader dropped the "
                                               "last, smaller batch (floor(n/b) steps per epoch)")


class UniformSamplingRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    mu: float = Field(..., gt=0, le=MU_LE, allow_inf_nan=False)
    n: int = Field(..., ge=1, le=10**12)
    discretization: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False, description=DISCRETIZATION_RULE)
    deltas: Deltas = deltas_field()


class PointsRequest(RequestModel):
    """A curve from (FPR, FNR) error points as CSV text (header fpr,fnr or alpha,beta)."""
    model_config = ConfigDict(extra="forbid")
    points: str = Field(..., min_length=1, max_length=1_000_000)
    bound: Literal["lower", "exact"] = "lower"
    discretization: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False, description=DISCRETIZATION_RULE)
    deltas: Deltas = deltas_field()


class MechanismRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    mechanism: dict[str, Any]
    discretization: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False, description=DISCRETIZATION_RULE)


class MechanismReportRequest(MechanismRequest):
    """``POST /api/report``: a mechanism spec and the report's δ (``/api/report/representations``
    takes the spec alone)."""

    deltas: Deltas = deltas_field()


class ConvertRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    epsilon: Optional[float] = Field(None, ge=0, le=EPSILON_LE, allow_inf_nan=False)
    delta: Optional[float] = Field(None, ge=0, le=1, allow_inf_nan=False)
    mu: Optional[float] = Field(None, ge=0, le=MU_LE, allow_inf_nan=False)
    rho: Optional[float] = Field(None, ge=0, le=1000, allow_inf_nan=False)


class RiskRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    guarantee: Literal["mu", "epsilon", "epsilon_delta", "zcdp"] = "mu"
    mu: Optional[float] = Field(None, ge=0, le=MU_LE, allow_inf_nan=False)
    rho: Optional[float] = Field(None, ge=0, le=1000, allow_inf_nan=False)
    epsilon: Optional[float] = Field(None, ge=0, le=EPSILON_LE, allow_inf_nan=False)
    delta: Optional[float] = Field(None, ge=0, le=1, allow_inf_nan=False)
    prior: float = Field(0.01, ge=0, le=1, allow_inf_nan=False)
    fpr: float = Field(1e-3, gt=0, lt=1, allow_inf_nan=False)
    n: Optional[int] = Field(None, ge=1, le=10**12,
                             description="people in the data (a whole number): warns when delta >= 1/n")
    mu_fpr_min: Optional[float] = Field(
        None, gt=0, lt=0.5, allow_inf_nan=False, title="Smallest FPR and FNR of μ's range",
        description="guarantee mu only, with mu_tau: a fitted mu (a privacy report's guarantee.alpha_min) holds for "
                    "attacks with FPR and FNR >= mu_fpr_min; outside, the reading gives TPR <= 1 - G_mu(FPR) + mu_tau")
    mu_tau: Optional[float] = Field(
        None, ge=0, le=1, allow_inf_nan=False, title="Slack τ outside μ's range",
        description="guarantee mu only, with mu_fpr_min: a privacy report's guarantee.tau (rounded up)")


class PlanRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    guide: Literal["utility_first", "privacy_first"] = "utility_first"
    effect: float = Field(0.2, allow_inf_nan=False)
    n: float = Field(100, gt=0, allow_inf_nan=False)
    sd: float = Field(0.25, ge=0, allow_inf_nan=False)
    level: float = Field(0.05, gt=0, lt=1, allow_inf_nan=False, validation_alias=AliasChoices("level", "alpha"),
                         description="the test's significance level (the old field name alpha is accepted)")
    data_range: float = Field(1.0, gt=0, allow_inf_nan=False)
    statistic: Literal["mean", "proportion", "count"] = "mean"
    alternative: Literal["larger", "smaller", "two-sided"] = "larger"
    groups: Literal[1, 2] = 1
    tests: int = Field(1, ge=1, le=10**6)
    correction: Literal["bonferroni", "bh"] = "bonferroni"
    required_power: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False, title="Required power")
    max_relative_loss: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False, title="Max relative power loss")
    prior: float = Field(0.01, ge=0, le=1, allow_inf_nan=False)
    fpr: float = Field(1e-3, gt=0, lt=1, allow_inf_nan=False)
    blatant_disclosure_ok: bool = False
    high_confidence_ok: bool = True
    max_relative_risk: Optional[float] = Field(None, ge=1, allow_inf_nan=False)
    max_attack_power: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False)
    delta: Optional[float] = Field(None, gt=0, lt=1, allow_inf_nan=False, title="δ of the release's budget",
                                   description="utility first: also give ε at this δ (a census limit's 1e-6), "
                                               "as epsilon_at_delta; ε at 1e-5 is always given")


class SweepRequest(RequestModel):
    """A small DP-SGD grid (the web accepts at most a few hundred settings per request)."""

    model_config = ConfigDict(extra="forbid")
    noise_multiplier: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(..., min_length=1, max_length=20)
    sample_rate: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(..., min_length=1, max_length=20)
    steps: list[Annotated[int, Field(ge=1)]] = Field(..., min_length=1, max_length=10)
    delta: float = Field(1e-5, gt=0, lt=1, allow_inf_nan=False)
    discretization: float = Field(1e-3, gt=0, le=0.5, allow_inf_nan=False)


class DesignTableRequest(RequestModel):
    """Smallest noise multiplier per (batch size, epochs) pair for a target mu."""

    model_config = ConfigDict(extra="forbid")
    mu: float = Field(..., gt=0, le=50, allow_inf_nan=False)
    batch_size: list[Annotated[int, Field(ge=1)]] = Field(..., min_length=1, max_length=6)
    epochs: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(..., min_length=1, max_length=6)
    dataset_size: int = Field(..., ge=1, le=10**9)
    delta: float = Field(1e-5, gt=0, lt=1, allow_inf_nan=False)
    discretization: float = Field(1e-3, gt=0, le=0.5, allow_inf_nan=False)


class CompareCurve(RequestModel):
    """One guarantee on the comparison plot; the fields that apply depend on ``kind``."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["mu", "epsilon_delta", "epsilon", "laplace", "gaussian", "mechanism"]
    mu: Optional[float] = Field(None, ge=0, le=MU_LE, allow_inf_nan=False)
    epsilon: Optional[float] = Field(None, ge=0, le=EPSILON_LE, allow_inf_nan=False)
    delta: Optional[float] = Field(None, ge=0, le=1, allow_inf_nan=False)
    scale: Optional[float] = Field(None, gt=0, allow_inf_nan=False, description="Laplace noise scale b")
    sigma: Optional[float] = Field(None, gt=0, allow_inf_nan=False, description="Gaussian noise sd")
    sensitivity: Optional[float] = Field(None, gt=0, allow_inf_nan=False)
    spec: Optional[dict[str, Any]] = Field(None, description="mechanism spec (kind mechanism): accounted numerically")


class CompareSettings(RequestModel):
    """The comparison's settings beside its curves (the Compare page's form reads them through
    this part of :class:`CompareRequest`)."""

    model_config = ConfigDict(extra="forbid")
    points: int = Field(101, ge=2, le=1001)
    discretization: float = Field(1e-3, gt=0, le=1, allow_inf_nan=False, description="for mechanism specs")


class CompareRequest(CompareSettings):
    """Several guarantees on one trade-off plot (at most 8)."""

    curves: list[CompareCurve] = Field(..., min_length=1, max_length=8)
