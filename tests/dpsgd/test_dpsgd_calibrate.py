"""Calibration round trips for every target x unknown (solve, then report, then compare with
the target on the safe side), any scheme, the CLI's JSON, and bad input."""

import json

import pytest
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit.calibrate import CALIBRATION_RTOL
from fdpkit.cli import app

DISC = 1e-2            # cheap accounting runs (the solver is the same at 1e-4)
CLOSE_RTOL = 5 * CALIBRATION_RTOL  # achieved within this of the target (continuous unknowns)
#: fixed-size batches at discretization 1e-2: epsilon(sigma) jitters by ~0.5% (the one-step
#: curve's losses are rounded up to the grid), so the safe answer may sit that far inside
JITTER_RTOL = 1e-2
BASE = dict(noise_multiplier=1.2, sample_rate=0.05, steps=40)
TARGETS = {
    "mu": dict(mu=0.6),
    "epsilon": dict(epsilon=2.0, delta=1e-5),
    "tpr": dict(tpr=0.01, fpr=1e-3),
    "advantage": dict(advantage=0.15),
    "posterior": dict(posterior=0.05, prior=0.01),
}


def _metric(report, name, target):
    if name == "mu":
        return report.mu
    if name == "epsilon":
        return report.epsilon_for_delta(target["delta"])
    if name == "tpr":
        return float(report.curve.tpr(target["fpr"]))
    if name == "advantage":
        return report.advantage
    return float(fp.posterior(report.curve, target["prior"], 1e-3))


@pytest.mark.parametrize("unknown", ["noise_multiplier", "sample_rate", "steps", "batch_size"])
@pytest.mark.parametrize("name", list(TARGETS))
def test_round_trip_every_target_and_unknown(name, unknown):
    target = TARGETS[name]
    given = dict(BASE)
    if unknown == "batch_size":
        given = dict(noise_multiplier=1.2, dataset_size=400, steps=40, sampling="fixed-size", relation="replace-one",
                     **({} if False else {}))
        given["noise_multiplier"] = 2.5
    else:
        given.pop(unknown)
    r = fp.calibrate_dpsgd(**target, **given, discretization=DISC)
    assert r.unknown == unknown and r.converged
    rep = fp.privacy_report(r.mechanism, discretization=DISC, deltas=[1e-5])
    achieved = _metric(rep, name, target)
    assert achieved == pytest.approx(r.achieved[name])
    assert achieved <= target[name], "calibrated run exceeds the target"
    for key in ("mu", "epsilon", "tpr", "advantage", "posterior"):
        assert key in r.achieved
    if unknown in ("noise_multiplier", "sample_rate"):
        assert achieved >= target[name] * (1 - CLOSE_RTOL)
    else:  # whole numbers: one more step / example breaks the target
        more = r.mechanism.with_(steps=r.value + 1) if unknown == "steps" else fp.dpsgd(
            given["noise_multiplier"], batch_size=r.value + 1, dataset_size=400, steps=40,
            sampling="fixed-size", relation="replace-one")
        assert _metric(fp.privacy_report(more, discretization=DISC, deltas=[1e-5]), name, target) > target[name]


@pytest.mark.parametrize("scheme", [
    dict(sampling="shuffled", relation="replace-one", batch_size=50, dataset_size=1000, epochs=4),
    dict(sampling="fixed-size", relation="zero-out", batch_size=50, dataset_size=1000, steps=40),
    dict(sampling="truncated-poisson", relation="add-remove", batch_size=50, dataset_size=1000, steps=40,
         max_batch_size=60),
    dict(sample_rate=0.05, steps=40, relation="replace-one", unit="user", examples_per_user=2),
])
def test_any_scheme_noise_for_epsilon(scheme):
    r = fp.calibrate_dpsgd(epsilon=3.0, delta=1e-5, **scheme, discretization=DISC)
    eps = fp.privacy_report(r.mechanism, discretization=DISC, deltas=[1e-5]).epsilon_for_delta(1e-5)
    assert eps <= 3.0
    assert eps >= 3.0 * (1 - (JITTER_RTOL if scheme.get("sampling") == "fixed-size" else CLOSE_RTOL))
    assert r.mechanism.sampling == scheme.get("sampling", "poisson")


