"""Issue 23 (a thin web layer) and issue 25 problem 1 (forms that help): one pydantic schema
per form for HTML and JSON alike, every error at once beside its field in the label's words,
errors mapped by ``ParameterError.parameter``, empty forms with example placeholders and a
"Load example" control, and exclusive inputs marked so that typing one clears the other."""

from __future__ import annotations

import re

import pytest

from fdpkit.errors import ParameterError
from fdpkit.web.forms import EXCLUDES, conflicts, field_of, in_words, labels_of, parse_form
from fdpkit.web.models import DPSGDRequest


def _errors(html: str) -> dict[str, str]:
    return dict(re.findall(r'class="error" id="([\w-]+)-error" role="alert">([^<]*)<', html))


def test_report_form_starts_empty_with_example_placeholders_and_a_load_example_button(client):
    html = client.get("/report").text
    for name in ("noise_multiplier", "sample_rate", "steps"):
        tag = re.search(rf'<input id="{name}"[^>]*>', html).group(0)
        assert 'value=""' in tag and 'placeholder="e.g. ' in tag, tag
    assert 'id="load-example"' in html and "data-example=" in html
    assert 'data-excludes="batch_size"' in html and 'data-excludes="epochs"' in html


def test_every_error_at_once_beside_its_field_in_label_words(client):
    r = client.post("/report", data={"kind": "dpsgd", "noise_multiplier": "", "sample_rate": "0.1",
                                     "batch_size": "16", "steps": "10", "epochs": "2", "max_batch_size": "x"})
    errors = _errors(r.text)
    assert {"noise_multiplier", "sample_rate", "batch_size", "dataset_size", "steps", "epochs",
            "max_batch_size"} <= set(errors), errors
    assert errors["noise_multiplier"].startswith("Noise multiplier σ is required")
    assert "Sample rate q" in errors["sample_rate"] and "Batch size" in errors["sample_rate"]
    for text in errors.values():  # no code words
        assert not re.search(r"\b(sample_rate|batch_size|dataset_size|max_batch_size|noise_multiplier)\b", text), text


@pytest.mark.parametrize("path, body, field, typed", [
    ("/convert", {"mu": "1", "delta": "2"}, "delta", "2"),
    ("/risk", {"guarantee": "mu", "mu": "1", "prior": "500%"}, "prior", "500%"),
    ("/calculator", {"mode": "gaussian", "sensitivity": "1", "epsilon": "1", "delta": "2"}, "delta", "2"),
    ("/report", {"kind": "dpsgd", "noise_multiplier": "1", "sample_rate": "2", "steps": "10"}, "sample_rate", "2"),
])
def test_a_refused_value_is_quoted_as_typed(client, path, body, field, typed):
    # a probability typed "2" (or "500%") was read as the fraction 2.0 and refused with "got '2.0'"
    r = client.post(path, data=body)
    assert r.status_code == 422
    assert _errors(r.text)[field].endswith(f"got &#39;{typed}&#39;"), _errors(r.text)


def test_library_errors_are_mapped_by_parameter_and_worded_by_label(client):
    r = client.post("/report", data={"kind": "dpsgd", "noise_multiplier": "1", "batch_size": "16",
                                     "dataset_size": "100", "epochs": "2", "sampling": "shuffled",
                                     "relation": "add-remove"})
    errors = _errors(r.text)
    assert list(errors) == ["relation"], errors
    assert errors["relation"].startswith("Neighbouring relation") and "relation=" not in errors["relation"]


def test_parse_form_uses_the_json_schema():
    model, errors = parse_form(DPSGDRequest, {"noise_multiplier": "9.4", "sample_rate": "5%", "steps": "2e3"})
    assert not errors and model.sample_rate == 0.05 and model.steps == 2000
    model, errors = parse_form(DPSGDRequest, {"noise_multiplier": "inf", "sample_rate": "2", "steps": "1.5"})
    assert model is None and set(errors) == {"noise_multiplier", "sample_rate", "steps"}
    assert errors["sample_rate"].startswith("Sample rate q must be at most 1")


