"""``fdpkit power`` and ``fdpkit plan``: statistical power and planning guides."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer

import fdpkit as fp
from fdpkit.cli._common import (AlphaOpt, OutputOpt, ResultFormatOpt, emit, err, fail, fmt_num, fraction_option, guarded, kv, level_option,
                                out)


@guarded
def power(effect: float = typer.Option(..., help="Mean shift to detect."),
          n: float = typer.Option(..., help="Number of observations."),
          sd: float = typer.Option(..., help="Measurement sd of one observation."),
          mu: list[float] = typer.Option([], help="GDP mu of the release (repeatable)."),
          epsilon: list[float] = typer.Option([], help="Laplace epsilon of the release (repeatable)."),
          level: Optional[float] = typer.Option(None, "--level", help="The test's significance level [default: 0.05]."),
          alpha: Optional[float] = AlphaOpt,
          data_range: float = typer.Option(1.0, help="Width of the data range."),
          alternative: str = typer.Option("larger", help="larger, smaller or two-sided."),
          tests: int = typer.Option(1, help="Number of planned tests (Bonferroni)."),
          fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """Power of a Z-test for a mean released with Gaussian (mu) or Laplace (epsilon) noise."""
    if sd <= 0:  # sd 0: the library's message names the non-private row's mu = inf, which the user did not give
        why = ("the non-private power shown beside every release has no test for data without variance" if sd == 0
               else "it is the measurement sd of one observation")
        fail(f"--sd must be > 0, got {sd:g}: {why}")
    told: list[str] = []  # the warnings said on stderr, for --format json too
    overall = level_option(level, alpha, told)
    overall = 0.05 if overall is None else overall
    try:  # every --tests, 1 included (0 and negatives were read as 1)
        level = fp.adjusted_level(overall, tests)
    except fp.ParameterError as exc:
        if exc.parameter != "tests":
            raise
        fail("--" + str(exc))
    kw = dict(effect=effect, n=n, sd=sd, level=level, data_range=data_range, alternative=alternative)
    rows = {"non-private": fp.ztest_power(mu=math.inf, **kw)}
    rows.update({f"Gaussian, mu = {m:g}": fp.ztest_power(mu=m, **kw) for m in mu})
    rows.update({f"Laplace, epsilon = {e:g}": fp.ztest_power_laplace(epsilon=e, **kw) for e in epsilon})
    payload = {"alpha_per_test": level, "power": [{"release": k, "power": v} for k, v in rows.items()],
               "warnings": told}
    emit((payload), fmt, output, lambda: kv(f"Power at level {level:g}", rows))



#: Human labels of the utility-first plan's table (its JSON keys are unchanged); the risk rows
#: name their prior and FPR as the Plan page's table does (:func:`utility_first_labels`).
UTILITY_FIRST_LABELS = (("criterion", "criterion"), ("mu_min", "smallest μ (GDP)"),
                        ("sigma", "noise sd σ"), ("sensitivity", "sensitivity"),
                        ("power", "power with noise"), ("nonprivate_power", "power without noise"),
                        ("posterior", "posterior for prior {prior:g} at FPR {fpr:g}"),
                        ("attack_power", "attack TPR at FPR {fpr:g}"),
                        ("relative_risk", "relative risk for FPR ≥ {fpr:g}"), ("epsilon_at_1e5", "ε at δ = 1e-5"),
                        ("reachable", "reachable"))
#: Rows whose last printed digit rounds up: the release's privacy cost and risk (upper bounds).
UTILITY_FIRST_UP = ("smallest μ (GDP)", "posterior for prior {prior:g} at FPR {fpr:g}", "attack TPR at FPR {fpr:g}",
                    "relative risk for FPR ≥ {fpr:g}", "ε at δ = 1e-5", "smallest μ per test",
                    "μ of all tests (risk read here)")


def utility_first_labels(prior: float, fpr: float) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The utility-first table's (key, label) pairs and its rounded-up labels at ``prior`` and
    ``fpr``: "attack TPR at FPR 0.001", not "attack TPR at the FPR" (which FPR?).

    >>> utility_first_labels(0.01, 0.001)[0][6]
    ('posterior', 'posterior for prior 0.01 at FPR 0.001')
    """
    labels = tuple((k, v.format(prior=prior, fpr=fpr)) for k, v in UTILITY_FIRST_LABELS)
    return labels, tuple(v.format(prior=prior, fpr=fpr) for v in UTILITY_FIRST_UP)


