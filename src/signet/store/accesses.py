"""Accesses recorded off the read path: an in-process buffer written by the one writer. An access (a
`get`, a used recall result, positive feedback) raises `access_count` and sets `last_accessed`;
`record(ids)` only adds to a buffer, and a flusher thread writes it in one transaction
`interval_s` later (on PostgreSQL through `add_accesses`, so daemons' counts add up). A failed
flush keeps them; kill -9 loses at most one interval; past `max_pending` memories the rest count
in `dropped`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from signet.clock import Clock, SystemClock, stamp
from signet.store.write_queue import background_writes

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.5
MAX_PENDING = 50_000


@dataclass(slots=True)
class _Pending:
    count: int
    last: str


# Writes (memory id, accesses, latest time) rows in one transaction.
AccessWriter = Callable[[Sequence[tuple[str, int, str]]], None]


class AccessRecorder:
    def __init__(
        self, write: AccessWriter, *, interval_s: float = FLUSH_INTERVAL_S,
        max_pending: int = MAX_PENDING, clock: Clock | None = None,
    ) -> None:
        """`write`: the store's `add_accesses` (CoreStore)."""
        self._write = write
        self.clock = clock or SystemClock()  # the time an access is stamped with
        self.interval_s = interval_s
        self.max_pending = max_pending
        self.dropped = 0
        self._dropped_reported = 0  # the part of `dropped` already logged
        self._pending: dict[str, _Pending] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        # Serialises flushes (the thread's and an explicit flush()), so a flush that fails and
        # puts its batch back never interleaves with another taking the buffer.
        self._flushing = threading.Lock()

    def record(self, ids: Iterable[str], at: str | None = None) -> None:
        """Count one access of each memory in `ids` (at `at`, default now), to be written soon."""
        at = at or stamp(self.clock)
        with self._cond:
            if self._closed:
                return
            for memory_id in ids:
                entry = self._pending.get(memory_id)
                if entry is not None:
                    entry.count += 1
                    entry.last = max(entry.last, at)
                elif len(self._pending) < self.max_pending:
                    self._pending[memory_id] = _Pending(1, at)
                else:
                    self.dropped += 1
            self._ensure_thread()
            self._cond.notify()

    def pending(self) -> dict[str, int]:
        """Accesses recorded and not yet written, per memory."""
        with self._cond:
            return {memory_id: entry.count for memory_id, entry in self._pending.items()}

    def flush(self) -> int:
        """Write every pending access now; returns how many memories were updated."""
        with self._flushing:
            with self._cond:
                batch, self._pending = self._pending, {}
                dropped, self._dropped_reported = self.dropped - self._dropped_reported, self.dropped
            if dropped:
                log.warning("%d accesses not counted: more than %d memories were waiting to be"
                            " written", dropped, self.max_pending)
            if not batch:
                return 0
            rows = [(memory_id, e.count, e.last) for memory_id, e in batch.items()]
            try:
                self._write(rows)
            except Exception:
                self._put_back(batch)
                raise
            return len(rows)

    def close(self) -> None:
        """Stop the flusher and write what is left (the store must still be open)."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        try:
            self.flush()
        except Exception:  # closing goes on; only access counters are lost
            log.exception("could not write %d pending accesses at close", len(self._pending))

    # -- the flusher ------------------------------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="signet-accesses", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        # A flush is bookkeeping: it queues behind every request's write (write_queue.py).
        with background_writes():
            self._flush_forever()

    def _flush_forever(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
            # Let a burst of reads gather into one write.
            if not self._sleep(self.interval_s):
                return  # closed: close() flushes on its own thread
            try:
                self.flush()
            except Exception:  # kept for the next flush; reads never see this
                log.exception("could not write recorded accesses; retrying later")
                if not self._sleep(self.interval_s, early_when_full=False):
                    return

    def _sleep(self, seconds: float, *, early_when_full: bool = True) -> bool:
        """Wait `seconds` (records arriving meanwhile do not cut it short unless they fill the
        buffer: then waiting would drop accesses); False when closed. After a failed write
        the wait is whole, so a full buffer on a full disk is not retried in a tight loop."""
        deadline = time.monotonic() + seconds
        with self._cond:
            while not self._closed:
                remaining = deadline - time.monotonic()
                full = early_when_full and len(self._pending) >= self.max_pending
                if remaining <= 0 or full:
                    return True
                self._cond.wait(remaining)
        return False

    def _put_back(self, batch: dict[str, _Pending]) -> None:
        with self._cond:
            for memory_id, entry in batch.items():
                newer = self._pending.get(memory_id)
                if newer is None:
                    self._pending[memory_id] = entry
                else:
                    newer.count += entry.count
                    newer.last = max(newer.last, entry.last)