def test_epochs_unknown_reports_epochs():
    r = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, noise_multiplier=1.5, batch_size=50, dataset_size=1000,
                           discretization=DISC)
    assert r.unknown == "steps" and r.achieved["epochs_equivalent"] == pytest.approx(r.value * 50 / 1000)


def test_account_only_and_old_form():
    r = fp.calibrate_dpsgd(noise_multiplier=1.0, sample_rate=0.05, steps=40, discretization=DISC)
    assert r.unknown == "mu" and r.value == r.achieved_mu
    old = fp.calibrate_dpsgd(mu=1.0, sample_rate=0.05, steps=40, discretization=DISC)
    assert old.unknown == "noise_multiplier" and old.achieved_mu <= 1.0


@pytest.mark.slow  # a calibration at the default 1e-4 (about 2 s of CPU)
def test_default_discretization_is_the_library_rule():
    """Issue 29: with no discretization, calibration accounts each run as ``privacy_report``
    does by default (the rule), so the default report of the calibrated run meets the target."""
    r = fp.calibrate_dpsgd(mu=1.0, sample_rate=0.05, steps=40)
    default = fp.privacy_report(r.mechanism)
    # the rule, not a fixed 1e-4: here (q = 0.05, sigma ~ 0.85) a coarser grid (Eq. 3 of
    # accounting._resolution) that costs mu an estimated relative 1e-6
    assert default.provenance["discretization_rule"].startswith("coarsened from the default")
    assert default.provenance["discretization"] > 1e-4 and default.mu <= 1.0
    assert r.achieved_mu == default.mu
    acc = fp.calibrate_dpsgd(noise_multiplier=1.0, sample_rate=0.05, steps=40)  # account only: the rule too
    assert acc.value == fp.privacy_report(fp.dpsgd(1.0, 0.05, 40)).mu


