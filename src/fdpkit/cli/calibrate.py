"""``fdpkit calibrate``: solve DP-SGD for one unknown to meet one target."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

import fdpkit as fp
from fdpkit.cli import _dpsgd as _dp
from fdpkit.cli._common import OutputOpt, cli_budget, command_group, emit, err, fmt_num, guarded, kv, out, working

calibrate_app = command_group("Solve DP-SGD for one unknown to meet a privacy target.", no_args_is_help=True)


def report_command(spec: Optional[dict], discretization: Optional[float] = None,
                   delta: Optional[float] = None) -> Optional[str]:
    """The ``fdpkit report dpsgd`` command of a one-phase DP-SGD spec (the calibrated run, its
    solved value as printed): the batch size with the dataset size in place of the sample
    rate and the epochs in place of the steps where the spec has them, as the web's
    "Full report for this run" link carries them. None for anything else. ``delta``: the
    ``--delta`` of the calibration (an ε target's, or of the achieved ε), which the report then leads with (before the report's other δ) where it is
    not already its first: calibrated to ε ≤ 2 at δ = 2e-5, the report said ε = 2.091 at δ = 1e-5.

    >>> report_command({"kind": "dpsgd", "noise_multiplier": 8.84, "sample_rate": 0.32768, "steps": 2000,
    ...                 "sampling": "poisson", "relation": "add-remove", "unit": "example"})
    'fdpkit report dpsgd --noise-multiplier 8.84 --sample-rate 0.32768 --steps 2000'
    >>> report_command({"kind": "dpsgd", "noise_multiplier": 1.272, "sample_rate": 0.00512, "steps": 11719},
    ...                delta=2e-5).split(" --steps 11719 ")[1]
    '--delta 2e-05 --delta 1e-05 --delta 1e-06 --delta 1e-09'
    """
    if not spec or spec.get("kind") != "dpsgd":
        return None

    def text(v) -> str:
        return str(int(v)) if float(v).is_integer() else repr(float(v))

    args = ["--noise-multiplier", text(spec["noise_multiplier"])]
    by_batch = spec.get("batch_size") is not None and spec.get("dataset_size") is not None
    args += (["--batch-size", text(spec["batch_size"]), "--dataset-size", text(spec["dataset_size"])] if by_batch
             else ["--sample-rate", text(spec["sample_rate"])])
    args += ["--epochs", text(spec["epochs"])] if spec.get("epochs") is not None else ["--steps", text(spec["steps"])]
    defaults = {"sampling": "poisson", "relation": "add-remove", "unit": "example"}
    for key in ("sampling", "relation", "unit"):
        if spec.get(key) not in (None, defaults[key]):
            args += [f"--{key}", str(spec[key])]
    for key in ("max_batch_size", "examples_per_user"):
        if spec.get(key) is not None:
            args += [f"--{key.replace('_', '-')}", text(spec[key])]
    if spec.get("drop_last"):
        args.append("--drop-last")
    if discretization is not None:
        args += ["--discretization", text(discretization)]
    # function-level: `fdpkit calibrate --help` imports no maths (fdpkit.guarantee loads NumPy)
    from fdpkit.guarantee.privacy import deltas_led_by

    for d in deltas_led_by(delta) or ():
        args += ["--delta", repr(float(d))]
    return "fdpkit report dpsgd " + " ".join(args)


def mu_range(alpha_min: Optional[float]) -> str:
    """Where a calibrated run's μ holds: "FPR and FNR ≥ 1e-10" for a numeric curve's fit (the
    report's range), "all FPR" for an exact one.

    >>> mu_range(1e-10), mu_range(0.0)
    ('FPR and FNR ≥ 1e-10', 'all FPR')
    """
    return f"FPR and FNR ≥ {alpha_min:g}" if alpha_min else "all FPR"


def _whole(name: str, v: Optional[float]):
    """Whole numbers typed as floats stay floats, so the library names the bad value."""
    return None if v is None else (int(v) if float(v).is_integer() else v)


@calibrate_app.command("dpsgd")
@guarded
def calibrate_dpsgd_cmd(
    mu: Optional[float] = typer.Option(None, "--mu", help="Target: mu-GDP."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="Target: epsilon at --delta."),
    delta: Optional[float] = typer.Option(None, "--delta", help="delta of the epsilon target (and of the reported epsilon)."),
    tpr: Optional[float] = typer.Option(None, "--tpr", help="Target: certified attack TPR at --fpr."),
    fpr: Optional[float] = typer.Option(None, "--fpr", help="FPR of the TPR (or posterior) target."),
    advantage: Optional[float] = typer.Option(None, "--advantage", help="Target: max TPR - FPR."),
    posterior: Optional[float] = typer.Option(None, "--posterior", help="Target: posterior after a positive attack, with --prior."),
    prior: Optional[float] = typer.Option(None, "--prior", help="Prior of the posterior target."),
    noise_multiplier: Optional[float] = _dp.NoiseOpt, sample_rate: Optional[float] = _dp.RateOpt,
    steps: Optional[float] = _dp.StepsOpt, batch_size: Optional[float] = _dp.BatchOpt,
    dataset_size: Optional[int] = _dp.DatasetOpt, epochs: Optional[float] = _dp.EpochsOpt,
    sampling: str = _dp.SamplingOpt, relation: str = _dp.RelationOpt,
    max_batch_size: Optional[float] = _dp.MaxBatchOpt, unit: str = _dp.UnitOpt,
    examples_per_user: Optional[float] = _dp.PerUserOpt, drop_last: bool = _dp.DropLastOpt,
    discretization: Optional[float] = typer.Option(
        None, "--discretization",
        help="PLD discretization interval (default: the library's rule, chosen per run from the step's loss scale)."),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."), output: Optional[Path] = OutputOpt,
) -> None:
    """Give one target (--mu, --epsilon with --delta, --tpr with --fpr, --advantage, or --posterior
    with --prior) and leave one of --noise-multiplier, --sample-rate/--batch-size,
    --steps/--epochs out: it is solved for, on the safe side of the target."""
    with working("Calibrating (several accounting runs)..."):
        r = fp.calibrate_dpsgd(
            mu=mu, epsilon=epsilon, delta=delta, tpr=tpr, fpr=fpr, advantage=advantage, posterior=posterior,
            prior=prior, noise_multiplier=noise_multiplier, sample_rate=sample_rate, steps=_whole("steps", steps),
            batch_size=_whole("batch_size", batch_size), dataset_size=dataset_size, epochs=epochs,
            sampling=sampling, relation=relation, max_batch_size=_whole("max_batch_size", max_batch_size),
            unit=unit, examples_per_user=_whole("examples_per_user", examples_per_user), drop_last=drop_last,
            discretization=discretization)
    # the table and the JSON: the value as a user copies it (rounded towards the safe side) and
    # that run's own figures (re-accounted), so that every line is of one run; the JSON keeps the
    # search's unrounded value under "exact_value" (it carried only that one: sigma 1.10143 where
    # the text and the web proposed 1.102)
    shown = r.rounded(budget=cli_budget())
    payload = shown.to_dict()
    a = shown.achieved
    d = shown.to_dict()
    # fixed batches (shuffled, fixed-size) have no sample rate: quote the batch size the loader used
    loader = d.get("sampling") in ("shuffled", "fixed-size")
    batches = ({"batch size": d.get("batch_size")} if loader else {"sample rate": d.get("sample_rate")})
    if loader and "epochs_equivalent" in a:
        batches["epochs (as the loader ran them)"] = a["epochs_equivalent"]
    # the solved value as printed is rounded towards the safe side (more noise; a smaller rate),
    # so that a user who copies it still meets the target (to nearest, 1.18544 read 1.185: eps 2.001 > 2)
    from fdpkit._numerics import safe_text

    solved = {"noise_multiplier": True, "sample_rate": False, "epochs": False}
    up = solved.get(r.unknown)
    if up is not None:
        text_value = f"{safe_text(r.value, up=up)} (rounded {'up' if up else 'down'}, the safe side, from {r.value!r}; " \
                     "the figures below are for it)"
        if r.unknown == "noise_multiplier":
            d["noise_multiplier"] = text_value
        elif r.unknown == "sample_rate" and "sample rate" in batches:
            batches["sample rate"] = text_value
    # the solved value on its own row, unless the run's rows below already show it
    own = r.unknown == "noise_multiplier" or (r.unknown == "sample_rate" and "sample rate" in batches)
    rows = {**({} if own else {r.unknown: text_value if up is not None else r.value}), "target": r.target or "-",
            "noise multiplier": d.get("noise_multiplier"), **batches, "steps": d.get("steps"),
            # what the run achieves: upper bounds, their last digit rounded up
            # μ with the FPR range it holds on, as every report states it
            f"achieved mu ({mu_range(a.get('alpha_min'))})": fmt_num(a["mu"], up=True),
            f"achieved epsilon at delta={a['delta']:g}": fmt_num(a["epsilon"], up=True),
            f"achieved TPR at FPR={a['fpr']:g}": fmt_num(a["tpr"], up=True),
            "achieved advantage": fmt_num(a["advantage"], up=True),
            f"achieved posterior (prior {a['prior']:g})": fmt_num(a["posterior"], up=True), "converged": str(r.converged),
            **({"note": r.reason} if r.reason else {}), "accounting runs (full / coarse)": f"{r.evaluations} / {r.coarse_evaluations}"}
    warnings = fp.plausibility_warnings(mu=mu, epsilon=epsilon, delta=delta if epsilon is not None else None,
                                        prior=prior if posterior is not None else None, n=dataset_size)

    command = report_command(shown.mechanism.to_dict() if shown.mechanism is not None else None, discretization, delta)

    def text() -> None:
        for w in warnings:
            err.print(f"warning: {w}", soft_wrap=True)
        kv(f"DP-SGD calibrated for {r.unknown}", rows)
        if command:  # the next step without re-typing (the web page links its full report)
            out.print(f"Next: {command} (the full report of this run, with the value as printed above)",
                      highlight=False, soft_wrap=True)

    emit({**payload, "warnings": warnings}, fmt, output, text)
