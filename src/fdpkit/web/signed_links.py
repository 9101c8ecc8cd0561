"""Figures one page carries to another in its link, signed by the server (no maths here).

The Report page's "Convert this μ" link carries the run's μ and its accountant's ε at one δ;
the Convert page quotes that ε as the run's. A link is only text: anyone can write
``/convert?mu=1&profile_epsilon=0.001&profile_delta=1e-05``. So the Report page signs the
exact texts it carries (HMAC-SHA256 under the server's link key, :func:`sign`), and the
Convert page quotes the carried figures only when the signature matches (:func:`check`,
compared with :func:`hmac.compare_digest`); otherwise it shows none of them.

The key: derived from ``FDPKIT_LEDGER_KEY`` (the ledger's chain key,
:data:`fdpkit.ledger.chain.KEY_ENV`) when that is set, by an HMAC with this purpose's own label
(so that no link signature is ever a chain hash), so links keep verifying across restarts and
on every server process that shares it; otherwise 32 random bytes made when the app is built
(:func:`app_key`): a link then verifies on the server that made it until it restarts.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

#: The query parameter holding the signature of the carried figures.
SIG_FIELD = "profile_sig"
#: The environment variable of the ledger's chain key (``fdpkit.ledger.chain.KEY_ENV``, read
#: here by name: the calculator pages do not import the ledger).
LEDGER_KEY_ENV = "FDPKIT_LEDGER_KEY"
_PURPOSE = b"fdpkit web: figures carried by a link from one page to another, v1"


def server_key() -> bytes:
    """A link key: derived from ``FDPKIT_LEDGER_KEY`` when set, else 32 random bytes.

    Returns
    -------
    bytes
        32 bytes.
    """
    shared = os.environ.get(LEDGER_KEY_ENV)
    if shared:
        return hmac.new(shared.encode("utf-8"), _PURPOSE, hashlib.sha256).digest()
    return secrets.token_bytes(32)


def app_key(app: Any) -> bytes:
    """The app's link key (``app.state.link_key``), made on first use if the app has none."""
    key = getattr(app.state, "link_key", None)
    if not key:
        key = app.state.link_key = server_key()
    return key


def sign(key: bytes, values: Mapping[str, Any], names: Sequence[str]) -> str:
    """The signature of ``values[name]`` for each of ``names``, as the link's texts.

    Parameters
    ----------
    key : bytes
        The server's link key (:func:`app_key`).
    values : Mapping
        The link's query parameters (a missing one counts as empty text).
    names : sequence of str
        The parameters signed, in a fixed order.

    Returns
    -------
    str
        43 URL-safe characters (base64 of the HMAC-SHA256, without padding).
    """
    texts = [[name, str(values.get(name) or "")] for name in names]
    msg = _PURPOSE + b"\x00" + json.dumps(texts, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return base64.urlsafe_b64encode(hmac.new(key, msg, hashlib.sha256).digest()).rstrip(b"=").decode("ascii")


def check(key: bytes, values: Mapping[str, Any], names: Sequence[str], field: str = SIG_FIELD) -> bool | None:
    """Whether the link's signature (``values[field]``, by default :data:`SIG_FIELD`) is that of its ``names``.

    Returns
    -------
    bool or None
        None when the link has no signature, True when it matches, False when it does not.
    """
    sent = str(values.get(field) or "").strip()
    if not sent:
        return None
    return hmac.compare_digest(sent.encode("utf-8", "replace"), sign(key, values, names).encode("ascii"))
