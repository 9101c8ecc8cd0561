"""The statement for the paper: every required element, in Python, the CLI and every report
format; the setting (sampling, relation, unit) in every output."""

import json

import pytest
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit._numerics import safe_g
from fdpkit.cli import app
from fdpkit.report import build_document, render_document

DISC = 1e-3


@pytest.fixture(scope="module")
def reports():
    return {
        "poisson": fp.privacy_report(fp.dpsgd(1.1, batch_size=256, dataset_size=6000, epochs=3), discretization=DISC),
        "shuffled": fp.privacy_report(fp.dpsgd(1.1, batch_size=256, dataset_size=6000, epochs=3, sampling="shuffled",
                                               relation="replace-one"), discretization=DISC),
        "group": fp.privacy_report(fp.dpsgd(1.1, batch_size=256, dataset_size=6000, epochs=3, relation="zero-out",
                                            unit="user", examples_per_user=4), discretization=DISC),
    }


def test_statement_has_every_required_element(reports):
    for name, r in reports.items():
        s = r.statement()
        # privacy unit, relation, sampling, steps/epochs, noise
        assert ("example-level" in s) or ("user-level" in s)
        assert {"poisson": "adding or removing one example", "shuffled": "replacing one example with another",
                "group": "gradient is zero"}[name] in s
        assert {"poisson": "Poisson sampling", "shuffled": "fixed-size batches of 256",
                "group": "Poisson sampling"}[name] in s
        # a loader runs ceil(6000/256) = 24 shuffled batches per epoch: 72 steps, not ceil(3 x 6000/256) = 71
        assert ("72 steps (3 epochs of 24 batches, the last batch of each epoch smaller)" if name == "shuffled"
                else "71 steps (3 epochs)") in s and "σ = 1.1" in s
        # accounting method with versions and discretization
        assert "fdpkit " in s and "dp_accounting 0.6.0" in s
        if r.discretization:
            assert "discretization 0.001" in s
        # mu with regret and FPR range, epsilon at delta, TPR at FPR 1e-3
        # upper bounds: the last digit rounded up (safe_g), never to nearest
        assert f"μ = {safe_g(r.mu, 4, up=True)}" in s and "regret" in s and "false-positive rate" in s
        assert f"ε = {safe_g(r.epsilon_for_delta(1e-5), 4, up=True)}" in s and "δ = 1e-05" in s
        assert f"{safe_g(r.tpr(1e-3), 4, up=True)} at a false-positive rate of 0.001" in s  # the tables' digits
        assert "Caveats:" in s and "hyperparameter tuning" in s
    assert "shuffled" in reports["poisson"].statement()  # the Poisson assumption is spelled out
    sh = reports["shuffled"].statement()
    assert "not a guarantee for shuffled batches" in sh and "Chua et al., ICML 2024" in sh and "Annamalai et al. 2024" in sh
    g = reports["group"].statement()
    assert "at most 4 examples" in g and "Thm. 2.14" in g


def test_statement_for_other_mechanisms():
    s = fp.privacy_report(fp.Gaussian(1.0)).statement()
    assert "μ = 1 " in s and "closed form" in s and "ε = 4.378" in s  # 4.37718: rounded up


def test_setting_and_statement_in_every_format(reports):
    r = reports["shuffled"]
    doc = build_document(r)
    data = json.loads(render_document(doc, "json"))
    assert data["setting"]["sampling"] == "shuffled" and data["setting"]["relation"] == "replace-one"
    assert data["setting"]["unit"] == "example" and data["paper_statement"] == r.statement()
    assert "not a guarantee for shuffled batches" in data["comparison"]["label"]
    for fmt in ("md", "csv", "html"):
        text = render_document(doc, fmt).decode()
        assert "Statement for the paper" in text and "replace-one" in text and "shuffled" in text
        assert "not a guarantee for shuffled batches" in text
    plain = json.loads(render_document(build_document(fp.privacy_report(fp.Gaussian(1.0))), "json"))
    assert plain["setting"]["sampling"] == "none"


