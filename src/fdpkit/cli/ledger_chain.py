"""``fdpkit ledger head`` and ``fdpkit ledger verify``: the event chain's head, to keep outside
the database, and the check of the chain against it. Registered on ``ledger_app`` by importing
this module (:mod:`fdpkit.cli`); no maths here (the rules are :mod:`fdpkit.ledger.chain`)."""

from __future__ import annotations

from typing import Optional

import typer

from fdpkit.cli._common import fail, out
from fdpkit.cli.ledger import DbOpt, FmtOpt, _check_fmt, _json, _open, ledger_app, ledger_cmd


@ledger_app.command("head")
@ledger_cmd
def head(db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Print the chain head as SEQ:HASH: keep it outside the database (a ticket, a signed
    note) and check it later with `fdpkit ledger verify --anchor SEQ:HASH`."""
    _check_fmt(format)
    h = _open(db).head()
    if format == "json":
        _json({"seq": h.seq, "hash": h.hash, "anchor": str(h)})
    else:
        out.print(str(h), highlight=False, soft_wrap=True)


@ledger_app.command("verify")
@ledger_cmd
def verify(anchor: Optional[str] = typer.Option(None, "--anchor", help="An earlier head SEQ:HASH (from `fdpkit "
                                                "ledger head`) that must still be in the chain."),
           db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Check the hash-chained event log (keyed with FDPKIT_LEDGER_KEY when set), every row
    against it, and the released totals re-derived from the chained releases: exit 0 when
    intact, 1 with the first broken event otherwise (an --anchor not in the chain included),
    or with one finding per released release accounted under a relation its dataset does not
    declare (written by an older fdpkit); --format json exits the same. Exit 2 is bad input
    only (an --anchor that is not SEQ:HASH, no ledger at --db). Without --anchor (or a key) a
    chain cut at its end or rewritten and re-hashed as a whole cannot be told from an intact
    one."""
    _check_fmt(format)
    led = _open(db)
    try:
        res = led.verify(anchor=anchor)
    except ValueError as exc:  # the library's "anchor must be SEQ:HASH": the option typed
        if not str(exc).startswith("anchor "):
            raise
        fail("--" + str(exc))
    if format == "json":
        _json(res.to_dict())
    elif res.ok:
        extra = (f", anchor {res.anchor.seq} found" if res.anchor is not None else "") + (
            ", keyed" if res.keyed else "")
        out.print(f"ledger intact: {res.events} events verified{extra}; head {res.head}", highlight=False,
                  soft_wrap=True)
    else:
        out.print(f"ledger BROKEN at event {res.broken_seq}: {res.reason}", highlight=False, soft_wrap=True)
    if format != "json":
        for finding in res.findings:
            out.print(f"finding: {finding}", style="yellow", highlight=False, markup=False, soft_wrap=True)
    if not res.ok or res.findings:
        raise typer.Exit(1)
