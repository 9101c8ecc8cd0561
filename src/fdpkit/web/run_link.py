"""A report's own attack risk of its run, carried by its Risk link under the server's signature.

The Risk page reads a guarantee; from a privacy report it got the run's μ (and its range), and
read through μ the run's TPR at FPR 0.001 came out above the report's own certified figure
(CIFAR-10, σ 1.1, batch 256 of 50,000, 60 epochs: 0.75% and a posterior of 7.0% beside the
report's 0.71% and 6.7%; failure mode "catastrophic by the bound" beside the report's
"graceful"). So the Report page's Risk link also carries the run's own figures at the grade's
reference point (FPR 0.001, prior 0.01; :func:`fdpkit.report.build.plain_figures`, exact float
texts) with ``run_mu``, signed with the range of μ (:mod:`fdpkit.web.signed_links`, field
:data:`RUN_SIG`). The Risk page quotes them as the run's own only when the signature matches and
it reads that μ at that point (:func:`run_figures`); a changed or unsigned link reads μ alone and
never shows a carried figure as the run's (no maths here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from fdpkit.risk.grade import REFERENCE_FPR, REFERENCE_PRIOR
from fdpkit.web.signed_links import check, sign

#: The range of a report's fitted μ (unsigned on its own: it can only add a warning and raise
#: the Risk page's figures), carried by the Report page's Risk link.
RANGE = ("mu_fpr_min", "mu_tau")
#: The run's own figures: the μ they go with, then ``plain_risk_words``'s numbers and the advantage.
RUN = ("run_mu", "run_tpr", "run_posterior", "run_rr_at", "run_rr", "run_advantage", "run_disclosure", "run_failure")
#: The query parameter of their signature (of RUN and RANGE's texts, in that order).
RUN_SIG = "run_sig"
#: Every field a report's Risk link carries beside ``guarantee`` and ``mu`` (Convert passes them on).
CARRIED = (*RANGE, *RUN, RUN_SIG)
_NUMBERS = {"run_tpr": "tpr", "run_posterior": "posterior", "run_rr_at": "relative_risk_at_fpr",
            "run_rr": "relative_risk", "run_advantage": "advantage", "run_disclosure": "disclosure"}
_MODES = ("none", "graceful", "catastrophic")


def run_query(key: bytes, mu_text: str, figures: Mapping[str, Any] | None, rng: Mapping[str, str]) -> dict[str, str]:
    """The Risk link's run fields and their signature; {} without figures at the reference point.

    ``figures``: :func:`fdpkit.report.build.plain_figures` and ``advantage``; ``rng``: the link's
    range fields (signed with them, so that a changed range drops the run's figures too).

    >>> q = run_query(b"k", "0.6531", {"tpr": 0.007, "posterior": 0.066, "fpr": 0.001, "prior": 0.01,
    ...     "relative_risk_at_fpr": 7.0, "relative_risk": float("inf"), "advantage": 0.245, "disclosure": 0.0,
    ...     "failure_mode": "graceful"}, {})
    >>> q["run_tpr"], q["run_rr"], q["run_failure"], len(q[RUN_SIG])
    ('0.007', 'inf', 'graceful', 43)
    """
    if not figures or figures.get("fpr") != REFERENCE_FPR or figures.get("prior") != REFERENCE_PRIOR:
        return {}
    query = {"run_mu": mu_text, **{k: repr(float(figures[v])) for k, v in _NUMBERS.items()},
             "run_failure": str(figures["failure_mode"])}
    query[RUN_SIG] = sign(key, {**query, **rng}, (*RUN, *RANGE))
    return query


def run_figures(key: bytes, form: Mapping[str, Any], mu: float | None, prior: float | None,
                fpr: float | None) -> tuple[dict[str, Any] | None, bool | None]:
    """The run's own figures when the link's signature matches and the page reads its μ at the
    reference point: ``(figures or None, signed)``, ``signed`` None without a signature, False
    when it does not match (a changed link, or one made before the server restarted)."""
    signed = check(key, form, (*RUN, *RANGE), field=RUN_SIG)
    if not signed:
        return None, signed
    try:
        out: dict[str, Any] = {v: float(str(form.get(k))) for k, v in _NUMBERS.items()}
        run_mu = float(str(form.get("run_mu")))
    except ValueError:
        return None, False
    out["failure_mode"] = str(form.get("run_failure"))
    if out["failure_mode"] not in _MODES or any(math.isnan(x) or x < 0 for x in out.values() if isinstance(x, float)):
        return None, False
    if mu != run_mu or prior != REFERENCE_PRIOR or fpr != REFERENCE_FPR:
        return None, True  # the reader asked about something else: μ read as typed
    return out, True
