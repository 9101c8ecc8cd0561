"""A privacy statement for the paper, written from a :class:`fdpkit.PrivacyReport`.

It names what a reader needs to judge the guarantee, following the reporting practice of
Ponomareva et al., "How to DP-fy ML" (2023, Sec. 5.3) and Gomez et al. (Sec. 4): the
privacy unit, the neighbouring relation, the sampling scheme, steps and epochs, the noise,
the accounting method (software versions, discretization), mu-GDP with its regret and FPR
range, epsilon at delta, the certified TPR at FPR 1e-3, and the caveats that apply. Every
number is read from the report; nothing is recomputed except TPR at 1e-3 when the report's
FPR grid lacks it (read from the same certified curve).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fdpkit._numerics import safe_g
from fdpkit.accounting.closed_form import shuffled_bounds
from fdpkit.mechanisms import DPSGD, training_run
from fdpkit.risk.disclosure import certainty_mass

if TYPE_CHECKING:  # pragma: no cover
    from fdpkit.guarantee.privacy import PrivacyReport

#: FPR at which the statement quotes the certified TPR.
STATEMENT_FPR = 1e-3

_SAMPLING = {
    "poisson": "Poisson sampling (each {u} joins a batch independently with probability q = {q})",
    "truncated-poisson": ("Poisson sampling with probability q = {q}, batches larger than {mb} cut down "
                          "to {mb} {u}s (truncated Poisson)"),
    "fixed-size": "drawing a fixed-size batch of {b} {u}s uniformly without replacement from {n} at every step",
    "shuffled": "shuffling the {n} {u}s and cutting them into fixed-size batches of {b}, each {u} used once per pass over the data",
    "none": "no subsampling",
}
_RELATION = {
    "add-remove": "those that differ by adding or removing one {u} (add/remove)",
    "replace-one": "those that differ by replacing one {u} with another (replace-one)",
    "zero-out": "those that differ by replacing one {u} with one whose gradient is zero (zero-out)",
}
_METHOD = {
    "poisson": "the privacy loss distribution (PLD) of the Poisson subsampled Gaussian",
    "truncated-poisson": "the PLD of the truncated subsampled Gaussian (dp_accounting)",
    "fixed-size": ("the without-replacement subsampling theorem of Dong, Roth & Su (2022, Thm. 4.2), "
                   "C_q(G_{{Δ/σ}}) with Δ = {d:g}, composed over the steps through its PLD"),
    "shuffled": "the Gaussian mechanism without amplification by sampling (μ = √P·Δ/σ, Δ = {d:g}), exact",
    # fixed-size zero-out: the exact single step (fdpkit.accounting.without_replacement)
    "fixed-size zero-out": ("the exact single step of fixed-size sampling without replacement under zero-out "
                            "(by joint convexity over the batch, its worst case is (1 − q)N(0, σ²) + qN(2, σ²) "
                            "against (1 − q)N(0, σ²) + qN(1, σ²) for ε ≥ 0 and the Poisson subsampled Gaussian "
                            "below, in units of the clipping norm; derived in fdpkit.accounting.without_replacement), "
                            "composed over the steps through its PLD, each neighbouring order separately"),
}

#: Full batches (q = 1) in every phase: the plain Gaussian mechanism, composed exactly.
_FULL_BATCH_METHOD = ("the exact closed form of full-batch training (q = 1: every step is the Gaussian mechanism, "
                      "μ = Δ·√(Σ T/σ²), Δ = {d:g}; Dong, Roth & Su 2022, Cor. 3.3)")


def _g(x: float, digits: int = 4, *, up: bool | None = None) -> str:
    """``x`` with ``digits`` significant digits; a bound's last digit on its safe side
    (``up=True``: an upper bound such as μ, ε or a TPR; :func:`fdpkit._numerics.safe_g`)."""
    if isinstance(x, str):
        return x
    if not math.isfinite(x):
        return "∞"
    return f"{x:.{digits}g}" if up is None else safe_g(x, digits, up=up)


def _tpr_at(report: "PrivacyReport", fpr: float) -> float:
    for a, t, _ in report.tprs:
        if a == fpr:
            return t
    return float(report.curve.tpr(fpr))


def _epochs_text(m: DPSGD, p) -> str:
    """"(60 epochs of 235 batches, the last of each smaller)" for a loader's batches."""
    if p.epochs is None:
        return ""
    per = p.batches_per_epoch(m.dataset_size) if m.sampling in ("fixed-size", "shuffled") else None
    if per is None:
        return f" ({_g(p.epochs)} epochs)"
    last = ("the last, smaller batch of each epoch dropped" if p.drop_last and m.dataset_size % p.batch_size
            else "the last batch of each epoch smaller" if m.dataset_size % p.batch_size else "")
    return f" ({_g(p.epochs)} epochs of {per:,} batches{', ' + last if last else ''})"


