"""Privacy-budget ledger: releases of a dataset composed tightly over time.

A ledger lives at a SQLAlchemy URL (a SQLite file by default, in the user's data
directory; ``FDPKIT_LEDGER`` or an explicit URL such as ``postgresql+psycopg://...``
override it). Its schema is created and upgraded by Alembic migrations. Releases go
proposed -> approved (with their privacy report) -> released, or rejected / withdrawn;
every change appends to a hash-chained event log that :meth:`Ledger.verify` checks
(against an anchor, :meth:`Ledger.head` kept elsewhere, and keyed with
``FDPKIT_LEDGER_KEY`` when set). Four-eyes by default: the proposer of a release can
neither approve it nor override a hard limit for it.
The running total is the tight composition of the released releases (exact GDP for the
Gaussian family, the accountant's PLD otherwise), shown beside the basic epsilon sum.

Uses fdpkit.accounting and fdpkit.report; knows nothing of the CLI or the web.

>>> import tempfile, os
>>> from fdpkit.ledger import open_ledger
>>> led = open_ledger(os.path.join(tempfile.mkdtemp(), "l.sqlite"))
>>> _ = led.add_dataset("census", unit="one person", user="ana")
>>> r = led.record("census", {"kind": "gaussian", "sigma": 2.0}, title="counts", user="ana",
...                approver="bob", report=False)
>>> anchor = str(led.head())  # keep it elsewhere
>>> round(led.status("census").released.mu, 6), led.verify(anchor=anchor).ok
(0.5, True)
>>> led.close()
"""

from __future__ import annotations

from fdpkit.ledger.chain import Anchor, VerifyResult
from fdpkit.ledger.operations import (
    Check, Ledger, LedgerError, NeedsSecondPerson, NotFound, Status, alert_text, event_dict, lift_dict,
    parse_mechanism, release_dict,
)
from fdpkit.ledger.db import data_dir, resolve_url
from fdpkit.ledger.totals import DELTA_REF, FPR_REF, GRID_NOTE, Total


def open_ledger(url: str | None = None, *, upgrade: bool = True, key: str | bytes | None = None) -> Ledger:
    """Open (and by default create or upgrade) the ledger at ``url`` (a SQLAlchemy URL or a
    file path; default ``FDPKIT_LEDGER`` or the SQLite file in the user's data directory).
    ``key`` (default ``FDPKIT_LEDGER_KEY``) keys the event chain (HMAC-SHA256).

    Examples
    --------
    An in-memory SQLite ledger (a file path or a PostgreSQL URL in practice):

    >>> from fdpkit import Gaussian
    >>> ledger = open_ledger("sqlite://")
    >>> _ = ledger.add_dataset("survey", unit="one respondent", user="ana")
    >>> release = ledger.propose("survey", Gaussian(sigma=2.0), title="mean score", user="ana")
    >>> release.id, release.state
    (1, 'proposed')
    >>> ledger.close()
    """
    return Ledger(url, upgrade=upgrade, key=key)


__all__ = ["Anchor", "DELTA_REF", "FPR_REF", "GRID_NOTE", "Check", "Ledger", "LedgerError", "NeedsSecondPerson",
           "NotFound", "Status", "Total", "VerifyResult", "alert_text", "data_dir", "event_dict", "lift_dict", "open_ledger",
           "parse_mechanism", "release_dict", "resolve_url"]
