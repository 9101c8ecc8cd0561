"""Uploaded audit scores held by their digest, so that a score-file audit has a link.

Files cannot travel in a URL; the page's permalink of a score-file audit names the scores'
SHA-256 digest instead (``/audit?mode=scores&scores=<digest>&...``) and the server keeps the
last uploads in memory, bounded by count and by bytes (least recently used first out). A link
whose scores were dropped (evicted, or the server restarted) says so and asks for the files
again; the downloads carry the digest and the number of scores, so a saved result still
names its inputs. Plain data only; no maths here.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

#: Most score sets held, and most bytes held (float64 scores of both classes together).
MAX_ENTRIES = 16
MAX_BYTES = 64 * 1024 * 1024
#: Hex digits of the digest a link carries (64 bits: no collision between uploads in practice).
DIGEST_CHARS = 16


def digest_of(members: np.ndarray, nonmembers: np.ndarray) -> str:
    """The scores' digest: SHA-256 of both classes' float64 values, in order, the first
    :data:`DIGEST_CHARS` hex digits."""
    h = hashlib.sha256()
    for scores in (members, nonmembers):
        a = np.ascontiguousarray(scores, dtype=np.float64)
        h.update(len(a).to_bytes(8, "little"))
        h.update(a.tobytes())
    return h.hexdigest()[:DIGEST_CHARS]


class ScoreStore:
    """An LRU store of (member, non-member) score arrays by digest, at most ``max_entries``
    sets and ``max_bytes`` bytes; thread-safe. A set larger than ``max_bytes`` is not held.

    >>> store = ScoreStore(max_entries=1)
    >>> d = store.put(np.array([1.0, 2.0]), np.array([0.5]))
    >>> store.get(d)[1].tolist()
    [0.5]
    >>> _ = store.put(np.array([3.0]), np.array([0.0]))
    >>> store.get(d) is None
    True
    """

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._held: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def put(self, members: np.ndarray, nonmembers: np.ndarray) -> str:
        """Hold the scores (read-only copies) and return their digest."""
        m = np.array(members, dtype=np.float64)
        n = np.array(nonmembers, dtype=np.float64)
        m.flags.writeable = n.flags.writeable = False
        key, size = digest_of(m, n), m.nbytes + n.nbytes
        with self._lock:
            if key in self._held:
                self._held.move_to_end(key)
                return key
            if size > self.max_bytes:
                return key
            self._held[key] = (m, n)
            self._bytes += size
            while len(self._held) > self.max_entries or self._bytes > self.max_bytes:
                _, (a, b) = self._held.popitem(last=False)
                self._bytes -= a.nbytes + b.nbytes
        return key

    def get(self, key: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The scores held under ``key``, or None."""
        with self._lock:
            pair = self._held.get(str(key))
            if pair is not None:
                self._held.move_to_end(str(key))
            return pair

    @property
    def nbytes(self) -> int:
        """Bytes held now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._held)
