"""The embedder's health probe: one tiny embedding call on a thread of its own, one at a time.
Callers wait through the query embedding's `ProviderGuard` and share the call in flight, so a
hung provider holds one probe thread, never a request's.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from signet.providers.embedder import Embedder

__all__ = ["HealthProbe", "Probed"]

HEALTH_TEXT = "signet embedding health check"


@dataclass(frozen=True, slots=True)
class Probed:
    vectors: np.ndarray
    latency_ms: float  # the provider call itself


class HealthProbe:
    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._lock = threading.Lock()
        self._inflight: Future[Probed] | None = None

    def submit(self) -> Future[Probed]:
        """The probe in flight, or a new one started on its own thread."""
        with self._lock:
            if self._inflight is not None and not self._inflight.done():
                return self._inflight
            future: Future[Probed] = Future()
            self._inflight = future
        threading.Thread(target=self._run, args=(future,), name="signet-embed-health",
                         daemon=True).start()
        return future

    def _run(self, future: Future[Probed]) -> None:
        started = time.perf_counter()
        try:
            vectors = self.embedder.embed([HEALTH_TEXT])
        except BaseException as exc:  # handed to whoever waits
            future.set_exception(exc)
            return
        future.set_result(Probed(np.asarray(vectors), (time.perf_counter() - started) * 1000))