@guarded(names={"alpha": "level"})  # the analysis's alpha is the overall --level
def plan(guide: str = typer.Argument(..., help="utility-first or privacy-first"),
         effect: float = typer.Option(..., help="Mean shift to detect."),
         n: float = typer.Option(..., help="Number of observations (per group with --groups 2)."),
         sd: float = typer.Option(..., help="Measurement sd of one observation."),
         level: Optional[str] = typer.Option(None, "--level", help="Overall test level, 0.05 or 5% [default: 0.05]."),
         alpha: Optional[str] = AlphaOpt, data_range: float = typer.Option(1.0, help="Width of the data range."),
         required_power: Optional[str] = typer.Option(None, help="utility-first: power to keep."),
         max_relative_loss: Optional[str] = typer.Option(None, help="utility-first: largest relative power loss."),
         max_relative_risk: Optional[float] = typer.Option(None, help="privacy-first: largest relative risk."),
         max_attack_power: Optional[str] = typer.Option(None, help="privacy-first: largest attack TPR at --fpr."),
         blatant_ok: bool = typer.Option(False, "--blatant-ok", help="privacy-first: blatant disclosure acceptable."),
         high_confidence_ok: bool = typer.Option(True, "--high-confidence-ok/--bounded-confidence",
                                                 help="privacy-first: unbounded attacker confidence acceptable."),
         statistic: str = typer.Option("mean", help="mean, proportion or count."),
         groups: int = typer.Option(1, help="1 (one sample) or 2 (difference of two groups of n each)."),
         alternative: str = typer.Option("larger", help="larger, smaller or two-sided."),
         tests: int = typer.Option(1, help="Number of tests planned together (multiple testing)."),
         correction: str = typer.Option("bonferroni", help="bonferroni or bh (Benjamini-Hochberg)."),
         guidance: bool = typer.Option(False, "--guidance", help="Also print the planning guidance."),
         prior: str = typer.Option("0.01", help="0.01 or 1%."), fpr: str = typer.Option("0.001", help="0.001 or 0.1%."),
         delta: Optional[str] = typer.Option(None, help="utility-first: also give ε at this δ (the release's budget's, "
                                                         "e.g. a census limit's 1e-6); ε at 1e-5 is always given."),
         fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """Privacy-first or utility-first planning guide (de Fondeville Sec. 5), ending in the noise to add."""
    prior, fpr = fraction_option(prior, "prior"), fraction_option(fpr, "fpr")
    told: list[str] = []  # the warnings said on stderr, for --format json too
    overall = level_option(level, alpha, told)
    alpha = fraction_option("0.05" if overall is None else overall, "level")
    required_power = fraction_option(required_power, "required_power")
    max_relative_loss = fraction_option(max_relative_loss, "max_relative_loss")
    max_attack_power = fraction_option(max_attack_power, "max_attack_power")
    spec = fp.ZTestSpec(effect=effect, n=n, sd=sd, alpha=alpha, data_range=data_range, statistic=statistic,
                        groups=groups, alternative=alternative, tests=tests, correction=correction)
    if guide == "utility-first":
        from fdpkit._numerics import safe_text

        if (required_power is None) == (max_relative_loss is None):
            fail("utility-first needs exactly one of --required-power or --max-relative-loss")
        res = fp.utility_first(analysis=spec, required_power=required_power, max_relative_loss=max_relative_loss,
                               prior=prior, fpr=fpr)
        d = res.to_dict()
        labels, rounded_up = utility_first_labels(prior, fpr)
        rows = {label: d[k] for k, label in labels}
        at = fraction_option(delta, "delta")
        if at is not None:  # the δ of the release's budget beside 1e-5 (and in the JSON, which the ledger reads)
            d["epsilon_at_delta"] = [{"delta": at, "epsilon": res.epsilon_for_delta(at)}]
            label = f"ε at δ = {at:g}".replace("e-0", "e-")  # beside "ε at δ = 1e-5", spelt as it is
            rows = {k2: v2 for k, v in rows.items()
                    for k2, v2 in ((k, v), *(((label, d["epsilon_at_delta"][0]["epsilon"]),) if k == "ε at δ = 1e-5" else ()))}
            rounded_up = (*rounded_up, label)
        if d.get("sigma") is not None:  # at most this noise keeps the power: rounded down, as printed above
            rows["noise sd σ"] = safe_text(d["sigma"], up=False)
        if tests > 1:
            rows = {"tests": tests, "level per test": spec.level, "smallest μ per test": d["mu_min"],
                    # the printed noise's total, where the risk rows are read (not √k·μ_min: 2.714 for 2.716)
                    "μ of all tests (risk read here)": d["budget_split"]["noise_mu_total"],
                    **{k: v for k, v in rows.items() if k != "smallest μ (GDP)"}}
        if res.reason:
            rows["reason"] = res.reason
        safe: dict[str, bool] = {k: True for k in rounded_up}
    elif guide == "privacy-first":
        from fdpkit._numerics import safe_text

        if delta is not None:
            fail("--delta applies to utility-first (privacy-first plans its options by attack risk)")

        res = fp.privacy_first(blatant_disclosure_ok=blatant_ok, high_confidence_ok=high_confidence_ok,
                               max_relative_risk=max_relative_risk, max_attack_power=max_attack_power,
                               fpr=fpr, analysis=spec)
        d = res.to_dict()
        rows = {"admissible": ", ".join(d["admissible_families"])}
        # the μ or ε of the printed noise, rounded up (as the plan's sentences); the risk rounded up
        safe = {}
        if tests > 1:
            rows["tests"] = tests
            rows["level per test"] = spec.level
        for o in d["options"]:
            # the option by its noise (with an analysis its mechanism is a whole spec dict)
            name = "Gaussian" if o["noise_parameter"] == "sigma" else "Laplace"
            total = " (total)" if tests > 1 else ""
            rows[f"{name}: {o['parameter']}{total}"] = o["value"] if o["value"] == "inf" else o["value_text"]
            if tests > 1:
                rows[f"{name}: {o['parameter']} per test"] = o["value_per_test_text"]
            per = " per test" if tests > 1 else ""
            # rounded up as the plan's sentences print it (more noise: the privacy limit holds)
            rows[f"{name}: noise {'sigma' if o['noise_parameter'] == 'sigma' else 'scale b'}{per}"] = (
                "none needed (the limit does not bind)" if o["value"] == "inf"
                else safe_text(o["noise_scale"], up=True) if o["noise_scale"] is not None else None)
            rows[f"{name}: power{per}"] = o["power"]  # at the printed noise, its last digit rounded down
            safe[f"{name}: power{per}"] = False
            rows[f"{name}: attack TPR at FPR {fpr:g}"] = o["attack_power"]
            rows[f"{name}: relative risk" + (f" (FPR ≥ {fpr:g})" if o["parameter"] == "mu" else "")] = (
                o["relative_risk"])
            safe[f"{name}: attack TPR at FPR {fpr:g}"] = True
            safe[f"{name}: relative risk" + (f" (FPR ≥ {fpr:g})" if o["parameter"] == "mu" else "")] = True
        rows["Laplace power method"] = spec.laplace_method
    else:
        fail(f"guide must be utility-first or privacy-first, got {guide!r}")
    d["guidance"] = [{"title": t, "text": x} for t, x in fp.planning.GUIDANCE]
    d["warnings"] = told + list(d.get("warnings") or [])

    def text() -> None:
        for w in d["warnings"][len(told):]:  # the plan's own (a prior of 0), as risk and convert say theirs
            err.print(f"warning: {w}", soft_wrap=True, highlight=False)
        out.print(f"[bold]{spec.describe()}[/bold]", soft_wrap=True)
        if d.get("headline"):  # privacy first: what to do, before the options
            out.print(f"[bold]{d['headline']}[/bold]", soft_wrap=True, highlight=False)
        for line in d["noise"]:
            out.print(f"[bold]{line}[/bold]", soft_wrap=True)
        grade = d.get("grade")
        if grade:  # the Plan page's grade card: the plan's risk on the scale every other surface uses
            out.print(f"[bold]{grade['icon']} Protection: {grade['label']}[/bold] (level {grade['level']} of 0–3, "
                      "0 strongest)", soft_wrap=True, highlight=False)
            if grade.get("reason"):
                out.print(f"Why: {grade['reason']}.", soft_wrap=True, highlight=False)
            out.print(f"What this grade means: {grade['definition']}", soft_wrap=True, highlight=False)
        kv(f"{guide} plan", {k: (v if isinstance(v, str) else fmt_num(v, up=safe.get(k))) for k, v in rows.items()})
        if tests > 1:
            out.print(f"Budget split: {d['budget_split']['rule']}.", soft_wrap=True)
        for note in d.get("notes", []):
            out.print(note, soft_wrap=True)
        if d.get("mechanism"):  # the Plan page's "Propose this release": the same mechanism, not re-typed
            out.print("Next: rerun with --format json --output plan.json, then fdpkit ledger propose DATASET "
                      "--mechanism plan.json (the noise printed above, with its sensitivity).",
                      soft_wrap=True, highlight=False)
        if guidance:
            for t, x in fp.planning.GUIDANCE:
                out.print(f"[bold]{t}[/bold]: {x}", soft_wrap=True)

    emit(d, fmt, output, text)


# ----------------------------------------------------------------------------- plot
