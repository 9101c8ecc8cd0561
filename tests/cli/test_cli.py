"""The command line through typer's CliRunner: every command, bad input, exit codes."""

import json

import pytest
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit.cli import app

runner = CliRunner()
SMALL = ["report", "dpsgd", "--noise-multiplier", "2", "--sample-rate", "0.05", "--steps", "50",
         "--discretization", "1e-3"]


def run(*args):
    return runner.invoke(app, list(args))


def test_help_lists_commands():
    r = run("--help")
    assert r.exit_code == 0
    for cmd in ("report", "convert", "risk", "tables", "calibrate", "plot", "serve"):
        assert cmd in r.output


def test_report_text():
    r = run(*SMALL)
    assert r.exit_code == 0, r.output
    assert "μ" in r.output and "regret" in r.output and "DP-SGD" in r.output


def test_report_json_is_clean_and_valid():
    r = run(*SMALL, "--format", "json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["schema_version"] == "1.0"
    assert data["guarantee"]["mu"] > 0


@pytest.mark.parametrize("fmt", ["json", "csv", "md", "html", "pdf"])
def test_report_formats_to_file(tmp_path, fmt):
    path = tmp_path / f"r.{fmt}"
    r = run("--quiet", *SMALL, "--format", fmt, "--output", str(path))
    assert r.exit_code == 0, r.output
    assert path.exists() and path.stat().st_size > 100
    assert not list(tmp_path.glob(".r.*"))  # no temporary left behind


def test_report_from_spec_files(tmp_path):
    spec = tmp_path / "m.json"
    spec.write_text(json.dumps({"kind": "composed", "parts": [{"kind": "gaussian", "sigma": 2.0},
                                                             {"kind": "laplace", "scale": 2.0}]}))
    r = run("report", "--mechanism", str(spec), "--format", "json", "--discretization", "1e-3")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["mechanism"]["kind"] == "composed"
    toml = tmp_path / "m.toml"
    toml.write_text('kind = "dpsgd"\nnoise_multiplier = 2.0\nsample_rate = 0.05\nsteps = 20\n')
    r = run("report", "--mechanism", str(toml), "--format", "json", "--discretization", "1e-3")
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("args", [
    ["report", "gaussian", "--sigma", "1"],
    ["report", "laplace", "--scale", "1"],
    ["report", "randomized-response", "--epsilon", "1"],
    ["report", "pure-dp", "--epsilon", "1"],
    ["report", "approx-dp", "--epsilon", "1", "--delta", "1e-5"],
    ["convert", "eps-to-mu", "--epsilon", "1"],
    ["convert", "eps-to-mu", "--epsilon", "1", "--fpr", "0.01"],
    ["convert", "mu-to-eps", "--mu", "1"],
    ["convert", "mu-to-delta", "--mu", "1", "--epsilon", "1"],
    ["convert", "eps-delta-to-mu", "--epsilon", "1", "--delta", "1e-5"],
    ["risk", "--mu", "1", "--prior", "0.01", "--fpr", "1e-3"],
    ["risk", "--epsilon", "1", "--delta", "1e-5"],
    ["tables"],
    ["power", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--mu", "1", "--epsilon", "1", "--level", "0.01"],
    ["power", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--mu", "1", "--tests", "5"],
    ["plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--level", "0.01", "--max-relative-loss", "0.01"],
    ["plan", "privacy-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--max-attack-power", "0.05"],
    ["calibrate", "dpsgd", "--mu", "1", "--sample-rate", "0.05", "--steps", "50", "--discretization", "1e-3"],
])
def test_commands_succeed(args):
    r = run(*args)
    assert r.exit_code == 0, r.output
    r = run(*args, "--format", "json") if args[0] != "report" else r
    assert r.exit_code == 0, r.output
    if args[0] != "report":
        json.loads(r.stdout)


def test_convert_values():
    r = run("convert", "mu-to-eps", "--mu", "1", "--delta", "1e-5", "--format", "json")
    assert json.loads(r.stdout)["epsilon_at_delta"][0]["epsilon"] == pytest.approx(4.3772, abs=1e-4)
    r = run("risk", "--mu", "1", "--fpr", "1e-3", "--prior", "0.01", "--format", "json")
    data = json.loads(r.stdout)
    assert data["failure_mode"] == "graceful" and data["relative_risk"] == "inf"
    assert data["attacks"][0]["posteriors"][0]["posterior"] == pytest.approx(0.156, abs=1e-3)


def test_tables_csv_and_json():
    r = run("tables", "--format", "csv")
    assert r.exit_code == 0 and "Kulynych" in r.stdout
    r = run("tables", "--format", "json")
    assert len(json.loads(r.stdout)["tables"]) == 5  # K&H 4b/5b/6b, Gomez Tables 3 and 2


@pytest.mark.parametrize("kind", ["tradeoff", "roc", "difference", "profile", "posterior", "relative-risk", "attack-power"])
def test_plots(tmp_path, kind):
    path = tmp_path / f"p.{'svg' if kind != 'roc' else 'png'}"
    r = run("plot", kind, "--mu", "1", "--epsilon", "1", "--output", str(path))
    assert r.exit_code == 0, r.output
    assert path.stat().st_size > 1000


def test_plot_of_a_mechanism_shows_the_reports_mu(tmp_path):
    # sigma 8, q 1e-3: the report's rule accounts at 4.3e-5, finer than the default 1e-4
    # (mu 0.001318 there, 0.001367 at 1e-4); the plot once drew the 1e-4 curve beside it
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kind": "dpsgd", "noise_multiplier": 8.0, "sample_rate": 0.001, "steps": 100}))
    rep = json.loads(run("report", "--mechanism", str(spec), "--format", "json").stdout)
    assert rep["provenance"]["discretization"] < 1e-4
    out = tmp_path / "p.svg"
    r = run("plot", "tradeoff", "--mechanism", str(spec), "--output", str(out))
    assert r.exit_code == 0, r.output
    assert f"μ = {rep['guarantee']['mu']:.4g}" in out.read_text()


def test_report_discretization_left_out_is_the_rule_and_given_is_kept():
    # sigma 0.8, q 0.3: the rule coarsens to 1e-3 (Eq. 3 of accounting._resolution); an
    # explicit --discretization 1e-4 (once read as "left out") is 1e-4, in either position
    args = ["dpsgd", "--noise-multiplier", "0.8", "--sample-rate", "0.3", "--steps", "20", "--format", "json"]
    rule = json.loads(run("report", *args).stdout)
    assert rule["provenance"]["discretization"] == 1e-3
    assert rule["provenance"]["discretization_rule"].startswith("coarsened from the default")
    for given in (["report", *args, "--discretization", "1e-4"], ["report", "--discretization", "1e-4", *args]):
        kept = json.loads(run(*given).stdout)
        assert kept["provenance"]["discretization"] == 1e-4, given
        assert abs(kept["guarantee"]["mu"] / rule["guarantee"]["mu"] - 1) < 1e-5


@pytest.mark.parametrize("args, needle", [
    (["report", "dpsgd", "--noise-multiplier", "-1", "--sample-rate", "0.1", "--steps", "10"], "--noise-multiplier"),
    (["report", "dpsgd", "--noise-multiplier", "1", "--sample-rate", "1.5", "--steps", "10"], "--sample-rate"),
    (["report", "gaussian", "--sigma", "1", "--format", "xml"], "--format"),
    (["report", "--mechanism", "/nonexistent/spec.json"], "spec.json"),
    (["report"], "--mechanism"),
    (["report", "gaussian", "--sigma", "1", "--format", "pdf"], "--output"),
    (["convert", "eps-to-mu", "--epsilon", "-1"], "epsilon"),
    (["convert", "eps-to-mu", "--epsilon", "1", "--fpr", "0.1", "--recall", "0.1"], "at most one"),
    (["convert", "mu-to-eps", "--mu", "1", "--delta", "2"], "delta"),
    (["risk", "--mu", "1", "--epsilon", "1"], "exactly one"),
    (["risk", "--mu", "1", "--prior", "1.5"], "prior"),
    (["calibrate", "dpsgd", "--mu", "1", "--sample-rate", "0.1"], "exactly one"),
    (["plot", "nope", "--mu", "1", "--output", "x.svg"], "plot kind"),
    (["power", "--effect", "0.2", "--n", "0", "--sd", "0.25", "--mu", "1"], "n must be"),
    (["plan", "sideways", "--effect", "0.2", "--n", "10", "--sd", "0.25"], "guide must be"),
    (["plan", "utility-first", "--effect", "0.2", "--n", "10", "--sd", "0.25"], "exactly one of --required-power or --max-relative-loss"),
    (["plot", "tradeoff", "--mu", "1", "--output", "x.gif"], "--output must end in .svg, .png or .pdf"),
])
def test_bad_input_exits_2_with_one_line(args, needle, tmp_path):
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_bad_spec_leaves_no_output(tmp_path):
    spec = tmp_path / "bad.json"
    spec.write_text('{"kind": "gaussian", "sigma": -1}')
    target = tmp_path / "out.html"
    r = run("report", "--mechanism", str(spec), "--format", "html", "--output", str(target))
    assert r.exit_code == 2 and not target.exists()


def test_typer_usage_errors_exit_2():
    assert run("report", "dpsgd", "--sample-rate", "0.1").exit_code == 2
    assert run("nonexistent-command").exit_code == 2


def test_text_report_has_no_orphan_none_and_names_its_notes():
    """The terminal report printed a bare "None." (an empty section, untitled); now empty
    sections are left out and Warnings / Technical notes are named where they say something."""
    r = run("report", "gaussian", "--sigma", "1")
    assert r.exit_code == 0 and "None." not in r.stdout.splitlines()
    r = run("report", "laplace", "--scale", "10", "--times", "100")
    lines = r.stdout.splitlines()
    assert r.exit_code == 0 and "Technical notes" in lines
    assert any("bound on the tail mass" in x for x in lines[lines.index("Technical notes"):])


def test_statement_output_follows_the_output_rules(tmp_path):
    """--format statement -o wrote over an existing file without --force (the other formats
    refuse it); the check now runs before any work, for every format."""
    out = tmp_path / "s.txt"
    out.write_text("mine\n")
    r = run("report", "gaussian", "--sigma", "1", "--format", "statement", "-o", str(out))
    assert r.exit_code == 2 and "--force" in r.output and out.read_text() == "mine\n"
    r = run("--force", "report", "gaussian", "--sigma", "1", "--format", "statement", "-o", str(out))
    assert r.exit_code == 0 and out.read_text().startswith("We release")


def test_printed_noise_and_rates_meet_their_targets():
    """The solved value as printed is rounded towards the safe side: 1.18544 printed 1.185,
    and eps(1.185, q 0.02, T 500) = 2.001 > 2; the planned Laplace b = 0.0025562 printed
    0.002556, whose attack TPR 0.050017 > 0.05 (helper's reproducers)."""
    import re

    r = run("calibrate", "dpsgd", "--epsilon", "2", "--delta", "1e-5", "--sample-rate", "0.02", "--steps", "500")
    sigma = float(re.search(r"noise multiplier\s*│\s*([0-9.]+) \(rounded up", r.stdout).group(1))
    assert fp.privacy_report(fp.dpsgd(sigma, 0.02, 500), deltas=[1e-5]).epsilons[0][1] <= 2.0
    r = run("calibrate", "dpsgd", "--mu", "0.5", "--noise-multiplier", "1.3", "--steps", "1000")
    q = float(re.search(r"sample rate\s*│\s*([0-9.]+) \(rounded down", r.stdout).group(1))
    assert fp.privacy_report(fp.dpsgd(1.3, q, 1000)).mu <= 0.5
    r = run("plan", "privacy-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--max-attack-power", "0.05",
            "--fpr", "0.001")
    b = float(re.search(r"scale b = ([0-9.e-]+) ", r.stdout).group(1))
    assert float(fp.LaplaceCurve(0.01 / b).tpr(1e-3)) <= 0.05


def test_dpsgd_headline_rounds_its_bounds_up_on_every_surface():
    """σ 1.1, batch 256 of 60000, 30 epochs: ε = 1.63627 and TPR = 0.00372814 at FPR 1e-3 are
    upper bounds; to nearest they read 1.636 and 0.003728, below the certified values. Every
    surface prints 1.637 and 0.003729 (the paper statement too, session 12: it read 0.00373
    beside the tables' 0.003729); JSON keeps the full-precision floats."""
    from fdpkit.report import build_document

    args = ["report", "dpsgd", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "60000",
            "--epochs", "30"]
    rep = fp.privacy_report(fp.dpsgd(noise_multiplier=1.1, batch_size=256, dataset_size=60000, epochs=30))
    eps, tpr = rep.epsilon_for_delta(1e-5), rep.tpr(1e-3)
    assert 1.636 < eps < 1.637 and 0.003728 < tpr < 0.003729
    doc = build_document(rep, representations=False)
    head = dict(doc.section("headline").tables[0].rows)
    assert head["ε at δ = 1e-05"] == "1.637" and head["best attack TPR at FPR 0.001"] == "0.003729"
    assert "ε = 1.637 at δ = 1e-05" in doc.summary and "TPR ≤ 0.003729" in doc.summary
    assert dict(doc.section("profile").tables[0].rows)["1e-05"] == "1.637"
    assert "(ε = 1.637, δ = 1e-05)-DP" in rep.statement() and "above 0.003729 at" in rep.statement()
    assert "eps(δ=1e-05)=1.637" in repr(rep)
    assert doc.data["epsilon_at_delta"][0]["epsilon"] == eps  # machine-readable: full precision
    for fmt_args in ([], ["--format", "md"]):
        r = run(*args, *fmt_args)
        assert r.exit_code == 0, r.output
        assert "1.637" in r.output and "0.003729" in r.output, fmt_args
        assert "1.636" not in r.output and "0.003728" not in r.output, fmt_args
    r = run(*args, "--format", "json")
    data = json.loads(r.output)
    assert data["epsilon_at_delta"][0]["epsilon"] == eps and data["tpr_at_fpr"][4]["tpr"] == tpr
