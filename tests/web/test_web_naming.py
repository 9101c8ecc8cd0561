"""Issue 23 in the web layer: the plan's test level is the field ``level`` (form, permalink and
JSON); the old name ``alpha`` is still accepted. Relation choices come from fdpkit.vocabulary."""

import pytest

from fdpkit.vocabulary import RELATIONS, SAMPLINGS, UNITS

PLAN = {"guide": "utility_first", "effect": 0.2, "n": 100, "sd": 0.25, "max_relative_loss": 0.01}


@pytest.mark.parametrize("name", ["level", "alpha"])
def test_plan_api_reads_level_and_the_old_alpha(client, name):
    r = client.post("/api/plan", json={**PLAN, name: 0.01})
    assert r.status_code == 200, r.text
    assert r.json()["mu_min"] == pytest.approx(0.28597, rel=1e-3)


def test_plan_api_refuses_level_out_of_range_by_its_name(client):
    r = client.post("/api/plan", json={**PLAN, "level": 1.5})
    assert r.status_code == 422 and "level" in r.text


@pytest.mark.parametrize("name", ["level", "alpha"])
def test_plan_form_and_permalink_read_level_and_the_old_alpha(client, name):
    data = {k: str(v) for k, v in PLAN.items()} | {name: "1%"}
    for r in (client.post("/plan", data=data), client.get("/plan", params=data)):
        assert r.status_code == 200
        assert "0.286" in r.text or "0.2860" in r.text


@pytest.mark.parametrize("old, new, value", [("max_power", "max_attack_power", "0.5"),
                                              ("max_risk", "max_relative_risk", "2")])
def test_plan_permalink_reads_the_old_limit_names(client, old, new, value):
    # the form's FIELDS listed max_power and max_risk, but they were never read: a link with
    # them answered "give exactly one limit: max_relative_risk or max_attack_power"
    from fdpkit.web.routers.plan import FIELDS

    assert old not in FIELDS and new in FIELDS
    base = {"guide": "privacy_first", "effect": "0.2", "n": "100", "sd": "0.25", "level": "0.01", "fpr": "0.001"}
    given_old = client.get("/plan", params={**base, old: value})
    given_new = client.get("/plan", params={**base, new: value})
    assert given_old.status_code == given_new.status_code == 200
    assert 'id="results"' in given_old.text and "give exactly one limit" not in given_old.text
    assert f'name="{new}" type="text" value="{value}"' in given_old.text  # shown under the public name
    assert f'name="{old}"' not in given_old.text


def test_plan_form_names_a_bad_level():
    from fastapi.testclient import TestClient

    from fdpkit.web.main import create_app

    r = TestClient(create_app()).post("/plan", data={k: str(v) for k, v in PLAN.items()} | {"level": "1.5"})
    assert r.status_code in (200, 422) and "level" in r.text.lower()


def test_report_form_choices_are_the_vocabulary():
    from fdpkit.web.models import TrainingShape
    from fdpkit.web.routers.report import CHOICES

    assert CHOICES == {"sampling": SAMPLINGS, "relation": RELATIONS, "unit": UNITS}
    for name, values in CHOICES.items():
        assert set(TrainingShape.model_fields[name].annotation.__args__) == set(values)
