"""The scheduled maintenance worker (seed 002: `autonomous.enabled`, `maintenanceMode`).

It owns only the schedule: when `autonomous.enabled`, at most one run per
`autonomous.intervalMs` of the `now` it is given, in the configured mode. What a run checks and
repairs lives above the workers (signet/maintenance.py, which needs the whole app: store,
embedder, config), so the composition root hands the worker that run as a callable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from signet.config import AutonomousConfig

log = logging.getLogger(__name__)

Run = Callable[[datetime, bool], Any]  # (now, execute) -> the run's report


class MaintenanceWorker:
    name = "maintenance"

    def __init__(self, run: Run, cfg: AutonomousConfig) -> None:
        self.run = run
        self.cfg = cfg
        self.interval = timedelta(milliseconds=cfg.interval_ms)
        self.last_run: datetime | None = None

    def tick(self, now: datetime) -> bool:
        if not self.cfg.enabled:
            return False
        if self.last_run is not None and now - self.last_run < self.interval:
            return False
        self.last_run = now  # set first: a failing run waits its interval, not the back-off
        self.run(now, self.cfg.maintenance_mode == "execute")
        return True
