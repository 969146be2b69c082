"""The pipeline's workers, ticking in one background thread of the daemon.

Workers only ever run inside the daemon (docs/architecture.md): `run` starts them once the app is
open and stops them before the store is checkpointed and closed. The loop itself (back-off,
a failing tick logged and skipped) is `signet.workers.loop.WorkerLoop`; this module owns its
thread and its controls:

- concurrency is bounded by construction: one thread runs one tick at a time, so at most one
  job per worker type is in flight and LLM and embedding calls never run on the event loop;
- `pause`/`resume` stop and restart ticking (a tick already running finishes);
- `nudge` wakes the loop from its idle sleep at once (the loop sleeps on an event of ours
  rather than on the stop event, so both stopping and nudging cut the sleep short);
- `stop` is the graceful shutdown: stop leasing (pause every worker, so even the rest of the
  current round leases nothing), give a running tick `timeout_s` to finish, then hand every job
  still leased back to pending with its attempt (`jobs.release_leases`): a job interrupted by a
  shutdown did not fail, and must not wait for the stale-lease reaper of the next start.

The thread is a daemon thread, so a tick stuck in a slow LLM call can never keep the process
alive; if it finishes after its lease was released, `complete_job` raises LostLease and its
transaction rolls back.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from signet.app import SignetApp
from signet.store import jobs
from signet.types import utc_now
from signet.workers.loop import WorkerLoop

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0


class BackgroundWorkers:
    def __init__(self, app: SignetApp) -> None:
        self.app = app
        poll_s = app.config.pipeline.worker_poll_ms / 1000
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.loop = WorkerLoop(app.workers(), idle_sleep_s=poll_s, sleep=self._sleep)
        self._thread = threading.Thread(
            target=self.loop.run, args=(self._stop,), name="signet-workers", daemon=True
        )
        self._paused = False

    def start(self) -> None:
        self._thread.start()

    def _sleep(self, _stop: threading.Event, seconds: float) -> None:
        self._wake.wait(seconds)
        self._wake.clear()

    # --- controls ----------------------------------------------------------------------------

    def pause(self) -> None:
        self._paused = True
        self.loop.pause()

    def resume(self) -> None:
        self._paused = False
        self.loop.resume()
        self._wake.set()

    def nudge(self) -> None:
        """Wake the loop now: jobs enqueued a moment ago are picked up without the idle wait."""
        self._wake.set()

    def status(self) -> dict[str, Any]:
        return {
            "running": self._thread.is_alive() and not self._stop.is_set(),
            "paused": self._paused,
            "poll_ms": self.app.config.pipeline.worker_poll_ms,
            "concurrency": 1,
            "workers": self.loop.state(),
        }

    # --- shutdown ------------------------------------------------------------------------------

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int:
        """Stop leasing, let a running tick finish (up to `timeout_s`), release what is still
        leased; returns how many jobs were released."""
        self.loop.pause()
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.warning("a worker tick still runs after %.0f s; releasing its job", timeout_s)
        return self._release_leases()

    def _release_leases(self) -> int:
        try:
            with self.app.store.write_tx() as conn:
                released = jobs.release_leases(conn, utc_now())
        except Exception:  # noqa: BLE001 - shutdown goes on; the reaper recovers them later
            log.exception("could not release leased jobs at shutdown")
            return 0
        if released:
            log.info("released %d leased job(s) back to the queue", released)
        return released
