"""The CLI gives the one verdict the library and the web give: uniform sampling is never
'strong', `risk --epsilon 8` leads with the manager's sentence, `--drop-last` and the scheme
help on `report dpsgd` (moved from the web verdict tests)."""

def test_cli_uniform_sampling_is_not_strong():
    from typer.testing import CliRunner

    from fdpkit.cli import app

    out = CliRunner().invoke(app, ["report", "uniform-sampling", "--mu", "0.05", "--n", "1000"]).output
    assert "strong" not in out.split("\n")[1] and "Protection: weak" in out and "catastrophic" in out


def test_cli_drop_last_and_scheme_help():
    from typer.testing import CliRunner

    from fdpkit.cli import app

    runner = CliRunner()
    help_text = runner.invoke(app, ["report", "dpsgd", "--help"], env={"COLUMNS": "200"}).output
    assert "make_private" in help_text and "--drop-last" in help_text and "shuffled" in help_text
    r = runner.invoke(app, ["report", "dpsgd", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size",
                            "60000", "--epochs", "60", "--sampling", "shuffled", "--relation", "replace-one",
                            "--drop-last", "--format", "statement"])
    assert r.exit_code == 0 and "14,040 steps" in r.output and "sample rate" not in r.output


def test_cli_risk_same_verdict_first():
    from typer.testing import CliRunner

    from fdpkit.cli import app

    out = CliRunner().invoke(app, ["risk", "--epsilon", "8"]).output
    assert out.startswith("ε = 8 alone: no meaningful protection in the worst case; ask for the mechanism")
