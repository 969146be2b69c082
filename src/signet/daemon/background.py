"""The pipeline's workers, ticking in the daemon's background threads.

The embed worker has a thread of its own, so a new memory's vector never waits behind an LLM call;
the other workers and the spool import share one. `stop` stops leasing, gives a running tick
`timeout_s`, then hands every job still leased back to pending: a shutdown is not a failure, and a
tick finishing after that rolls back.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from signet.app import SignetApp
from signet.clock import Clock
from signet.daemon.spool_import import spool_worker
from signet.workers.loop import Worker, WorkerLoop

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0


EMBED = "embed"


class BackgroundWorkers:
    def __init__(self, app: SignetApp) -> None:
        self.app = app
        poll_s = app.config.pipeline.worker_poll_ms / 1000
        self._stop = threading.Event()
        # The spool import is the daemon's own (hooks spool while it is down), so it runs
        # here, not in `signet pipeline run`.
        workers = [*app.workers(), spool_worker(app)]
        groups = [[w for w in workers if w.name != EMBED], [w for w in workers if w.name == EMBED]]
        self._lanes = [_Lane(group, poll_s, self._stop, app.clock) for group in groups if group]
        self._paused = False

    def start(self) -> None:
        for lane in self._lanes:
            lane.thread.start()

    # --- controls ----------------------------------------------------------------------------

    def pause(self) -> None:
        self._paused = True
        for lane in self._lanes:
            lane.loop.pause()

    def resume(self) -> None:
        self._paused = False
        for lane in self._lanes:
            lane.loop.resume()
            lane.wake.set()

    def nudge(self) -> None:
        """Wake the loops now: jobs enqueued a moment ago are picked up without the idle wait."""
        for lane in self._lanes:
            lane.wake.set()

    def nudge_embed(self) -> None:
        """Wake the embed worker now: a memory was written without its vector."""
        for lane in self._lanes:
            if any(w.name == EMBED for w in lane.loop.workers):
                lane.wake.set()

    def status(self) -> dict[str, Any]:
        states: dict[str, Any] = {}
        for lane in self._lanes:
            states.update(lane.loop.state())
        return {
            "running": any(lane.thread.is_alive() for lane in self._lanes)
            and not self._stop.is_set(),
            "paused": self._paused,
            "poll_ms": self.app.config.pipeline.worker_poll_ms,
            "concurrency": len(self._lanes),
            "workers": states,
        }

    # --- shutdown ------------------------------------------------------------------------------

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int:
        """Stop leasing, let a running tick finish (up to `timeout_s`), release what is still
        leased; returns how many jobs were released."""
        for lane in self._lanes:
            lane.loop.pause()
        self._stop.set()
        deadline = time.monotonic() + timeout_s
        for lane in self._lanes:
            lane.wake.set()
            if lane.thread.is_alive():
                lane.thread.join(max(0.0, deadline - time.monotonic()))
            if lane.thread.is_alive():
                log.warning("a %s tick still runs after %.0f s; releasing its job",
                            lane.thread.name, timeout_s)
        return self._release_leases()

    def _release_leases(self) -> int:
        try:
            released = self.app.release_worker_leases()
        except Exception:  # shutdown goes on; the reaper recovers them later
            log.exception("could not release leased jobs at shutdown")
            return 0
        if released:
            log.info("released %d leased job(s) back to the queue", released)
        return released


class _Lane:
    """One worker loop on its own daemon thread, sleeping on its own wake event."""

    def __init__(
        self, workers: list[Worker], poll_s: float, stop: threading.Event, clock: Clock
    ) -> None:
        self.wake = threading.Event()
        self.loop = WorkerLoop(workers, idle_sleep_s=poll_s, clock=clock, sleep=self._sleep)
        name = "signet-embed" if [w.name for w in workers] == [EMBED] else "signet-workers"
        self.thread = threading.Thread(target=self.loop.run, args=(stop,), name=name, daemon=True)

    def _sleep(self, _stop: threading.Event, seconds: float) -> None:
        self.wake.wait(seconds)
        self.wake.clear()
