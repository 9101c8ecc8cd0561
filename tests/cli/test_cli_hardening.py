"""Issue 14 on the command line: a table of bad invocations. Each exits with code 2 and
exactly one line on stderr starting "error:", prints no traceback and no typer box, and
creates no file. Plus safe --output: devices, directories, --force, long names.

The CLI runs in-process through :func:`fdpkit.cli.run` (what ``fdpkit`` / ``python -m
fdpkit.cli`` call), so the table stays cheap.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

from fdpkit.cli import run

DP = ["report", "dpsgd", "--noise-multiplier", "2", "--sample-rate", "0.05", "--steps", "10",
      "--discretization", "1e-2"]


def _spec(tmp, name: str, text: str | bytes) -> str:
    path = tmp / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def _deep(n: int) -> str:
    spec = {"kind": "gaussian", "sigma": 1.0}
    for _ in range(n):
        spec = {"kind": "repeated", "times": 2, "inner": spec}
    return json.dumps(spec)


# (argv builder given the temp folder) ; ~67 bad invocations over every command
BAD = {
    # usage errors (no typer box)
    "unknown command": lambda t: ["bogus"],
    "unknown option": lambda t: ["report", "dpsgd", "--bogus"],
    "missing required": lambda t: ["report", "dpsgd", "--noise-multiplier", "1"],
    "not a number": lambda t: ["report", "dpsgd", "--noise-multiplier", "x", "--sample-rate", "0.1", "--steps", "1"],
    "int expected": lambda t: ["report", "dpsgd", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "1.5"],
    "option without value": lambda t: ["report", "dpsgd", "--noise-multiplier"],
    "extra argument": lambda t: ["tables", "extra"],
    "convert unknown sub": lambda t: ["convert", "nope"],
    "calibrate unknown sub": lambda t: ["calibrate", "nope"],
    # report dpsgd values
    "steps 0": lambda t: DP[:6] + ["--steps", "0"],
    "steps negative": lambda t: DP[:6] + ["--steps", "-5"],
    "steps huge": lambda t: DP[:6] + ["--steps", str(10**12)],
    "sample rate 0": lambda t: DP[:4] + ["--sample-rate", "0", "--steps", "10"],
    "sample rate > 1": lambda t: DP[:4] + ["--sample-rate", "1.5", "--steps", "10"],
    "sample rate nan": lambda t: DP[:4] + ["--sample-rate", "nan", "--steps", "10"],
    "noise nan": lambda t: ["report", "dpsgd", "--noise-multiplier", "nan", "--sample-rate", "0.1", "--steps", "5"],
    "noise inf": lambda t: ["report", "dpsgd", "--noise-multiplier", "inf", "--sample-rate", "0.1", "--steps", "5"],
    "noise negative": lambda t: ["report", "dpsgd", "--noise-multiplier", "-1", "--sample-rate", "0.1", "--steps", "5"],
    "noise zero": lambda t: ["report", "dpsgd", "--noise-multiplier", "0", "--sample-rate", "0.1", "--steps", "5"],
    "noise 1e308 overflow": lambda t: ["report", "dpsgd", "--noise-multiplier", "1e309", "--sample-rate", "0.1",
                                       "--steps", "5"],
    "discretization 0": lambda t: DP[:8] + ["--discretization", "0"],
    "discretization nan": lambda t: DP[:8] + ["--discretization", "nan"],
    "discretization too fine": lambda t: DP[:8] + ["--discretization", "1e-9"],
    "discretization > 1": lambda t: DP[:8] + ["--discretization", "5"],
    "bad format": lambda t: DP + ["--format", "docx"],
    "pdf without output": lambda t: DP + ["--format", "pdf"],
    "text with output": lambda t: DP + ["--output", str(t / "x.txt")],
    # report other mechanisms
    "gaussian sigma nan": lambda t: ["report", "gaussian", "--sigma", "nan"],
    "gaussian sigma 0": lambda t: ["report", "gaussian", "--sigma", "0"],
    "gaussian times 0": lambda t: ["report", "gaussian", "--sigma", "1", "--times", "0"],
    "laplace scale -1": lambda t: ["report", "laplace", "--scale", "-1"],
    "laplace sensitivity inf": lambda t: ["report", "laplace", "--scale", "1", "--sensitivity", "inf"],
    "rr epsilon nan": lambda t: ["report", "randomized-response", "--epsilon", "nan"],
    "pure epsilon 1e308": lambda t: ["report", "pure-dp", "--epsilon", "1e308"],
    "approx delta 2": lambda t: ["report", "approx-dp", "--epsilon", "1", "--delta", "2"],
    # spec files
    "spec missing": lambda t: ["report", "--mechanism", str(t / "missing.json")],
    "spec /dev/zero": lambda t: ["report", "--mechanism", "/dev/zero"],
    "spec directory": lambda t: ["report", "--mechanism", str(t)],
    "spec not json": lambda t: ["report", "--mechanism", _spec(t, "a.json", "{nope")],
    "spec not utf8": lambda t: ["report", "--mechanism", _spec(t, "b.json", b"\xff\xfe\x00")],
    "spec bad toml": lambda t: ["report", "--mechanism", _spec(t, "c.toml", "kind = = 1")],
    "spec unknown kind": lambda t: ["report", "--mechanism", _spec(t, "d.json", '{"kind": "magic"}')],
    "spec bool sigma": lambda t: ["report", "--mechanism", _spec(t, "e.json", '{"kind": "gaussian", "sigma": true}')],
    "spec string sigma": lambda t: ["report", "--mechanism", _spec(t, "f.json", '{"kind": "gaussian", "sigma": "1"}')],
    "spec not an object": lambda t: ["report", "--mechanism", _spec(t, "g.json", "[1, 2]")],
    "spec nested 300": lambda t: ["report", "--mechanism", _spec(t, "h.json", _deep(300))],
    "spec nested 5000 json": lambda t: ["report", "--mechanism", _spec(t, "i.json", "[" * 5000 + "]" * 5000)],
    "spec over budget": lambda t: ["report", "--mechanism", _spec(
        t, "j.json", '{"kind": "subsampled", "sample_rate": 0.999, "inner": {"kind": "gaussian", "sigma": 0.001}}'),
        "--discretization", "1e-6"],
    "spec too large": lambda t: ["report", "--mechanism", _spec(t, "k.json", " " * 1_100_000)],
    # convert
    "eps-to-mu nan": lambda t: ["convert", "eps-to-mu", "--epsilon", "nan"],
    "eps-to-mu negative": lambda t: ["convert", "eps-to-mu", "--epsilon", "-1"],
    "mu-to-eps delta 2": lambda t: ["convert", "mu-to-eps", "--mu", "1", "--delta", "2"],
    "mu-to-eps mu 1e308": lambda t: ["convert", "mu-to-eps", "--mu", "1e308", "--delta", "1e-5"],
    "mu-to-delta mu nan": lambda t: ["convert", "mu-to-delta", "--mu", "nan", "--epsilon", "1"],
    "eps-delta-to-mu eps 1e308": lambda t: ["convert", "eps-delta-to-mu", "--epsilon", "1e308", "--delta", "1e-5"],
    # risk
    "risk mu negative": lambda t: ["risk", "--mu", "-1"],
    "risk prior 2": lambda t: ["risk", "--mu", "1", "--prior", "2"],
    "risk fpr nan": lambda t: ["risk", "--mu", "1", "--fpr", "nan"],
    "risk epsilon 710": lambda t: ["risk", "--epsilon", "1e308"],
    # calibrate
    "calibrate two unknowns": lambda t: ["calibrate", "dpsgd", "--mu", "1", "--steps", "10"],
    "calibrate mu 1e9": lambda t: ["calibrate", "dpsgd", "--mu", "1e9", "--sample-rate", "0.01", "--steps", "10"],
    "calibrate mu nan": lambda t: ["calibrate", "dpsgd", "--mu", "nan", "--sample-rate", "0.01", "--steps", "10"],
    # power / plan / tables / plot
    "power n 1e308 without mu": lambda t: ["power", "--effect", "0.2", "--n", "-1", "--sd", "0.25", "--mu", "1"],
    "power sd nan": lambda t: ["power", "--effect", "0.2", "--n", "100", "--sd", "nan", "--mu", "1"],
    "power tests 0": lambda t: ["power", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--mu", "1", "--tests", "0"],
    "power tests negative": lambda t: ["power", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--mu", "1",
                                       "--tests", "-5"],
    "plan both criteria": lambda t: ["plan", "--effect", "0.2", "--n", "100", "--sd", "0.25",
                                     "--required-power", "0.8", "--max-relative-loss", "0.1"],
    "plan power 2": lambda t: ["plan", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--required-power", "2"],
    "tables bad format": lambda t: ["tables", "--format", "xml"],
    "plot unknown kind": lambda t: ["plot", "nope", "--output", str(t / "p.svg"), "--mu", "1"],
    "plot bad suffix": lambda t: ["plot", "tradeoff", "--output", str(t / "p.docx"), "--mu", "1"],
    "plot mu nan": lambda t: ["plot", "tradeoff", "--output", str(t / "p.svg"), "--mu", "nan"],
    # over the CLI's cost budget: refused before any work in every format (the statement
    # format once accounted without the budget, until the machine ran out of memory)
    "report over budget json": lambda t: ["report", "dpsgd", "--noise-multiplier", "0.3", "--sample-rate", "0.5",
                                          "--steps", "10000000", "--format", "json"],
    "report over budget statement": lambda t: ["report", "dpsgd", "--noise-multiplier", "0.3", "--sample-rate",
                                               "0.5", "--steps", "10000000", "--format", "statement"],
    # --output targets
    "output directory": lambda t: DP + ["--format", "json", "--output", str(t)],
    "output /dev/null": lambda t: DP + ["--format", "json", "--output", "/dev/null"],
    # 10**6 published counts were bounded for over a minute; at most 20,000 thresholds now,
    # refused while the file is read
    "audit counts too many rows": lambda t: ["audit", "--counts", _spec(
        t, "counts.csv", "tp,fp,members,nonmembers\n" + "5,5,10,10\n" * 20_001)],
    "output missing folder": lambda t: DP + ["--format", "json", "--output", str(t / "no" / "such" / "x.json")],
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_invocation_exits_2_with_one_line(case, tmp_path, capsys):
    work = tmp_path / "work"
    work.mkdir()
    argv = BAD[case](work)
    before = sorted(p.name for p in work.iterdir())
    code = run(argv)
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2, (case, code, captured.err)
    assert len(lines) == 1 and lines[0].startswith("error: "), (case, captured.err)
    assert "Traceback" not in captured.err + captured.out and "╭" not in captured.err, case
    assert "nan" not in captured.out.lower(), case
    assert sorted(p.name for p in work.iterdir()) == before, f"{case}: a file was created"


@pytest.mark.parametrize("extra, message", [
    (["--format", "pdf"], "error: PDF output needs --output PATH"),
    (["--output", "x.txt"], "error: --output needs a file format"),
])
def test_report_output_rules_refuse_before_any_accounting(extra, message, tmp_path, capsys, monkeypatch):
    # `report ... --format pdf` without --output accounted the run and rendered its whole PDF
    # (2.7 s for this small run) before refusing; text with --output accounted it first
    import fdpkit

    def no_work(*args, **kwargs):
        raise AssertionError("the report was accounted before the output rules were checked")

    monkeypatch.setattr(fdpkit, "privacy_report", no_work)
    monkeypatch.chdir(tmp_path)
    code = run(DP + extra)
    err = capsys.readouterr().err
    assert code == 2 and err.strip().startswith(message), err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("tests", ["0", "-5"])
def test_power_tests_below_one_is_refused_naming_tests(tests, capsys):
    # it was read as one test (exit 0), where fdpkit plan refuses --tests 0
    assert run(["power", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--mu", "1", "--tests", tests]) == 2
    assert capsys.readouterr().err == f"error: --tests must be a positive integer up to 1e+15, got {tests}\n"


@pytest.mark.parametrize("argv, line", [
    # the internal epsilon = log R of the Laplace option was named ("epsilon must be <= 700, got 709.19...")
    (["plan", "privacy-first", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--max-relative-risk", "1e308"],
     "error: --max-relative-risk must be in (1, 1.01423e+304] (the Laplace option's epsilon = log R is at most 700), "
     "got 1e+308"),
    # the internal solver's argument was named ("max_power must be >= fpr"), or at equality "mu must be > 0"
    (["plan", "privacy-first", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--max-attack-power", "1e-4"],
     "error: --max-attack-power must be above --fpr (a random guess already reaches TPR = FPR, so a lower limit "
     "allows no release), got --max-attack-power 0.0001 <= --fpr 0.001"),
    (["plan", "privacy-first", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--max-attack-power", "0.05",
      "--fpr", "0.05"],
     "error: --max-attack-power must be above --fpr (a random guess already reaches TPR = FPR, so a lower limit "
     "allows no release), got --max-attack-power 0.05 <= --fpr 0.05"),
    (["plan", "privacy-first", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--max-attack-power", "1"],
     "error: --max-attack-power must be below 1 (a limit of 1 allows every attack and bounds no mechanism), got 1.0"),
    # the non-private row's mu = inf was named ("sd must be > 0 when mu is inf"), which the user did not give
    (["power", "--effect", "0.2", "--n", "15", "--sd", "0", "--mu", "1"],
     "error: --sd must be > 0, got 0: the non-private power shown beside every release has no test for data "
     "without variance"),
    (["power", "--effect", "0.2", "--n", "15", "--sd", "0", "--epsilon", "1"],
     "error: --sd must be > 0, got 0: the non-private power shown beside every release has no test for data "
     "without variance"),
])
def test_errors_name_what_the_user_gave(argv, line, capsys):
    assert run(argv) == 2
    assert capsys.readouterr().err == line + "\n"


def test_table_is_big_enough():
    assert len(BAD) >= 67


def test_output_dev_null_leaves_the_device_intact(capsys):
    before = os.stat("/dev/null")
    assert run(DP + ["--format", "json", "--output", "/dev/null", "--force"]) == 2
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert "/dev/null" in capsys.readouterr().err


def test_output_existing_file_needs_force(tmp_path, capsys):
    target = tmp_path / "r.json"
    target.write_text("old")
    assert run(DP + ["--format", "json", "--output", str(target)]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and str(target) in err and target.read_text() == "old"
    assert run(DP + ["--format", "json", "--output", str(target), "--force"]) == 0
    assert json.loads(target.read_text())["schema_version"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temporary left behind


def test_long_output_name_and_errors_name_the_target(tmp_path, capsys):
    long_name = tmp_path / ("r" * 250 + ".json")  # the temporary name must not exceed NAME_MAX
    assert run(DP + ["--format", "json", "--output", str(long_name)]) == 0
    assert long_name.exists()
    readonly = tmp_path / "ro"
    readonly.mkdir()
    readonly.chmod(0o500)
    try:
        code = run(DP + ["--format", "json", "--output", str(readonly / "x.json")])
        err = capsys.readouterr().err
        if os.geteuid() != 0:  # root writes anyway
            assert code == 2 and str(readonly / "x.json") in err and ".fdpkit-" not in err
    finally:
        readonly.chmod(0o700)


@pytest.mark.parametrize("command", ["regret-map", "rule-of-thumb"])
@pytest.mark.parametrize("name, reason", [("p.txt", "must end in .svg, .png or .pdf"),
                                          ("no/p.svg", "does not exist"), ("old.svg", "add --force")])
def test_sweep_plot_follows_the_output_rules_before_the_sweep(command, name, reason, tmp_path, capsys, monkeypatch):
    # --plot is checked as `fdpkit plot -o` is, before any work (it ran the whole sweep, then
    # made the missing folder, overwrote an existing plot or refused the suffix)
    import fdpkit.sweep as sweep_package

    def no_work(*args, **kwargs):
        raise AssertionError("the sweep ran")

    monkeypatch.setattr(sweep_package, "regret_map", no_work)
    monkeypatch.setattr(sweep_package, "rule_of_thumb", no_work)
    (tmp_path / "old.svg").write_text("old")
    code = run(["sweep", command, "--plot", str(tmp_path / name)])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: --plot") and reason in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.svg"] and (tmp_path / "old.svg").read_text() == "old"


def test_sweep_plot_with_force_replaces_the_file(tmp_path, capsys):
    target = tmp_path / "old.svg"
    target.write_text("old")
    args = ["--quiet", "sweep", "regret-map", "--noise-multiplier", "2", "--steps", "100", "--sample-rate", "0.1",
            "--discretization", "1e-2", "--executor", "inprocess", "--plot", str(target)]
    assert run(args + ["--force"]) == 0, capsys.readouterr().err
    assert target.read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.svg"]


@pytest.mark.parametrize("argv, option", [
    # float() read "1_000" and other scripts' digits ("١" is 1) as numbers, where score files refuse them
    (["report", "dpsgd", "--noise-multiplier", "1_000", "--sample-rate", "0.05", "--steps", "10"], "--noise-multiplier"),
    (["report", "dpsgd", "--noise-multiplier", "\u0661", "--sample-rate", "0.05", "--steps", "10"], "--noise-multiplier"),
    (["report", "dpsgd", "--noise-multiplier", "2", "--sample-rate", "0.0_5", "--steps", "10"], "--sample-rate"),
    (["report", "dpsgd", "--noise-multiplier", "2", "--sample-rate", "0.05", "--steps", "1_0"], "--steps"),
    (["report", "dpsgd", "--noise-multiplier", "2", "--batch-size", "50", "--dataset-size", "1_000", "--steps", "10"],
     "--dataset-size"),
    (["calibrate", "dpsgd", "--mu", "1", "--sample-rate", "0.05", "--steps", "\u0661\u0660"], "--steps"),
    (["convert", "mu-to-delta", "--mu", "1", "--epsilon", "1", "--epsilon", "2_0"], "--epsilon"),
    (["sweep", "--noise-multiplier", "1,1_000", "--sample-rate", "0.1", "--steps", "10"], "--noise-multiplier"),
    (["sweep", "--noise-multiplier", "1,2", "--sample-rate", "0.1", "--steps", "10,\u0662\u0660"], "--steps"),
    (["risk", "--mu", "1", "--prior", "1_0%"], "prior"),
    # a sweep list item in no-break spaces was stripped and read (str.strip takes any space);
    # plot --eps-delta read its epsilon with float() ("1_000,1e-5" was epsilon 1000, refused only as > 700)
    (["sweep", "--noise-multiplier", "1,\u00a02", "--sample-rate", "0.1", "--steps", "10"], "--noise-multiplier"),
    (["plot", "tradeoff", "--output", "never-written.svg", "--eps-delta", "1_000,1e-5"], "--eps-delta"),
])
def test_numbers_are_plain_decimal_numbers(argv, option, capsys):
    assert run(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and option in lines[0], lines
    assert "plain decimal number" in lines[0] or "whole number" in lines[0] or "such as 0.05" in lines[0], lines


def test_plain_numbers_still_read(capsys):
    # "1e1", "+2", ".5" and spaces around a number stay numbers; inf reaches the library's own message
    assert run(["convert", "mu-to-eps", "--mu", " .5", "--delta", "1e-5"]) == 0
    capsys.readouterr()
    assert run(["report", "dpsgd", "--noise-multiplier", "+2", "--sample-rate", "5e-2", "--steps", "1e1",
                "--discretization", "1e-2", "--format", "json"]) == 0
    capsys.readouterr()
    assert run(["report", "dpsgd", "--noise-multiplier", "inf", "--sample-rate", "0.05", "--steps", "10"]) == 2
    assert "--noise-multiplier must be finite" in capsys.readouterr().err


@pytest.mark.parametrize("argv, line", [
    # the library's argument names came through as they are in Python: "mu must not be NaN",
    # "required_power must be a number such as 0.05" (an option the command line spells
    # --required-power), while report and calibrate already said "--mu"
    (["risk", "--mu", "nan"], "error: --mu must not be NaN, got nan"),
    (["power", "--effect", "nan", "--n", "15", "--sd", "0.25", "--mu", "1"], "error: --effect must not be NaN, got nan"),
    (["plan", "utility-first", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--required-power", "nan"],
     "error: --required-power must be a number such as 0.05 (or 5%), got 'nan'"),
    (["plan", "utility-first", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--required-power", "1e400"],
     "error: --required-power: '1e400' is beyond the largest number (about 1.8e308)"),
    (["plan", "privacy-first", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--max-relative-risk", "nan"],
     "error: --max-relative-risk must not be NaN, got nan"),
    # option names with an underscore are options elsewhere in the line too
    (["calibrate", "dpsgd", "--steps", "100", "--mu", "1"],
     "error: exactly one of --noise-multiplier, --sample-rate (or --batch-size), --steps (or --epochs) must be left "
     "out to be solved for, got 2 left out (--noise-multiplier, --sample-rate)"),
])
def test_library_errors_name_the_command_line_option(argv, line, capsys):
    assert run(argv) == 2
    assert capsys.readouterr().err == line + "\n"
