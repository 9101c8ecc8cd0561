"""Issue 25 problems 2 (rest), 5 and 10: drop_last in calibration (library, CLI, page, API),
permalinks on Sweep, Compare and Audit, downloads named from the inputs, and the rough edges
(favicon, styled 403, /docs way back, login keeps the user name, Audit's blank σ)."""

import re

import pytest

import fdpkit as fp

SHUFFLED = dict(batch_size=256, dataset_size=60000, sampling="shuffled", relation="replace-one")


@pytest.mark.parametrize("drop", [False, True])
def test_calibrate_counts_loader_steps(drop):
    r = fp.calibrate_dpsgd(mu=20, epochs=60, drop_last=drop, **SHUFFLED)
    assert r.unknown == "noise_multiplier"
    assert r.mechanism.steps == (60 * 234 if drop else 60 * 235)
    assert r.to_dict()["drop_last"] is drop
    solved = fp.calibrate_dpsgd(mu=20, noise_multiplier=1.1, drop_last=drop, **SHUFFLED)
    per = 234 if drop else 235
    assert solved.achieved["epochs_equivalent"] == pytest.approx(solved.mechanism.steps / per)
    assert solved.achieved["mu"] <= 20


def test_cli_calibrate_drop_last_quotes_no_sample_rate():
    from typer.testing import CliRunner

    from fdpkit.cli import app

    args = ["calibrate", "dpsgd", "--mu", "20", "--epochs", "60", "--batch-size", "256", "--dataset-size", "60000",
            "--sampling", "shuffled", "--relation", "replace-one", "--format", "json"]
    import json

    plain = json.loads(CliRunner().invoke(app, args).stdout)
    dropped = json.loads(CliRunner().invoke(app, [*args, "--drop-last"]).stdout)
    assert plain["steps"] == 14100 and dropped["steps"] == 14040 and dropped["drop_last"] is True
    text = CliRunner().invoke(app, [*args[:-2], "--drop-last"]).output
    assert "sample rate" not in text and "batch size" in text


def test_calibrate_page_and_api_drop_last(client):
    q = ("/calibrate?target=mu&target_value=20&batch_size=256&dataset_size=60000&epochs=60&sampling=shuffled"
         "&relation=replace-one&discretization=0.001")
    plain, dropped = client.get(q), client.get(q + "&drop_last=on")
    assert plain.status_code == dropped.status_code == 200
    assert re.search(r'id="steps-out">14[,]?100<', plain.text) and re.search(r'id="steps-out">14[,]?040<', dropped.text)
    assert "sample rate q</th>" not in dropped.text and 'id="batch-size-out">256<' in dropped.text
    assert "14,040 steps (60 epochs of 234 batches" in dropped.text  # the statement counts the loader's steps
    assert 'name="drop_last"' in dropped.text and "checked" in dropped.text.split('id="drop_last"')[1][:40]
    api = client.post("/api/calibrate/dpsgd", json={"mu": 20, "epochs": 60, "drop_last": True, **SHUFFLED,
                                                    "discretization": 1e-3})
    assert api.status_code == 200 and api.json()["steps"] == 14040 and api.json()["drop_last"] is True
