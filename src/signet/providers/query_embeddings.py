"""Query vectors for recall: an LRU cache by (model id, normalised text) in front of a micro-
batcher. The normalised text is what is embedded, so an entry is never stale. Misses arriving
during a batch go together in the next, with no timer; `submit` returns a future the caller waits
on with its own deadline, so a hung provider holds the batcher's thread, never a request's.
"""

from __future__ import annotations

import logging
import queue
import threading
import unicodedata
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from signet.errors import ProviderError
from signet.providers.embedder import Embedder

__all__ = ["QueryEmbeddings", "normalize_query"]

log = logging.getLogger(__name__)

DEFAULT_CACHE_SIZE = 1024
DEFAULT_MAX_BATCH = 32


def normalize_query(text: str) -> str:
    """The text a query is embedded and cached as: NFC, single spaces, no outer whitespace
    (word-piece tokenizers split on whitespace, so this changes no vector of theirs)."""
    return " ".join(unicodedata.normalize("NFC", text).split())


@dataclass(slots=True)
class QueryStats:
    hits: int = 0
    misses: int = 0
    batches: int = 0
    batched_texts: int = 0  # texts embedded, summed over batches
    largest_batch: int = 0


_Key = tuple[str, str]
_Item = tuple[_Key, "Future[np.ndarray]"]


class QueryEmbeddings:
    """Query vectors from `embedder`, cached and micro-batched (see the module docstring)."""

    def __init__(
        self, embedder: Embedder, *, cache_size: int = DEFAULT_CACHE_SIZE,
        max_batch: int = DEFAULT_MAX_BATCH,
    ) -> None:
        if cache_size < 0 or max_batch < 1:
            raise ValueError("cache_size must be >= 0 and max_batch >= 1")
        self.embedder = embedder
        self.cache_size = cache_size
        self.max_batch = max_batch
        self.stats = QueryStats()
        self._cache: OrderedDict[_Key, np.ndarray] = OrderedDict()
        self._inflight: dict[_Key, Future[np.ndarray]] = {}
        # Guards the cache, the in-flight map and the stats; never held while embedding.
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    def embed(self, text: str) -> np.ndarray:
        """The query's vector, waiting as long as it takes."""
        return self.submit(text).result()

    def submit(self, text: str) -> Future[np.ndarray]:
        """A future of the query's vector: already done on a cache hit, else the one shared
        by every caller asking for the same key until the batcher answers."""
        key = (self.embedder.model, normalize_query(text))
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                self.stats.hits += 1
                done: Future[np.ndarray] = Future()
                done.set_result(cached)
                return done
            self.stats.misses += 1
            pending = self._inflight.get(key)
            if pending is not None:
                return pending
            if self._closed:
                raise RuntimeError("query embeddings are closed")
            future: Future[np.ndarray] = Future()
            self._inflight[key] = future
            self._start()
            # Queued under the lock: close() cannot slip its stop marker in between, which
            # would leave this future behind the marker, never answered.
            self._queue.put((key, future))
        return future

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    def close(self) -> None:
        """Stop the batcher; queries still queued fail rather than wait forever."""
        with self._lock:
            self._closed = True
            started = self._thread is not None
        if started:
            self._queue.put(None)

    # -- the batcher's thread -------------------------------------------------------------

    def _start(self) -> None:
        # Started on the first miss (under the lock), so an app that never recalls by meaning
        # runs no thread.
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._drain, name="signet-query-embed", daemon=True
            )
            self._thread.start()

    def _drain(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                self._fail_queued()
                return
            batch = [first]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            self._run(batch)
            if stop:
                self._fail_queued()
                return

    def _run(self, batch: list[_Item]) -> None:
        texts = [key[1] for key, _ in batch]
        try:
            vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            if vectors.ndim != 2 or len(vectors) != len(texts):
                # Checked here: an IndexError in _settle would end this thread, and every
                # later query would wait on a batcher that is gone.
                raise ProviderError(
                    f"{self.embedder.model}: {len(texts)} texts gave vectors of shape"
                    f" {vectors.shape}"
                )
        except Exception as exc:  # every waiter gets the provider's error
            self._settle(batch, None, exc)
            return
        self._settle(batch, vectors, None)

    def _settle(
        self, batch: list[_Item], vectors: np.ndarray | None, error: Exception | None
    ) -> None:
        with self._lock:
            self.stats.batches += 1
            self.stats.batched_texts += len(batch)
            self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
            for row, (key, _) in enumerate(batch):
                self._inflight.pop(key, None)
                if vectors is not None and self.cache_size > 0:
                    self._cache[key] = vectors[row]
                    self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        for row, (_, future) in enumerate(batch):
            # A waiter may have cancelled the future (it is shared by every caller of the key);
            # setting it then raises, and must not end this thread.
            if not future.set_running_or_notify_cancel():
                continue
            if vectors is not None:
                future.set_result(vectors[row])
            else:
                assert error is not None
                future.set_exception(error)

    def _fail_queued(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                self._settle([item], None, RuntimeError("query embeddings are closed"))