def _training(m: DPSGD, unit: str) -> str:
    parts = []
    for p in m.phases:
        shape = f"{p.steps:,} steps" + _epochs_text(m, p)
        if m.sampling == "shuffled":
            shape += f", each {unit} in at most {p.participations} of them,"
        # fixed batches have no sample rate: quote the batch size the loader used
        rate = ("" if m.sampling in ("fixed-size", "shuffled") and len(m.phases) == 1
                else f" and batches of {p.batch_size:,}" if m.sampling in ("fixed-size", "shuffled")
                else f" and sample rate q = {_g(p.sample_rate)}")
        parts.append(f"{shape} with noise multiplier σ = {_g(p.noise_multiplier)} (noise standard deviation "
                     f"over the clipping norm){rate}")
    if len(parts) == 1:
        return f"Training ran {parts[0]}."
    return f"Training ran in {len(parts)} phases: " + "; ".join(parts) + "."


def paper_statement(report: "PrivacyReport") -> str:
    """The privacy statement (one paragraph) of ``report``; see the module docs."""
    m, s = report.mechanism, report.setting or {}
    unit = {"example": "example", "user": "user"}.get(s.get("unit"), "record")
    k = s.get("examples_per_user")
    out = []
    run = training_run(m)
    if run is not None:
        m = run
        p0 = m.phases[0]
        level = "user-level" if m.unit == "user" else "example-level"
        unit_text = (f"one user, who contributes at most {k} examples (group privacy, Dong, Roth & Su Thm. 2.14)"
                     if k else f"one {unit}" + (" (users are sampled and clipped as units)" if m.unit == "user" else ""))
        out.append(f"We train with DP-SGD and report {'an' if level[0] == 'e' else 'a'} {level} guarantee: the privacy unit is {unit_text}, "
                   f"and neighbouring datasets are {_RELATION[m.relation].format(u='example' if k else unit)}.")
        u = "example" if k else unit
        samp = _SAMPLING[m.sampling].format(u=u, q=_g(p0.sample_rate), b=p0.batch_size, n=m.dataset_size,
                                            mb=p0.max_batch_size)
        out.append(f"Batches are formed by {samp}.")
        out.append(_training(m, u))
        key = "fixed-size zero-out" if (m.sampling, m.relation) == ("fixed-size", "zero-out") else m.sampling
        how = _METHOD[key].format(d=m.sensitivity)
        if report.method == "closed form" and m.sampling != "shuffled":
            how = _FULL_BATCH_METHOD.format(d=m.sensitivity)
        if m.sampling == "shuffled" and len(m.phases) > 1:
            per_phase, across = shuffled_bounds(m)
            if across > per_phase:  # the phases' counts above would give a smaller mu: say why
                how += (f"; a pass over the data may span two phases (the data loader runs on), so each pass is "
                        f"counted at its smallest noise multiplier, μ = Δ·√(Σ 1/σ²) over the passes "
                        f"(larger here than √(Σ P/σ²) over the phases: {_g(m.sensitivity * across, up=True)} against "
                        f"{_g(m.sensitivity * per_phase, up=True)})")
    else:
        out.append(f"We release the output of {m.label()}; the privacy unit is one record, and neighbouring "
                   f"datasets are {'those differing by adding or removing one record' if s.get('sampling') == 'poisson' else 'those for which the stated sensitivity holds'}.")
        how = "the exact closed form" if report.method == "closed form" else "the privacy loss distribution (PLD)"
    prov = report.provenance
    disc = (f", value discretization {_g(report.discretization)} with pessimistic rounding"
            if report.discretization else "")
    out.append(f"Privacy is accounted with {how}, using fdpkit {prov.get('fdpkit_version', '?')} and "
               f"dp_accounting {prov.get('dp_accounting_version', '?')}{disc}; the certified trade-off curve "
               f"is {'exact' if report.curve.bound == 'exact' else 'a lower bound on the true one (never optimistic)'}.")
    fit = report.fit
    if math.isfinite(fit.mu):
        rng = ("over all false-positive rates" if fit.alpha_min == 0 else
               f"for every attack with false-positive and false-negative rates of at least {fit.alpha_min:g}")
        out.append(f"The run satisfies μ = {_g(fit.mu, up=True)} Gaussian differential privacy {rng} "
                   f"(regret {_g(fit.regret, 2)}, Gomez et al.).")
    else:
        out.append("The run has no finite μ-GDP guarantee; we report its privacy profile.")
    d0, e0 = report.epsilons[0]
    tpr = _tpr_at(report, STATEMENT_FPR)
    # never a vacuous clause: no "ε = ∞" equivalence, no "TPR above 1"
    eq = f"(ε = {_g(e0, up=True)}, δ = {d0:g})-DP" if math.isfinite(e0) else ""
    # the digits of the report's tables and headline (0.00222 here beside their 0.002217)
    att = (f"no membership-inference attack reaches a true-positive rate above {_g(tpr, up=True)} at a false-positive "
           f"rate of {STATEMENT_FPR:g}") if float(_g(tpr, up=True)) < 1.0 else ""
    if eq and att:
        out.append(f"Equivalently it is {eq}, and {att}.")
    elif eq:
        out.append(f"Equivalently it is {eq}; at a false-positive rate of {STATEMENT_FPR:g} it bounds no "
                   "membership-inference attack below certainty.")
    elif att:
        out.append(f"It satisfies no (ε, δ = {d0:g})-DP with finite ε, but {att}.")
    else:
        out.append(f"It satisfies no (ε, δ = {d0:g})-DP with finite ε and bounds no membership-inference attack "
                   f"at a false-positive rate of {STATEMENT_FPR:g}: it gives no meaningful protection.")
    caveats = _caveats(report, m, d0)
    if caveats:
        out.append("Caveats: " + " ".join(caveats))
    return " ".join(out)