def test_field_of_reads_the_parameter_not_the_message():
    exc = ParameterError("give exactly one of steps or epochs", "steps", ("steps", "epochs"))
    assert field_of(exc, ("epochs", "steps")) == "steps"
    assert field_of(ParameterError("x must be > 0", "epochs"), ("steps", "epochs")) == "epochs"
    assert field_of(ParameterError("steps: the first word misleads", "epochs"), ("steps", "epochs")) == "epochs"
    assert field_of(ParameterError("unknown", "elsewhere"), ("steps",)) == "form"


@pytest.mark.parametrize("a, b", [("sample_rate", "batch_size"), ("steps", "epochs"),
                                  ("required_power", "max_relative_loss")])
def test_exclusive_pairs(a, b):
    assert EXCLUDES[a] == b and EXCLUDES[b] == a
    assert set(conflicts({a: "1", b: "2"})) == {a, b} and conflicts({a: "1", b: ""}) == {}


def test_in_words_and_labels():
    labels = labels_of(DPSGDRequest)
    assert labels["sample_rate"] == "Sample rate q" and labels["noise_multiplier"] == "Noise multiplier σ"
    assert in_words("batch_size must be at most dataset_size=100", labels) == "Batch size must be at most Dataset size 100"


def test_one_mu_limit_shared_with_the_library():
    from fdpkit._numerics import MU_MAX
    from fdpkit.web import models

    for model in (models.ConvertRequest, models.RiskRequest, models.UniformSamplingRequest, models.CalibrateRequest):
        le = [m.le for m in model.model_fields["mu"].metadata if hasattr(m, "le")]
        assert le == [MU_MAX], (model.__name__, le)


def test_plan_criteria_exclude_each_other_and_errors_come_at_once(client):
    html = client.get("/plan").text
    assert 'data-excludes="max_relative_loss"' in html and 'data-excludes="required_power"' in html
    base = {"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25", "alpha": "0.01", "data_range": "1",
            "prior": "0.01", "fpr": "0.001"}
    both = _errors(client.post("/plan", data={**base, "required_power": "0.8", "max_relative_loss": "0.01"}).text)
    assert set(both) == {"required_power", "max_relative_loss"} and "Required power" in both["required_power"]
    neither = _errors(client.post("/plan", data=base).text)
    assert set(neither) == {"required_power"} and "Max relative power loss" in neither["required_power"]
    assert 'id="mu-min"' in client.post("/plan", data={**base, "required_power": "0.8"}).text


def test_calibrate_form_reads_the_json_schema_and_answers_every_error_at_once(client):
    base = {"target": "epsilon", "target_value": "x", "delta": "2", "batch_size": "256", "dataset_size": "60000",
            "epochs": "1", "sample_rate": "0.1", "steps": "10"}
    errors = _errors(client.post("/calibrate", data=base).text)
    assert {"target_value", "delta", "sample_rate", "batch_size", "steps", "epochs"} <= set(errors), errors
    assert errors["target_value"].startswith("Target value must be a number")
    assert "Sample rate q" in errors["batch_size"]
    mu = _errors(client.post("/calibrate", data={**base, "target": "mu", "target_value": "5000", "delta": "1e-5",
                                                 "sample_rate": "", "steps": ""}).text)
    assert list(mu) == ["target_value"] and "1000" in mu["target_value"]  # the library's MU_MAX


def test_json_errors_carry_the_parameter(client):
    r = client.post("/api/report/dpsgd", json={"noise_multiplier": 1.0, "batch_size": 16, "dataset_size": 100,
                                               "epochs": 2, "sampling": "shuffled"})
    assert r.status_code == 422 and r.json()["parameter"] == "relation"
    assert r.json()["detail"].startswith("relation 'add-remove'")  # the JSON keeps the library's message
    r = client.post("/api/report", json={"mechanism": {"kind": "dpsgd", "noise_multiplier": 0.5, "sample_rate": 0.5,
                                                       "steps": 100000}})
    assert r.status_code == 422 and r.json()["detail"].startswith("steps")
