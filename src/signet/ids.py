"""Row ids: 32 lowercase hex characters, uuid4 unless a benchmark fixes the sequence.

Ties between equal recall scores are broken by id, so a benchmark that must repeat byte for
byte draws its ids from a seeded generator (`seeded_ids`); everything else gets uuid4.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["new_id", "seeded_ids"]

_seeded: random.Random | None = None
_lock = threading.Lock()


def new_id() -> str:
    """uuid4's hex, or the next of the seeded sequence inside `seeded_ids`."""
    if _seeded is None:
        return uuid.uuid4().hex
    with _lock:
        return f"{_seeded.getrandbits(128):032x}"


@contextmanager
def seeded_ids(seed: int) -> Iterator[None]:
    """Ids drawn from a generator seeded with `seed` while the block runs (one at a time)."""
    global _seeded
    previous, _seeded = _seeded, random.Random(seed)
    try:
        yield
    finally:
        _seeded = previous
