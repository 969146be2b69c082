"""A worker that runs one job on a schedule: the maintenance run (`autonomous.intervalMs`) and
the skills reconciler (`skills.reconcile_interval_ms`).

It owns only the schedule: when enabled, at most one run per interval of the `now` it is given.
The run returns whether it changed anything, which is what `tick` reports as work done (so a
loop run until idle is not kept busy by a run that found nothing to do).
What a run does lives above the workers (signet/maintenance.py, signet/skills.py need the whole
app: store, embedder, config), so the composition root hands the worker that run as a callable.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

__all__ = ["ScheduledWorker"]


class ScheduledWorker:
    def __init__(
        self, name: str, run: Callable[[datetime], bool], *, interval_ms: int, enabled: bool = True
    ) -> None:
        self.name = name
        self.run = run
        self.interval = timedelta(milliseconds=interval_ms)
        self.enabled = enabled
        self.last_run: datetime | None = None

    def tick(self, now: datetime) -> bool:
        if not self.enabled:
            return False
        if self.last_run is not None and now - self.last_run < self.interval:
            return False
        self.last_run = now  # set first: a failing run waits its interval, not the back-off
        return bool(self.run(now))