@pytest.mark.parametrize("kwargs, match", [
    (dict(mu=1.0, epsilon=1.0, delta=1e-5, sample_rate=0.1, steps=10), r"give exactly one target"),
    (dict(epsilon=1.0, sample_rate=0.1, steps=10), r"an epsilon target needs delta"),
    (dict(epsilon=1.0, delta=1.5, sample_rate=0.1, steps=10), r"delta must be < 1"),
    (dict(tpr=0.5, sample_rate=0.1, steps=10), r"a tpr target needs fpr"),
    (dict(tpr=0.001, fpr=0.01, sample_rate=0.1, steps=10), r"tpr must be above fpr=0.01"),
    (dict(posterior=0.5, sample_rate=0.1, steps=10), r"a posterior target needs prior"),
    (dict(posterior=0.01, prior=0.1, sample_rate=0.1, steps=10), r"posterior must be above prior=0.1"),
    (dict(advantage=1.0, sample_rate=0.1, steps=10), r"advantage must be < 1"),
    (dict(mu=1.0, noise_multiplier=1.0, sample_rate=0.1, steps=10), r"exactly one of noise_multiplier, sample_rate \(or batch_size\), steps \(or epochs\) must be left out.*got 0"),
    (dict(mu=1.0, steps=10), r"got 2 left out \(noise_multiplier, sample_rate\)"),
    (dict(sample_rate=0.1, steps=10), r"give a target"),
    (dict(mu=1.0, sample_rate=256, steps=10), r"sample_rate must be in \(0, 1\], got 256: did you mean batch_size=256"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fp.calibrate_dpsgd(**kwargs, discretization=DISC)


def test_unreachable_target_is_refused():
    with pytest.raises(ValueError, match=r"could not meet the target by changing steps: even steps = 1"):
        fp.calibrate_dpsgd(mu=0.01, noise_multiplier=0.5, sample_rate=0.5, discretization=DISC)


def test_cli_calibrate_json_has_the_external_keys():
    runner = CliRunner()
    r = runner.invoke(app, ["calibrate", "dpsgd", "--epsilon", "3", "--delta", "1e-5", "--batch-size", "50",
                            "--dataset-size", "1000", "--epochs", "2", "--discretization", "1e-2", "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {"noise_multiplier", "mu", "epsilon"} <= set(data)
    assert data["epsilon"] <= 3.0 and data["delta"] == 1e-5
    back = fp.privacy_report(fp.dpsgd(data["noise_multiplier"], batch_size=50, dataset_size=1000, epochs=2),
                             discretization=1e-2, deltas=[1e-5])
    assert back.epsilon_for_delta(1e-5) == pytest.approx(data["epsilon"]) and back.mu == pytest.approx(data["mu"])
    for args in (["--mu", "1"], ["--tpr", "0.01", "--fpr", "1e-3"]):
        r = runner.invoke(app, ["calibrate", "dpsgd", *args, "--sample-rate", "0.05", "--steps", "40",
                                "--discretization", "1e-2", "--format", "json"])
        assert r.exit_code == 0, r.output
        assert "noise_multiplier" in json.loads(r.stdout)
    r = runner.invoke(app, ["calibrate", "dpsgd", "--epsilon", "3", "--sample-rate", "0.05", "--steps", "40"])
    assert r.exit_code == 2 and "--epsilon target needs delta" not in r.output and "delta" in r.output


def test_cli_calibrate_json_proposes_the_printed_sigma():
    """`-f json` carried the search's sigma (1.10143) while the text printed 1.102 (rounded up,
    the safe side): the JSON now proposes the printed sigma, with that run's own figures, and
    keeps the search's value as exact_value."""
    args = ["calibrate", "dpsgd", "--epsilon", "2", "--delta", "1e-5", "--batch-size", "50", "--dataset-size",
            "1000", "--epochs", "2", "--discretization", "1e-2"]
    text = " ".join(CliRunner().invoke(app, args).output.split())
    assert "1.102 (rounded up, the safe side" in text
    r = CliRunner().invoke(app, [*args, "-f", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["noise_multiplier"] == data["value"] == data["mechanism"]["noise_multiplier"] == 1.102
    assert f"{data['exact_value']:.6g}" == "1.10143" and data["exact_value"] < data["value"]
    printed = fp.privacy_report(fp.dpsgd(1.102, batch_size=50, dataset_size=1000, epochs=2), discretization=DISC,
                                deltas=[1e-5])
    assert data["epsilon"] == pytest.approx(printed.epsilon_for_delta(1e-5)) and data["epsilon"] <= 2.0
    assert data["mu"] == pytest.approx(printed.mu)


def test_rounded_value_and_mechanism_stay_on_the_safe_side():
    """What a user copies (4 significant digits) still meets the target: sigma up, q down."""
    r = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, batch_size=50, dataset_size=1000, epochs=2, discretization=DISC)
    assert r.rounded_value() == 1.102 and f"{r.value:.4g}" == "1.101"  # to nearest: less noise than solved
    assert r.rounded_mechanism().noise_multiplier == 1.102
    assert fp.privacy_report(r.rounded_mechanism(), discretization=DISC).epsilon_for_delta(1e-5) <= 2.0
    q = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, noise_multiplier=1.1, steps=40, discretization=DISC)
    assert q.unknown == "sample_rate" and q.rounded_value() <= q.value
    assert q.rounded_mechanism().phases[0].sample_rate == q.rounded_value()
    whole = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, noise_multiplier=1.1, sample_rate=0.05, discretization=DISC)
    assert whole.rounded_value() == whole.value and whole.rounded_mechanism() is whole.mechanism


def test_rounded_result_reads_the_rounded_run():
    """The Calibrate page's table read the exact sigma 1.10143 (mu 0.6193, eps 2.000) under a
    statement of the rounded sigma 1.102 (mu 0.6188, eps 1.998): :meth:`rounded` is one run."""
    r = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, batch_size=50, dataset_size=1000, epochs=2, discretization=DISC)
    assert r.discretization == DISC and r.exact_value is None
    q = r.rounded()
    assert q.value == 1.102 and q.exact_value == r.value and q.mechanism.noise_multiplier == 1.102
    rep = fp.privacy_report(q.mechanism, discretization=DISC)
    assert q.achieved["mu"] == rep.mu and q.achieved_mu == rep.mu and q.achieved["mu"] < r.achieved["mu"]
    assert q.achieved["epsilon"] == rep.epsilon_for_delta(1e-5) <= r.achieved["epsilon"] <= 2.0
    assert q.to_dict()["noise_multiplier"] == 1.102 and q.to_dict()["exact_value"] == r.value
    assert "exact_value" not in r.to_dict()
    whole = fp.calibrate_dpsgd(epsilon=2.0, delta=1e-5, noise_multiplier=1.1, sample_rate=0.05, discretization=DISC)
    assert whole.rounded() is whole  # steps: solved on the safe side, nothing to round


def test_cli_calibrate_table_is_of_the_rounded_run():
    runner = CliRunner()
    r = runner.invoke(app, ["calibrate", "dpsgd", "--epsilon", "2", "--delta", "1e-5", "--batch-size", "50",
                            "--dataset-size", "1000", "--epochs", "2", "--discretization", str(DISC)])
    assert r.exit_code == 0, r.output
    rep = fp.privacy_report(fp.dpsgd(noise_multiplier=1.102, batch_size=50, dataset_size=1000, epochs=2),
                            discretization=DISC)
    text = " ".join(r.output.split())
    assert f"achieved mu (FPR and FNR ≥ 1e-10) │ {rep.mu:.4g}" in text and f"{rep.epsilon_for_delta(1e-5):.4g}" in text
    assert "1.102 (rounded up, the safe side" in text
    # the solved noise multiplier is one row (it was shown twice: as noise_multiplier and noise multiplier)
    labels = [line.split("│")[1].strip() for line in r.output.splitlines() if line.count("│") == 3]
    labels = [x for x in labels if x]
    assert "noise_multiplier" not in labels and labels.count("noise multiplier") == 1, labels


def test_cli_calibrate_ends_with_the_report_command_of_the_printed_run():
    # the CLI ended at its table (the web page links the full report): the run had to be
    # re-typed into `fdpkit report dpsgd`, solved value included
    import shlex

    runner = CliRunner()
    r = runner.invoke(app, ["calibrate", "dpsgd", "--epsilon", "2", "--delta", "1e-5", "--batch-size", "50",
                            "--dataset-size", "1000", "--epochs", "2", "--discretization", str(DISC)])
    assert r.exit_code == 0, r.output
    line = " ".join(r.output.split()).split("Next: ", 1)[1]
    command = line.split(" (the full report", 1)[0]
    assert command == ("fdpkit report dpsgd --noise-multiplier 1.102 --batch-size 50 --dataset-size 1000 --epochs 2 "
                       f"--discretization {DISC!r}")
    rep = runner.invoke(app, shlex.split(command)[1:])
    assert rep.exit_code == 0, rep.output
    achieved = " ".join(r.output.split())
    mu = " ".join(rep.output.split()).split("μ = ", 1)[1].split(" ", 1)[0]
    assert f"achieved mu (FPR and FNR ≥ 1e-10) │ {mu} │" in achieved  # the same run, the same μ
    shuffled = runner.invoke(app, ["calibrate", "dpsgd", "--mu", "1", "--batch-size", "256", "--dataset-size", "60000",
                                   "--epochs", "10", "--sampling", "shuffled", "--relation", "replace-one"])
    assert ("Next: fdpkit report dpsgd --noise-multiplier 6.325 --batch-size 256 --dataset-size 60000 --epochs 10 "
            "--sampling shuffled --relation replace-one") in " ".join(shuffled.output.split())
    # JSON output stays JSON only
    js = runner.invoke(app, ["calibrate", "dpsgd", "--mu", "1", "--batch-size", "256", "--dataset-size", "60000",
                             "--epochs", "10", "--sampling", "shuffled", "--relation", "replace-one", "-f", "json"])
    assert "Next:" not in js.output


def test_cli_calibrate_carries_its_delta_to_the_report_it_names():
    # calibrated to ε ≤ 2 at δ = 2e-5, the Next line's report (which had no --delta) led with
    # "ε = 2.091 at δ = 1e-05": the target the user asked for appeared nowhere in it
    import shlex

    runner = CliRunner()
    r = runner.invoke(app, ["calibrate", "dpsgd", "--epsilon", "2", "--delta", "2e-5", "--batch-size", "50",
                            "--dataset-size", "100000", "--epochs", "2", "--discretization", str(DISC)])
    assert r.exit_code == 0, r.output
    command = " ".join(r.output.split()).split("Next: ", 1)[1].split(" (the full report", 1)[0]
    assert command.endswith("--delta 2e-05 --delta 1e-05 --delta 1e-06 --delta 1e-09")
    rep = runner.invoke(app, shlex.split(command)[1:], env={"COLUMNS": "200"})
    assert rep.exit_code == 0, rep.output
    achieved = " ".join(r.output.split()).split("achieved epsilon at delta=2e-05 │ ", 1)[1].split(" ", 1)[0]
    text = " ".join(rep.output.split())
    # the report leads with the calibration's δ: summary, headline and statement, at the table's figure
    assert f"ε = {achieved} at δ = 2e-05;" in text and f"ε at δ = 2e-05 │ {achieved} │" in text
    assert f"(ε = {achieved}, δ = 2e-05)-DP" in text
    assert "│ 1e-05 │" in text and "│ 1e-09 │" in text  # and keeps the usual δ below it
    # the default δ needs no flag; a bad --delta names the option
    plain = runner.invoke(app, ["calibrate", "dpsgd", "--epsilon", "2", "--delta", "1e-5", "--batch-size", "50",
                                "--dataset-size", "100000", "--epochs", "2", "--discretization", str(DISC)])
    assert "--delta" not in " ".join(plain.output.split()).split("Next: ", 1)[1]
    bad = runner.invoke(app, ["report", "dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10",
                              "--delta", "0"])
    assert bad.exit_code == 2 and "--delta must be in (0, 1)" in bad.output


def test_report_headline_leads_with_the_first_delta_as_the_statement_does():
    # deltas (2e-5, 1e-5): the headline and summary preferred 1e-5 wherever it was listed, while the
    # statement and PrivacyReport.summary() quote the first δ: two ε for one report's headline
    from fdpkit.report import build_document

    rep = fp.privacy_report(fp.dpsgd(1.3, 0.01, 200), deltas=(2e-5, 1e-5), discretization=DISC)
    doc = build_document(rep)
    head = dict(doc.section("headline").tables[0].rows)
    assert "ε at δ = 2e-05" in head and "ε at δ = 1e-05" not in head
    assert "at δ = 2e-05;" in doc.summary and "δ = 2e-05)-DP" in rep.statement()


def test_published_settings_row_keeps_epsilon_at_1e5_behind_another_headline_delta():
    # the report led with δ = 2e-5 (a calibration's): the published-settings table, whose column is
    # ε at δ = 1e-5, printed "-" for this mechanism although the report lists ε at 1e-5 below its headline
    from fdpkit.report import build_document
    from fdpkit.report.model import fmt

    rep = fp.privacy_report(fp.dpsgd(1.3, 0.01, 200), deltas=(2e-5, 1e-5), discretization=DISC)
    rows = build_document(rep).section("comparison").tables[0].rows
    mine = [r for r in rows if r[0] == "▶ this mechanism"]
    assert mine and mine[0][2] == fmt(rep.epsilon_for_delta(1e-5), up=True) != "-"
