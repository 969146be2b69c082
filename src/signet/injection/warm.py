"""Load the embedding model when a session starts, not on its first prompt.

The first embed loads the model (a second or two), which would eat the first prompt's budget; so
session-start starts one background embed per process and does not wait for it.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from signet.errors import ProviderError

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["warm_up"]

log = logging.getLogger(__name__)

_started: set[int] = set()
_lock = threading.Lock()


def warm_up(app: SignetApp) -> None:
    embedder = app.embedder
    if embedder is None:
        return
    with _lock:
        if id(embedder) in _started:
            return
        _started.add(id(embedder))

    def embed_once() -> None:
        try:
            embedder.embed(["warm up"])
        except ProviderError as exc:
            log.warning("embedder warm-up failed: %s", exc)

    threading.Thread(target=embed_once, name="signet-warm-up", daemon=True).start()
