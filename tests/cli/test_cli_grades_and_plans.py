"""CLI of issue 15: graded risk, recommended conversion with the right heading, plans with
noise scales, percentages, new plot kinds, a busy port in one line."""

import json
import re
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit.cli import app

runner = CliRunner()
SRC = str(Path(__file__).resolve().parents[2] / "src")


def run(*args):
    return runner.invoke(app, list(args))


def test_risk_grade_and_worst_case_note():
    r = run("risk", "--epsilon", "10")
    assert r.exit_code == 0 and "no meaningful protection" in r.output and "worst case" in r.output
    data = json.loads(run("risk", "--mu", "0.1", "--format", "json").stdout)
    assert data["grade"]["level"] == 0 and data["grade"]["label"] == "strong"
    r = run("risk", "--mu", "1", "--delta", "1e-5")
    assert r.exit_code == 2 and "--delta does not apply" in r.output


def test_percentages_accepted_or_refused_with_hint():
    a = json.loads(run("risk", "--mu", "1", "--prior", "1%", "--fpr", "0.1%", "--format", "json").stdout)
    b = json.loads(run("risk", "--mu", "1", "--prior", "0.01", "--fpr", "0.001", "--format", "json").stdout)
    assert a["attacks"] == b["attacks"]
    r = run("risk", "--mu", "1", "--prior", "five")
    assert r.exit_code == 2 and "0.05 (or 5%)" in r.output and "Traceback" not in r.output


def test_convert_heading_honours_delta():
    r = run("convert", "eps-to-mu", "--epsilon", "1", "--delta", "1e-5")
    assert r.exit_code == 0 and "pure epsilon" not in r.output and "pure ε" not in r.output
    assert "μ for (ε = 1, δ = 1e-05): μ = 0.2681" in r.output
    r = run("convert", "eps-to-mu", "--epsilon", "1")
    # 1.232035...: an upper bound, its last digit rounded up
    assert "μ for pure ε = 1: μ = 1.233" in r.output and "Other readings" in r.output



def test_every_conversion_warns_about_implausible_inputs():
    """mu > 10 ("did you mean epsilon?"), delta > 1e-3, epsilon > 20 warned (not refused) by
    every convert command; delta may be typed as a percentage."""
    r = run("convert", "mu-to-eps", "--mu", "12", "--delta", "0.001%")
    assert r.exit_code == 0 and "Did you mean ε?" in r.output and "δ = 1e-05" in r.output
    r = run("convert", "mu-to-delta", "--mu", "1", "--epsilon", "25", "--format", "json")
    assert "ε = 25 gives essentially no protection" in json.loads(r.stdout)["warnings"][0]
    # an infinite ε printed "e^ε ≈ 10^inf"
    r = run("convert", "mu-to-delta", "--mu", "1", "--epsilon", "inf")
    assert r.exit_code == 0 and "ε = inf gives no protection at all" in r.output and "10^inf" not in r.output
    r = run("convert", "eps-delta-to-mu", "--epsilon", "1", "--delta", "5%", "--format", "json")
    d = json.loads(r.stdout)
    assert d["delta"] == 0.05 and "δ = 0.05 is large" in d["warnings"][0]


@pytest.mark.parametrize("epsilon, delta", [(1.0, "1e-5"), (0.5, "1e-6"), (3.0, "1e-9"), (8.0, "1e-5")])
def test_eps_delta_to_mu_prints_a_mu_that_implies_the_pair(epsilon, delta):
    """The largest mu whose GDP implies (epsilon, delta) is a limit: its printed digits round
    down, so that the printed mu itself implies the pair (0.2681 for (1, 1e-5) did not:
    delta_mu(1) = 1.003e-5)."""
    r = run("convert", "eps-delta-to-mu", "--epsilon", str(epsilon), "--delta", delta)
    assert r.exit_code == 0, r.output
    printed = float(re.search(r"implies the pair\)\s*│\s*([0-9.e+-]+)", r.output).group(1))
    exact = fp.mu_for_epsilon_delta(epsilon, float(delta))
    assert printed <= exact and fp.delta_for_epsilon_from_mu(printed, epsilon) <= float(delta)
    assert printed > exact * (1 - 1e-3)  # the digits still say something (4 significant)

def test_plan_ends_in_noise_scale():
    r = run("plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--level", "1%",
            "--max-relative-loss", "0.01", "--format", "json")
    d = json.loads(r.stdout)
    assert d["sigma"] == pytest.approx(0.01 / d["mu_min"], rel=1e-9)
    r = run("plan", "privacy-first", "--effect", "0.1", "--n", "400", "--sd", "0.5", "--statistic", "proportion",
            "--groups", "2", "--alternative", "two-sided", "--tests", "3", "--max-attack-power", "5%", "--guidance")
    assert r.exit_code == 0, r.output
    assert "σ =" in r.output and "b =" in r.output and "two-sided two-sample" in r.output and "eyes-off" in r.output
    # the plan's rows are labelled by mechanism name, not by its spec dict ("{'kind': 'gaussian', ...}: mu")
    assert "Gaussian: mu (total)" in r.output and "Laplace: power per test" in r.output and "{'kind'" not in r.output


