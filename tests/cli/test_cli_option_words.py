"""Error lines name the option as it is typed, through the one translator of library names
(``fdpkit.cli._option_words.in_option_words``): ``--steps``, ``--epochs``, ``--fpr``, not the Python
argument ``steps``, ``epochs``, ``fpr``; ``--zcdp`` and ``--level`` where the library calls them
``rho`` and ``alpha``; ``--dataset-size 5`` where it writes ``dataset_size=5``.

Each line below was different before (what it said is in the comment); the CLI runs in-process
through :func:`fdpkit.cli.run`."""

from __future__ import annotations

import pytest

from fdpkit.cli import _dpsgd, _option_words, run

PLAN = ["plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--max-relative-loss", "0.01"]
SWEEP = ["sweep", "--noise-multiplier", "1", "--executor", "inprocess"]


@pytest.mark.parametrize("argv, line", [
    # "give exactly one of steps or epochs, got neither"
    (["report", "dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.01"],
     "error: give exactly one of --steps or --epochs, got neither"),
    (["calibrate", "dpsgd", "--mu", "1", "--sample-rate", "0.1", "--steps", "10", "--epochs", "2"],
     "error: give exactly one of --steps or --epochs, got both"),
    ([*SWEEP, "--sample-rate", "0.1", "--steps", "10", "--epochs", "1"],
     "error: give exactly one of --steps or --epochs, got both"),
    # "... must be at most --dataset-size=5, got 10" / "got --batch-size=10 and no --dataset-size"
    ([*SWEEP, "--batch-size", "10", "--dataset-size", "5", "--steps", "10"],
     "error: --batch-size must be at most --dataset-size 5, got 10"),
    ([*SWEEP, "--batch-size", "10", "--steps", "10"],
     "error: --dataset-size is required with --batch-size (sample rate = --batch-size / --dataset-size), got "
     "--batch-size 10 and no --dataset-size"),
    # "--epochs=1000000000.0 give ..."
    (["report", "dpsgd", "--noise-multiplier", "1", "--batch-size", "10", "--dataset-size", "100", "--epochs", "1e9"],
     "error: --epochs 1000000000.0 give 10,000,000,000 steps, more than the 10,000,000 fdpkit accounts"),
    # "sampling 'truncated-poisson' needs --max-batch-size ..."
    (["report", "dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10", "--sampling",
      "truncated-poisson"],
     "error: --sampling 'truncated-poisson' needs --max-batch-size (the largest batch kept)"),
    # "did you mean --sample-rate 0.5 (--sample-rate 0.5)?"
    (["report", "dpsgd", "--noise-multiplier", "1", "--batch-size", "0.5", "--dataset-size", "100", "--steps", "10"],
     "error: --batch-size must be a whole number of examples, got 0.5: did you mean --sample-rate 0.5?"),
    # a word that is also an argument's name stays prose where it is prose
    (["report", "dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "1.5"],
     "error: --steps must be a whole number, got 1.5 (--steps count whole optimizer steps; to give epochs use "
     "--epochs ..., rounded up)"),
    # "a tpr target needs fpr (...)"; "tpr must be above fpr=0.6 ..." (calibrate lost the names: not translated)
    (["calibrate", "dpsgd", "--tpr", "0.5", "--noise-multiplier", "1", "--sample-rate", "0.01"],
     "error: a tpr target needs --fpr (the false-positive rate it is read at)"),
    (["calibrate", "dpsgd", "--posterior", "0.5", "--noise-multiplier", "1", "--sample-rate", "0.01"],
     "error: a posterior target needs --prior (the attacker's prior belief in membership)"),
    (["calibrate", "dpsgd", "--posterior", "0.005", "--prior", "0.01", "--noise-multiplier", "1", "--sample-rate",
      "0.01"],
     "error: --posterior must be above --prior 0.01 (no attack can be held below the prior), got 0.005"),
    # "give exactly one target (mu, epsilon, tpr, advantage or posterior), got mu, epsilon"
    (["calibrate", "dpsgd", "--mu", "1", "--epsilon", "1", "--noise-multiplier", "1", "--sample-rate", "0.01"],
     "error: give exactly one target (--mu, --epsilon, --tpr, --advantage or --posterior), got --mu, --epsilon"),
    (["calibrate", "dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.01"],
     "error: give a target (--mu, --epsilon, --tpr, --advantage or --posterior) to solve for --steps, or give every "
     "training parameter to account the run"),
    # "discretization must be in [1e-08, 1], got -1.0"
    (["calibrate", "dpsgd", "--mu", "1", "--noise-multiplier", "1", "--sample-rate", "0.1", "--discretization", "-1"],
     "error: --discretization must be in [1e-08, 1], got -1.0"),
    # "give at most one of fpr, recall, delta (one risk semantics), got fpr, recall"
    (["convert", "eps-to-mu", "--epsilon", "1", "--fpr", "0.1", "--recall", "0.5"],
     "error: give at most one of --fpr, --recall, --delta (one risk semantics), got --fpr, --recall"),
    # "orders and epsilons must have the same length, got 2 and 1"
    (["convert", "rdp-to-eps", "--order", "2", "--order", "3", "--epsilon", "1"],
     "error: --order and --epsilon must have the same length, got 2 and 1"),
    # "rho must be >= 0, got -1.0"
    (["risk", "--zcdp", "-1"], "error: --zcdp must be >= 0, got -1.0"),
    # "--alpha must be in (0, 1), got 2.0": the hidden, deprecated option, not the one typed
    ([*PLAN, "--level", "2"], "error: --level must be in (0, 1), got 2.0"),
    # "fprs must be in (0, 1), got 2.0"; "discretization must be in [1e-05, 0.5], got -1.0"
    ([*SWEEP, "--sample-rate", "0.1", "--steps", "10", "--fpr", "2"], "error: --fpr must be in (0, 1), got 2.0"),
    ([*SWEEP, "--sample-rate", "0.1", "--steps", "10", "--discretization", "-1"],
     "error: --discretization must be in [1e-05, 0.5], got -1.0"),
    # "threshold must be in (0, 1), got 2.0"; "mu must be positive and finite, got -1.0"
    (["sweep", "rule-of-thumb", "--threshold", "2"], "error: --threshold must be in (0, 1), got 2.0"),
    (["sweep", "design-table", "--mu", "-1", "--batch-size", "10", "--epochs", "1", "--dataset-size", "100"],
     "error: --mu must be positive and finite, got -1.0"),
    # "--alpha must be in (0, 1), got 2.0" for `plot --level 2`; "--delta must be in [0, 1]" for --eps-delta 1,2
    (["plot", "power-effect", "--level", "2", "-o", "p.svg"], "error: --level must be in (0, 1), got 2.0"),
    (["plot", "roc", "--eps-delta", "1,2", "-o", "p.svg"],
     "error: --eps-delta 1,2: delta must be in [0, 1], got 2.0"),
])
def test_error_lines_name_the_option_as_typed(argv, line, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a plot's -o p.svg, never written
    assert run(argv) == 2
    assert capsys.readouterr().err == line + "\n"


def test_the_ledger_reads_dpsgd_errors_in_the_same_words(tmp_path, capsys):
    # fdpkit ledger propose/check build the run outside `guarded`: _dpsgd.translated, the same translator
    db = str(tmp_path / "l.sqlite")
    assert run(["ledger", "--db", db, "init"]) == 0
    assert run(["ledger", "--db", db, "dataset", "add", "census", "--unit", "one person"]) == 0
    capsys.readouterr()
    assert run(["ledger", "--db", db, "check", "census", "--noise-multiplier", "1", "--sample-rate", "0.1"]) == 2
    assert capsys.readouterr().err == "error: give exactly one of --steps or --epochs, got neither\n"
    assert run(["ledger", "--db", db, "check", "census", "--noise-multiplier", "1", "--sample-rate", "0.1",
                "--steps", "10", "--sampling", "shuffled"]) == 2
    assert capsys.readouterr().err.startswith("error: --sampling 'shuffled' needs --batch-size and --dataset-size")
    # "sigma must be > 0, got -1.0": the library's name of what the command line calls --gaussian
    assert run(["ledger", "--db", db, "propose", "census", "--gaussian", "-1", "--title", "t"]) == 2
    assert capsys.readouterr().err == "error: --gaussian -1: sigma must be > 0, got -1.0\n"
    assert run(["ledger", "--db", db, "check", "census", "--laplace", "0"]) == 2
    assert capsys.readouterr().err == "error: --laplace 0: scale must be > 0, got 0.0\n"


def test_one_translator():
    # cli._dpsgd.flagged translated DP-SGD messages beside cli._option_words.in_option_words
    assert not hasattr(_dpsgd, "flagged")
    assert set(_dpsgd.FLAGS.values()) >= {"--steps", "--epochs", "--sample-rate", "--relation"}
    from fdpkit.errors import ParameterError

    exc = ParameterError("x", "relation", ("relation", "sampling"))
    text = "relation 'add-remove' cannot be accounted with sampling 'shuffled'; use relation='zero-out'"
    once = _option_words.in_option_words(_dpsgd.FLAGS, exc, text)
    assert once == "--relation 'add-remove' cannot be accounted with --sampling 'shuffled'; use --relation zero-out"
    assert _option_words.in_option_words(_dpsgd.FLAGS, exc, once) == once  # read again: the same line
    # a name inside a path stays as written (a Windows path's "\\sample_rate.json" became "\\--sample-rate.json")
    exc = ParameterError("x", "sample_rate")
    assert (_option_words.in_option_words(_dpsgd.FLAGS, exc, r"C:\data\sample_rate.json: sample_rate must be in (0, 1]")
            == r"C:\data\sample_rate.json: --sample-rate must be in (0, 1]")
    # an OSError names a file, never an argument
    assert _option_words.in_option_words(_dpsgd.FLAGS, OSError("steps"), "steps: No such file") == "steps: No such file"
