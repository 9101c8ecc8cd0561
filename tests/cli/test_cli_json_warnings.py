"""``--format json`` carries the warnings the text output says on stderr, in a ``warnings`` list
beside the keys it had: a sweep's checkpoint chunk not reused, the deprecated ``--alpha`` of
``power`` and ``plan``, ``convert eps-to-mu``'s plausibility warnings with ``--fpr``. Before, the
JSON had none of them (the sweep's only on stderr; ``eps-to-mu --fpr`` said its warning nowhere),
and ``plan`` put its plausibility warnings in its JSON but never said them in text."""

from __future__ import annotations

import json

import pytest

from fdpkit.cli import run
from fdpkit.sweep import run_sweep
from fdpkit.sweep.store import partial_dir

PLAN = ["plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--max-relative-loss", "0.01"]
POWER = ["power", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--mu", "1"]
DEPRECATED = "--alpha is deprecated and will be removed in the next minor version; use --level"


class Interrupted(Exception):
    pass


def _json(argv: list[str], capsys) -> tuple[dict, str]:
    assert run(argv) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def test_sweep_json_says_the_checkpoint_chunk_it_did_not_reuse(tmp_path, capsys):
    out = tmp_path / "t.csv"
    args = dict(noise_multiplier=[1.0, 2.0], sample_rate=[0.01], steps=[10], discretization=1e-3,
                executor="inprocess", metrics=["mu", "epsilon"])

    def progress(done: int, total: int) -> None:
        if done:
            raise Interrupted

    with pytest.raises(Interrupted):
        run_sweep(**args, output=out, progress=progress)
    (chunk,) = partial_dir(out).glob("part-*.json")
    chunk.write_text(chunk.read_text().replace('"mu": 0.', '"mu": 0.1'))  # edited by hand
    data, err = _json(["--quiet", "sweep", "--noise-multiplier", "1,2", "--sample-rate", "0.01", "--steps", "10",
                       "--discretization", "1e-3", "--executor", "inprocess", "--metrics", "mu,epsilon",
                       "--output", str(out), "--format", "json"], capsys)
    assert len(data["warnings"]) == 1 and str(chunk) in data["warnings"][0] and "recomputed" in data["warnings"][0]
    assert err.startswith("warning: checkpoint chunk")  # stderr says it as before
    assert (data["settings"], data["computed"], data["reused"], data["output"]) == (2, 2, 0, str(out))
    data, _ = _json(["--quiet", "sweep", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10",
                     "--discretization", "1e-3", "--executor", "inprocess", "--format", "json"], capsys)
    assert data["warnings"] == [] and len(data["rows"]) == 1


def test_rule_of_thumb_json_has_warnings(capsys):
    data, _ = _json(["--quiet", "sweep", "rule-of-thumb", "--noise-multiplier", "2", "--steps", "400",
                     "--sample-rate", "0.01", "--discretization", "1e-3", "--executor", "inprocess", "--format",
                     "json"], capsys)
    assert data["warnings"] == [] and "summary" in data


def test_power_and_plan_json_say_the_deprecated_alpha(capsys):
    data, err = _json([*POWER, "--alpha", "0.05", "--format", "json"], capsys)
    assert data["warnings"] == [DEPRECATED] and data["alpha_per_test"] == 0.05 and err == f"warning: {DEPRECATED}\n"
    data, _ = _json([*POWER, "--format", "json"], capsys)
    assert data["warnings"] == []
    data, _ = _json([*PLAN, "--alpha", "0.05", "--prior", "0", "--format", "json"], capsys)
    assert data["warnings"][0] == DEPRECATED and "prior = 0" in data["warnings"][1] and "mu_min" in data


def test_plan_text_says_its_own_warnings(capsys):
    assert run([*PLAN, "--prior", "0"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: prior = 0 means the attacker is certain")


def test_eps_to_mu_at_an_fpr_says_its_warnings(capsys):
    data, _ = _json(["convert", "eps-to-mu", "--epsilon", "1000", "--fpr", "0.01", "--format", "json"], capsys)
    assert len(data["warnings"]) == 1 and "ε = 1000" in data["warnings"][0] and data["mu"][0]["semantics"] == "fpr=0.01"
    assert run(["convert", "eps-to-mu", "--epsilon", "1000", "--fpr", "0.01"]) == 0
    assert capsys.readouterr().err.startswith("warning: ε = 1000")


def test_ledger_release_json_says_the_alerts_it_raised(tmp_path, capsys):
    db = str(tmp_path / "l.sqlite")
    led = ["ledger", "--db", db]
    assert run([*led, "init"]) == 0
    assert run([*led, "dataset", "add", "census", "--unit", "one person"]) == 0
    assert run([*led, "threshold", "set", "census", "--level", "notice", "--mu", "0.1"]) == 0
    assert run([*led, "propose", "census", "--gaussian", "2", "--title", "counts", "--user", "ana"]) == 0
    assert run([*led, "approve", "1", "--user", "bob", "--no-report"]) == 0
    capsys.readouterr()
    data, err = _json([*led, "release", "1", "--user", "bob", "--yes", "--format", "json"], capsys)
    assert data["state"] == "released" and len(data["warnings"]) == 1 and data["warnings"][0].startswith("alert: ")
    assert "notice" in data["warnings"][0]
