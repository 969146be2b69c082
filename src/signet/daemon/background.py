"""The pipeline's workers, ticking in one background thread of the daemon.

Workers only ever run inside the daemon (DESIGN section 1): `run` starts them once the app is
open and stops them before the store is checkpointed and closed. The loop itself (back-off,
a failing tick logged and skipped) is `signet.workers.loop.WorkerLoop`; this module only owns
its thread. Stopping sets an event the loop checks between ticks and while it sleeps; a tick
in the middle of a slow LLM call is given `timeout_s` to finish, and the thread is a daemon
thread, so it can never keep the process alive.
"""

from __future__ import annotations

import logging
import threading

from signet.app import SignetApp
from signet.workers.loop import WorkerLoop

log = logging.getLogger(__name__)


class BackgroundWorkers:
    def __init__(self, app: SignetApp) -> None:
        poll_s = app.config.pipeline.worker_poll_ms / 1000
        self.loop = WorkerLoop(app.workers(), idle_sleep_s=poll_s)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self.loop.run, args=(self._stop,), name="signet-workers", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 10) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.warning("a worker tick still runs after %.0f s; closing anyway", timeout_s)
