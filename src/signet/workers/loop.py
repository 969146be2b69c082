"""The worker loop: background work one tick at a time, with time passed in.

A worker has a `name` and `tick(now) -> bool` (did it work) and no timers, so tests drive it with
a fake `now`. A raising tick is logged and its worker backed off while the others go on; idle, the
loop sleeps on the stop event, so stopping is immediate. `ReaperWorker` returns jobs whose worker
vanished mid-lease.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from signet.clock import Clock, SystemClock
from signet.store import jobs
from signet.store.backend import CoreStore
from signet.store.write_queue import background_writes
from signet.types import format_ts

log = logging.getLogger(__name__)

Sleep = Callable[[threading.Event, float], None]


class Worker(Protocol):
    name: str

    def tick(self, now: datetime) -> bool:
        """Do at most one unit of work; return whether any was done."""
        ...


def _wait(stop: threading.Event, seconds: float) -> None:
    stop.wait(seconds)


class Backoff:
    """Exponential back-off with jitter: min(base * 2^n, cap) + uniform(0, jitter) seconds."""

    def __init__(
        self,
        base_s: float = 1.0,
        cap_s: float = 30.0,
        jitter_s: float = 0.5,
        rng: random.Random | None = None,
    ) -> None:
        self.base_s, self.cap_s, self.jitter_s = base_s, cap_s, jitter_s
        self.rng = rng or random.Random()

    def delay(self, consecutive_failures: int) -> float:
        # Clamp the exponent: 2.0 ** 2000 overflows, and anything past 2^64 is the cap anyway.
        exponent = min(max(consecutive_failures, 0), 64)
        return min(self.base_s * 2.0**exponent, self.cap_s) + self.rng.uniform(0, self.jitter_s)


@dataclass(slots=True)
class _Stats:
    ticks: int = 0
    work_done: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    last_error: str | None = None
    last_error_at: str | None = None
    paused: bool = False
    not_before: datetime | None = None  # backed off until then (run() only)


class WorkerLoop:
    def __init__(
        self,
        workers: Sequence[Worker],
        *,
        idle_sleep_s: float = 2.0,
        clock: Clock | None = None,
        sleep: Sleep = _wait,
        backoff: Backoff | None = None,
    ) -> None:
        names = [w.name for w in workers]
        if len(set(names)) != len(names):
            raise ValueError(f"worker names must be unique: {names}")
        self.workers = tuple(workers)
        self.idle_sleep_s = idle_sleep_s
        self.clock = clock or SystemClock()
        self.sleep = sleep
        self.backoff = backoff or Backoff()
        self._stats = {w.name: _Stats() for w in self.workers}
        # state() is read by the daemon's request threads while run() ticks in its own.
        self._lock = threading.Lock()

    # --- one round -------------------------------------------------------------------------

    def run_once(self, now: datetime | None = None) -> bool:
        """Tick every unpaused worker once (ignoring back-off); return whether any did work."""
        now = now or self.clock.now()
        return self._round(now, respect_backoff=False)

    def _round(self, now: datetime, *, respect_backoff: bool) -> bool:
        did_work = False
        for worker in self.workers:
            if self._due(worker.name, now, respect_backoff):
                did_work = self._tick(worker, now) or did_work
        return did_work

    def _due(self, name: str, now: datetime, respect_backoff: bool) -> bool:
        with self._lock:
            stats = self._stats[name]
            if stats.paused:
                return False
            return not (respect_backoff and stats.not_before and now < stats.not_before)

    def _tick(self, worker: Worker, now: datetime) -> bool:
        try:
            # Workers' writes wait behind every request's (store/write_queue.py).
            with background_writes():
                did_work = bool(worker.tick(now))
        except Exception as exc:  # a failing worker must never stop the others
            log.exception("worker %s failed", worker.name)
            self._record_failure(worker.name, exc, now)
            return False
        with self._lock:
            stats = self._stats[worker.name]
            stats.ticks += 1
            stats.work_done += did_work
            stats.consecutive_failures = 0
            stats.not_before = None
        return did_work

    def _record_failure(self, name: str, exc: Exception, now: datetime) -> None:
        with self._lock:
            stats = self._stats[name]
            stats.ticks += 1
            stats.failures += 1
            stats.consecutive_failures += 1
            stats.last_error = f"{type(exc).__name__}: {exc}"[: jobs.MAX_ERROR_CHARS]
            stats.last_error_at = format_ts(now)
            delay = self.backoff.delay(stats.consecutive_failures - 1)
            stats.not_before = now + timedelta(seconds=delay)

    # --- driving rounds ------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Tick until `stop` is set: straight on while there is work, else sleep a while."""
        while not stop.is_set():
            if not self._round(self.clock.now(), respect_backoff=True) and not stop.is_set():
                self.sleep(stop, self._idle_delay(self.clock.now()))

    def _idle_delay(self, now: datetime) -> float:
        # Sleep the idle interval, but wake early when a backed-off worker becomes due.
        with self._lock:
            due = [s.not_before for s in self._stats.values() if s.not_before and not s.paused]
        if not due:
            return self.idle_sleep_s
        return max(0.0, min(self.idle_sleep_s, (min(due) - now).total_seconds()))

    def run_until_idle(self, max_ticks: int = 100_000) -> int:
        """Run rounds until one does no work (or `max_ticks` rounds); return ticks that did work."""
        before = self._work_done()
        for _ in range(max_ticks):
            if not self.run_once(self.clock.now()):
                break
        return self._work_done() - before

    def _work_done(self) -> int:
        with self._lock:
            return sum(s.work_done for s in self._stats.values())

    # --- control and inspection ----------------------------------------------------------------

    def pause(self, name: str | None = None) -> None:
        """Stop ticking one worker, or all of them; a tick already running finishes."""
        self._set_paused(name, True)

    def resume(self, name: str | None = None) -> None:
        self._set_paused(name, False)

    def _set_paused(self, name: str | None, paused: bool) -> None:
        with self._lock:
            if name is not None and name not in self._stats:
                raise KeyError(f"no worker named {name!r}")
            for worker_name, stats in self._stats.items():
                if name is None or worker_name == name:
                    stats.paused = paused

    def state(self) -> dict[str, dict[str, Any]]:
        """Per worker: ticks, work_done, failures, consecutive_failures, last error, paused."""
        with self._lock:
            return {
                name: {
                    "ticks": s.ticks,
                    "work_done": s.work_done,
                    "failures": s.failures,
                    "consecutive_failures": s.consecutive_failures,
                    "last_error": s.last_error,
                    "last_error_at": s.last_error_at,
                    "paused": s.paused,
                }
                for name, s in self._stats.items()
            }


class ReaperWorker:
    """Returns stale leases to the queue, at most once per `interval_s` of the `now` it is given."""

    name = "reaper"

    def __init__(
        self,
        core: CoreStore,
        lease_timeout_ms: int = jobs.DEFAULT_LEASE_TIMEOUT_MS,
        interval_s: float = 60.0,
    ) -> None:
        self.core = core
        self.lease_timeout_ms = lease_timeout_ms
        self.interval = timedelta(seconds=interval_s)
        self.last_run: datetime | None = None
        self.reaped_total = 0

    def tick(self, now: datetime) -> bool:
        if self.last_run is not None and now - self.last_run < self.interval:
            return False
        self.last_run = now
        reaped = self.core.reap_stale_leases(format_ts(now), self.lease_timeout_ms)
        if reaped:
            log.warning("returned %d stale job lease(s) to the queue", reaped)
        self.reaped_total += reaped
        return reaped > 0