def test_cli_statement_and_training_options(tmp_path):
    runner = CliRunner()
    base = ["report", "dpsgd", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "6000",
            "--epochs", "3", "--discretization", "1e-3"]
    r = runner.invoke(app, [*base, "--sampling", "shuffled", "--relation", "zero-out", "--format", "statement"])
    assert r.exit_code == 0, r.output
    assert "zero-out" in r.stdout and "not a guarantee for shuffled batches" in r.stdout
    r = runner.invoke(app, [*base, "--format", "json"])
    assert json.loads(r.stdout)["mechanism"]["steps"] == 71
    hist = tmp_path / "history.json"
    hist.write_text(json.dumps([[1.1, 0.004, 100], [0.9, 0.008, 50]]))
    r = runner.invoke(app, ["report", "dpsgd", "--opacus-history", str(hist), "--discretization", "1e-3",
                            "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["setting"]["steps"] == 150


@pytest.mark.parametrize("args, needle", [
    (["--noise-multiplier", "1", "--sample-rate", "256", "--steps", "10"], "--sample-rate must be in (0, 1], got 256"),
    # said once: "--batch-size 256 with --dataset-size N (--batch-size 256 --dataset-size N)" repeated it
    (["--noise-multiplier", "1", "--sample-rate", "256", "--steps", "10"], "did you mean --batch-size 256 with "
     "--dataset-size N?"),
    (["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "14062.5"], "--steps must be a whole number"),
    (["--noise-multiplier", "1", "--batch-size", "0.004", "--dataset-size", "100", "--steps", "5"], "--batch-size must be a whole number"),
    (["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "5", "--sampling", "nope"], "--sampling must be one of"),
    (["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "5", "--relation", "nope"], "--relation must be one of"),
    (["--noise-multiplier", "1", "--batch-size", "10", "--dataset-size", "100", "--steps", "5", "--sampling", "shuffled"],
     "reshuffles the whole partition"),
    (["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "5", "--max-batch-size", "3"], "--max-batch-size applies only"),
    (["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "5", "--unit", "team"], "--unit must be one of"),
    (["--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "5", "--examples-per-user", "2"], "--examples-per-user needs"),
    (["--noise-multiplier", "1", "--batch-size", "10", "--steps", "5"], "--dataset-size is required"),
    (["--noise-multiplier", "1", "--sample-rate", "0.1", "--epochs", "-2"], "--epochs must be > 0"),
])
def test_cli_bad_input_names_the_flag(args, needle):
    r = CliRunner().invoke(app, ["report", "dpsgd", *args])
    assert r.exit_code == 2
    assert needle in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("kw, phrase", [
    (dict(sample_rate=0.05, steps=20), "Poisson sampling"),
    (dict(sample_rate=0.05, steps=20, relation="replace-one"), "replacing one example with another"),
    (dict(batch_size=5, dataset_size=100, steps=20, sampling="truncated-poisson", max_batch_size=8), "cut down to 8"),
    (dict(batch_size=5, dataset_size=100, steps=20, sampling="fixed-size", relation="replace-one"), "Thm. 4.2"),
    (dict(batch_size=5, dataset_size=100, steps=20, sampling="fixed-size", relation="zero-out"), "qN(2, σ²)"),
    (dict(batch_size=5, dataset_size=100, epochs=2, sampling="shuffled", relation="zero-out"), "without amplification"),
    (dict(sample_rate=0.05, steps=20, unit="user"), "users are sampled"),
])
def test_statement_for_every_scheme(kw, phrase):
    s = fp.privacy_report(fp.dpsgd(2.0, **kw), discretization=1e-2).statement()
    assert phrase in s and "μ =" in s and "ε =" in s


def test_statement_for_a_schedule():
    from fdpkit.mechanisms import dpsgd_schedule

    s = fp.privacy_report(dpsgd_schedule([(2.0, 0.05, 10), (1.5, 0.1, 5)]), discretization=1e-2).statement()
    assert "in 2 phases" in s and "σ = 1.5" in s