def test_utility_first_text_names_its_fpr_and_prior_grades_and_hands_on_to_the_ledger(tmp_path):
    # the table read "attack TPR at the FPR" and "attacker posterior" (which FPR? which prior?),
    # gave no grade where the Plan page shows its grade card (weak here), and did not say how
    # the plan reaches the ledger without re-typing σ
    args = ("plan", "utility-first", "--effect", "0.1", "--n", "60", "--sd", "0.25", "--max-relative-loss", "0.05",
            "--prior", "5%", "--fpr", "0.01")
    r = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    plan = fp.utility_first(analysis=fp.ZTestSpec(effect=0.1, n=60, sd=0.25, alpha=0.05), max_relative_loss=0.05,
                            prior=0.05, fpr=0.01)
    assert re.search(r"attack TPR at FPR 0\.01\s*│", r.output) and "at the FPR" not in r.output
    assert re.search(r"posterior for prior 0\.05 at FPR 0\.01\s*│", r.output) and "attacker posterior" not in r.output
    assert re.search(r"relative risk for FPR ≥ 0\.01\s*│", r.output)
    assert f"Protection: {plan.grade.label} (level {plan.grade.level} of 0–3" in r.output
    assert "fdpkit ledger propose DATASET --mechanism plan.json" in r.output
    # the hand-off works as printed: the JSON's mechanism is the printed noise, proposed as is
    out = tmp_path / "plan.json"
    assert runner.invoke(app, [*args, "--format", "json", "--output", str(out)]).exit_code == 0
    db = str(tmp_path / "l.sqlite")
    assert runner.invoke(app, ["ledger", "--db", db, "init"]).exit_code == 0
    assert runner.invoke(app, ["ledger", "--db", db, "dataset", "add", "survey", "--unit", "one person"]).exit_code == 0
    r = runner.invoke(app, ["ledger", "--db", db, "propose", "survey", "--mechanism", str(out), "--title", "mean",
                            "--user", "ana"])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["mechanism"] == plan.mechanism == {
        "kind": "gaussian", "sigma": 0.0146, "sensitivity": pytest.approx(1 / 60)}


@pytest.mark.parametrize("kind", ["mu-vs-epsilon", "precision-recall", "power-effect", "ztest-roc",
                                  "posterior-fpr", "epsilon-noise", "tradeoff"])
def test_new_plot_kinds(kind, tmp_path):
    out = tmp_path / f"{kind}.svg"
    r = run("-q", "plot", kind, "--mu", "1", "--eps-delta", "1,1e-5", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_busy_port_gives_one_clear_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "fdpkit.cli", "serve", "--port", str(port)], capture_output=True,
                           text=True, timeout=120, env={**os.environ, "PYTHONPATH": SRC})
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "already in use" in lines[0] and "Traceback" not in r.stderr


def test_calibrate_warns_when_delta_is_not_below_one_over_n():
    r = run("calibrate", "dpsgd", "--epsilon", "3", "--delta", "0.01", "--batch-size", "50", "--dataset-size", "1000",
            "--epochs", "1", "--discretization", "1e-2", "--format", "json")
    assert r.exit_code == 0, r.output
    assert any("1/n" in w for w in json.loads(r.stdout)["warnings"])


def test_risk_takes_the_range_of_a_fitted_mu():
    # a report's μ = 1.567 holds for FPR and FNR >= 1e-10 only: `fdpkit risk --mu 1.567 --fpr 1e-12`
    # read μ-GDP's TPR 2.283e-08 (posterior 0.9957), below the run's certified 8.388e-07 (0.9999)
    rng = ("--mu-fpr-min", "1e-10", "--mu-tau", "8.159e-07")
    base = ("risk", "--mu", "1.567", "--fpr", "1e-12", "--fpr", "0.001", "--format", "json")
    plain, carried = json.loads(run(*base).stdout), json.loads(run(*base, *rng).stdout)
    low, usual = carried["attacks"][0], plain["attacks"][0]
    assert low["tpr"] >= 8.159e-07 > 30 * usual["tpr"]
    assert low["posteriors"][0]["posterior"] > usual["posteriors"][0]["posterior"]
    assert "FPR and FNR ≥ 1e-10" in carried["warnings"][0] and not plain["warnings"]
    assert carried["attacks"][1] == plain["attacks"][1]  # FPR 0.001: inside the range, as before
    r = run("risk", "--mu", "1", "--mu-tau", "-1", "--mu-fpr-min", "1e-10")
    assert r.exit_code == 2 and "--mu-tau must be >= 0" in r.output
    assert run("risk", "--epsilon", "1", "--mu-tau", "1e-6").exit_code == 2


def test_grade_scale_reads_the_same_on_every_surface():
    # session 13: one grade, three wordings of its scale: "(level 1 of 0–3)" in the report's
    # headline table (no direction: is 0 the best or the worst?), "(level 1, 0 strongest)" from
    # `fdpkit risk`, "(level 1 of 0–3, 0 strongest)" in the grade box of the web page and PDF
    scale = "(level 1 of 0–3, 0 strongest)"
    out = run("risk", "--mu", "0.6").output
    assert scale in out
    from fdpkit.report import build_document

    doc = build_document(fp.privacy_report(fp.Gaussian(1 / 0.6)), representations=False)
    rows = [r for s in doc.sections for t in s.tables for r in t.rows if r[0] == "protection grade"]
    assert any("level" in r[1] for r in rows) and all(scale in r[1] for r in rows if "level" in r[1])


def test_dpsgd_errors_say_the_option_to_type():
    # the library's keyword spelling reached the terminal: "use relation='replace-one' or 'zero-out'" and
    # "e.g. delta=1e-5", where the CLI user types --relation replace-one and --delta 1e-5
    r = run("report", "dpsgd", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "50000",
            "--epochs", "1", "--sampling", "shuffled")
    assert r.exit_code == 2 and "use --relation replace-one or 'zero-out'" in r.output and "relation=" not in r.output
    r = run("calibrate", "dpsgd", "--epsilon", "2", "--batch-size", "256", "--dataset-size", "50000", "--epochs", "1")
    assert r.exit_code == 2 and "(e.g. --delta 1e-5)" in r.output and "delta=" not in r.output
