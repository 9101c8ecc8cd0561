"""``fdpkit ledger lift ...``: lifting a hard limit in two steps, as the web does it (request by
one person; approve or reject by another), each a chained ledger event. Registered on
``ledger_app`` by :mod:`fdpkit.cli` (no maths here; the rules are :mod:`fdpkit.ledger.lifts`)."""

from __future__ import annotations

from typing import Optional

import typer

from fdpkit.cli._common import command_group, fail, out
from fdpkit.cli.ledger import DbOpt, FmtOpt, UserOpt, _check_fmt, _json, _open, _table, _user_default, ledger_cmd

lift_app = command_group("Requests to lift a hard limit, approved by a second person (four-eyes).",
                         no_args_is_help=True)


def _show(r, name: str | None, format: str) -> None:
    from fdpkit.ledger import lift_dict

    d = lift_dict(r, name)
    if format == "json":
        _json(d)
    else:
        out.print(f"lift request {d['id']} {d['state']}: {d['from']} -> {d['change']}", highlight=False)


@lift_app.command("request")
@ledger_cmd
def lift_request(name: str = typer.Argument(..., help="Dataset name."),
                 reason: str = typer.Option(..., "--reason", help="Why the limit should be lifted."),
                 epsilon: Optional[float] = typer.Option(None, "--epsilon", help="New ε limit (at --delta)."),
                 delta: Optional[float] = typer.Option(None, "--delta", help="δ of an ε limit (default 1e-5)."),
                 mu: Optional[float] = typer.Option(None, "--mu", help="New μ limit."),
                 tpr: Optional[float] = typer.Option(None, "--tpr", help="New certified TPR limit (at --fpr)."),
                 fpr: Optional[float] = typer.Option(None, "--fpr", help="FPR of a TPR limit (default 1e-3)."),
                 remove: bool = typer.Option(False, "--remove", help="Ask to remove the hard limit on the metric."),
                 user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Request lifting the hard limit (raise it, loosen its δ or FPR, or --remove it): one of
    --epsilon, --mu, --tpr. Nothing changes until another person approves it."""
    _check_fmt(format)
    given = {k: v for k, v in (("epsilon", epsilon), ("mu", mu), ("tpr", tpr)) if v is not None}
    if len(given) > 1 or not (given or remove):
        fail("give exactly one of --epsilon, --mu, --tpr" + (" (or none) with --remove" if remove else ""))
    metric = next(iter(given), "epsilon")
    value = None if remove else given[metric]
    r = _open(db).request_lift(name, metric=metric, level="hard", value=value, delta=delta, fpr=fpr,
                               remove=remove, reason=reason, user=user or _user_default())
    _show(r, name, format)


@lift_app.command("approve")
@ledger_cmd
def lift_approve(request_id: int = typer.Argument(..., help="Lift request id."),
                 comment: str = typer.Option("", "--comment", help="Optional comment."),
                 user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Approve a pending lift request and apply it (never by its requester)."""
    _check_fmt(format)
    _show(_open(db).approve_lift(request_id, user=user or _user_default(), comment=comment), None, format)


@lift_app.command("reject")
@ledger_cmd
def lift_reject(request_id: int = typer.Argument(..., help="Lift request id."),
                comment: str = typer.Option("", "--comment", help="The reason (required, unless you withdraw "
                                                                  "your own request)."),
                user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Reject a pending lift request (or withdraw your own)."""
    _check_fmt(format)
    _show(_open(db).reject_lift(request_id, user=user or _user_default(), comment=comment), None, format)


@lift_app.command("list")
@ledger_cmd
def lift_list(name: Optional[str] = typer.Argument(None, help="Dataset name (default: all)."),
              all_states: bool = typer.Option(False, "--all", help="Decided requests too, not only pending ones."),
              db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Lift requests (the pending ones by default)."""
    _check_fmt(format)
    from fdpkit.ledger import lift_dict

    led = _open(db)
    names = {d.id: d.name for d in led.datasets()}
    rows = [lift_dict(r, names.get(r.dataset_id)) for r in led.lift_requests(name, None if all_states else "pending")]
    if format == "json":
        _json(rows)
        return
    _table("Lift requests", ["id", "dataset", "state", "from", "to", "by", "decided by", "reason"],
           [[d["id"], d["dataset"], d["state"], d["from"], d["change"], d["requested_by"], d["decided_by"] or "-",
             d["reason"]] for d in rows])
