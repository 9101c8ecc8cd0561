"""Wrong types and shapes through the curated API (session 13): each call below once let a
TypeError, OverflowError or NumPy error escape (or raised a ValueError without ``.parameter``);
each is now a :class:`fdpkit.ParameterError` naming the public argument. Found by fuzzing every
row of ``tests/core/test_core_hostile.py`` with values it does not draw: NumPy arrays of the wrong
shape, 0-d arrays, Fraction, Decimal, integers past the floats, strings."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.accounting import BudgetExceeded

G = fp.GaussianCurve(1.0)
L = fp.LaplaceCurve(1.0)
PAIR = np.array([0.5, 0.5])

CASES = {
    # "only 0-dimensional arrays can be converted to Python scalars"
    "bayes_risk(prior=array)": (lambda: fp.bayes_risk(G, prior=PAIR), "prior"),
    "two_proportion_power(p1=array)": (lambda: fp.two_proportion_power(p1=PAIR, p2=0.4, n1=200, n2=200, mu=1.0),
                                       "p1"),
    "two_proportion_power(p2=array)": (lambda: fp.two_proportion_power(p1=0.3, p2=PAIR, n1=200, n2=200, mu=1.0),
                                       "p2"),
    # "unsupported operand type(s) for /: 'NoneType' and 'float'", "int too large to convert to float"
    "ZTestSpec(effect=None)": (lambda: fp.ZTestSpec(effect=None, n=100, sd=0.25), "effect"),
    "ZTestSpec(effect='1')": (lambda: fp.ZTestSpec(effect="1", n=100, sd=0.25), "effect"),
    "ZTestSpec(effect=10**30)": (lambda: fp.ZTestSpec(effect=10**400, n=100, sd=0.25), "effect"),
    "ZTestSpec(effect=Decimal)": (lambda: fp.ZTestSpec(effect=Decimal("0.5"), n=100, sd=0.25), "effect"),
    # OverflowError: int too large to convert to float; InputTypeError without .parameter
    "group_curve(k=10**400)": (lambda: fp.group_curve(G, 10**400), "k"),
    "group_curve(k='2')": (lambda: fp.group_curve(G, "2"), "k"),
    "group_curve(k=2.5)": (lambda: fp.group_curve(G, 2.5), "k"),
    # NumPy's linspace: DTypePromotionError, UFuncTypeError, TypeError
    "profile_regret(eps_max='1')": (lambda: fp.profile_regret(L, G, eps_max="1"), "eps_max"),
    "profile_regret(eps_max=10**30)": (lambda: fp.profile_regret(L, G, eps_max=10**400), "eps_max"),
    "profile_regret(eps_max=Fraction)": (lambda: fp.profile_regret(L, G, eps_max=Fraction(10**400, 3)), "eps_max"),
    "profile_regret(eps_max=nan)": (lambda: fp.profile_regret(L, G, eps_max=float("nan")), "eps_max"),
    "profile_regret(eps_max=-1)": (lambda: fp.profile_regret(L, G, eps_max=-1.0), "eps_max"),
    # "iteration over a 0-d array"
    "CurveMechanism(alpha=0-d array)": (lambda: fp.CurveMechanism(alpha=np.array(0.25), tpr=(0.0, 0.7, 1.0)),
                                        "alpha"),
    # "must be real number, not str", OverflowError, decimal.InvalidOperation, UFuncTypeError
    "plausibility_warnings(mu='1')": (lambda: fp.plausibility_warnings(mu="1"), "mu"),
    "plausibility_warnings(n=Decimal NaN)": (lambda: fp.plausibility_warnings(n=Decimal("NaN")), "n"),
    "plausibility_warnings(prior=array)": (lambda: fp.plausibility_warnings(prior=PAIR), "prior"),
    "plausibility_warnings(deltas='a')": (lambda: fp.plausibility_warnings(deltas="a"), "deltas"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_wrong_type_is_a_parameter_error_naming_the_argument(case):
    call, parameter = CASES[case]
    with pytest.raises(fp.ParameterError) as info:
        call()
    assert info.value.parameter == parameter and parameter in str(info.value), str(info.value)


def test_plausibility_warnings_still_reads_numbers():
    assert fp.plausibility_warnings(mu=float("inf"))[0].startswith("μ = inf")
    assert fp.plausibility_warnings(epsilon=np.float64(30.0), deltas=np.array([0.5]))[0].startswith("ε = 30")
    assert fp.plausibility_warnings() == []
    # an integer past the floats is infinite (was an OverflowError)
    assert fp.plausibility_warnings(epsilon=10**400)[0].startswith("ε = inf gives no protection")


def test_t_test_power_at_a_huge_sample_size():
    # n = 1e308 passed the checks, then scipy's t quantile got an int past int64 (a TypeError)
    r = fp.mc_ttest_power(effect=0.2, n=1e308, sd=0.25, mu=1.0, n_sim=200, seed=0)
    assert 0.0 <= r.power <= 1.0


def test_budget_exceeded_is_a_parameter_error():
    # except fp.ParameterError let a refusal over the cost budget through (a bare ValueError subclass)
    with pytest.raises(fp.ParameterError) as info:
        fp.calibrate_dpsgd(noise_multiplier=5e-324, sample_rate=0.01, steps=10, discretization=1e-2)
    assert info.value.parameter is not None
    exc = BudgetExceeded("steps: too many", "steps")
    assert isinstance(exc, fp.ParameterError) and exc.parameters == ("steps",)