def _caveats(report: "PrivacyReport", m, d0: float) -> list[str]:
    c = []
    run = training_run(m)
    if run is not None:
        m = run
        if m.sampling in ("poisson", "truncated-poisson"):
            c.append("The accounting assumes batches were really drawn by Poisson sampling; it does not hold "
                     "for shuffled fixed-size batches.")
        ratio = report.provenance.get("truncation_epsilon_ratio")
        if ratio:
            c.append(f"Truncated Poisson batches are accounted with dp_accounting's analysis, which may be loose: "
                     f"an attainable instance already reaches ε = {_g(report.provenance['truncation_instance_epsilon'], up=False)} "
                     f"at δ = {report.provenance['truncation_instance_delta']:g}, so the stated ε may be up to "
                     f"{_g(ratio, 3, up=True)}× the true one.")
        if report.comparison:
            cmp = report.comparison
            e = cmp["epsilon_at_delta"][0]
            c.append(f"No amplification by shuffling is claimed; Poisson accounting of the same run would give "
                     f"μ = {_g(cmp['mu'], up=True)} and ε = {_g(e['epsilon'], up=True)} at δ = {e['delta']:g}, which is "
                     f"not a guarantee for shuffled batches (Chua et al., ICML 2024; Annamalai et al. 2024).")
        if m.dataset_size and d0 >= 1.0 / m.dataset_size:
            c.append(f"δ = {d0:g} is not small against 1/{m.dataset_size:,}.")
        c.append("The guarantee covers every intermediate model (the final one included), but not "
                 "hyperparameter tuning or any other use of the same data, which must be accounted in addition.")
    if report.failure_mode == "catastrophic" and math.isfinite(report.epsilons[0][1]):
        mass = certainty_mass(report.curve)
        if d0 >= mass > 0:  # the (epsilon, delta) pair above reads small only because delta covers it
            c.append(f"With probability {mass:.3g} an output reveals membership outright (a catastrophic failure); "
                     f"δ = {d0:g} covers those outputs, so the ε above describes only the others.")
    if report.fit.alpha_min > 0 and math.isfinite(report.fit.mu):
        c.append(f"Below FPR {report.fit.alpha_min:g} the μ-GDP bound holds up to τ = {safe_g(report.fit.tau, 4, up=True)}; "
                 "the certified curve holds everywhere.")
    return c
