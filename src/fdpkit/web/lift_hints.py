"""What the web says and shows about lifting a hard limit with a second person (shared by
the ledger's pages and JSON routes; the rules are :mod:`fdpkit.ledger.lifts`')."""

from __future__ import annotations

from urllib.parse import quote

#: What the web says when one person's threshold change lifts a hard limit.
WEB_HINT = {False: "give a reason and set it again to request the lift: another approver or admin then "
                   "approves it on this page or in the approval queue (or lower it instead)",
            True: "request it with POST /api/ledger/datasets/{name}/lift-requests (with a reason) for another "
                  "approver or admin to approve, or lower it instead"}


def lift_refusal(exc: BaseException, name: str, api: bool) -> str:
    """The library's refusal of a one-person lift, with the web's way to a second person."""
    head = str(exc).split(": name an approver", 1)[0]
    return f"{head}: {WEB_HINT[api].format(name=quote(name))}"


def pending_lifts(led, dataset: str | None = None) -> list[dict]:
    """The pending lift requests (of ``dataset``, else all) as dicts with the dataset's name."""
    from fdpkit.ledger import lift_dict

    names = {d.id: d.name for d in led.datasets()}
    return [lift_dict(r, names.get(r.dataset_id)) for r in led.lift_requests(dataset)]
