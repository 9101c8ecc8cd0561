"""Bad input is a ParameterError: a ValueError whose ``.parameter`` is the public argument
name (issue 23, the thin web layer maps errors to form fields by it), picklable across
worker processes."""

import pickle

import pytest

import fdpkit as fp
from fdpkit.errors import ParameterError, parameter_of


@pytest.mark.parametrize("kwargs, parameter, parameters", [
    (dict(noise_multiplier=-1.0, sample_rate=0.01, steps=10), "noise_multiplier", ("noise_multiplier",)),
    (dict(noise_multiplier=1.0, sample_rate=2.0, steps=10), "sample_rate", ("sample_rate",)),
    (dict(noise_multiplier=1.0, sample_rate=0.1, batch_size=3, dataset_size=10, steps=3), "sample_rate",
     ("sample_rate", "batch_size")),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=3, epochs=1), "steps", ("steps", "epochs")),
    (dict(noise_multiplier=1.0, batch_size=3, steps=3), "dataset_size", ("dataset_size",)),
    (dict(noise_multiplier=1.0, batch_size=30, dataset_size=10, steps=3), "batch_size",
     ("batch_size", "dataset_size")),
    (dict(noise_multiplier=1.0, batch_size=3, dataset_size=10, steps=3, sampling="shuffled"), "relation",
     ("relation", "sampling")),
    (dict(noise_multiplier=1.0, sample_rate=0.1, steps=3.5), "steps", ("steps",)),
])
def test_dpsgd_names_the_parameter(kwargs, parameter, parameters):
    with pytest.raises(ValueError) as info:
        fp.dpsgd(**kwargs)
    assert isinstance(info.value, fp.ParameterError)
    assert info.value.parameter == parameter and parameter_of(info.value) == parameter
    assert info.value.parameters == parameters


def test_the_numeric_validator_names_the_parameter():
    with pytest.raises(fp.ParameterError) as info:
        fp.GaussianCurve(float("nan"))
    assert info.value.parameter == "mu" and str(info.value).startswith("mu")
    with pytest.raises(TypeError) as info:  # InputTypeError: a TypeError and a ParameterError
        fp.GaussianCurve(True)
    assert parameter_of(info.value) == "mu"


def test_pickles_with_its_parameter():
    exc = ParameterError("steps must be >= 1, got 0", "steps", ("steps", "epochs"))
    back = pickle.loads(pickle.dumps(exc))
    assert (str(back), back.parameter, back.parameters) == (str(exc), "steps", ("steps", "epochs"))
    assert parameter_of(ValueError("x")) is None
