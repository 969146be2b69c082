"""A worker that runs one job on a schedule: the maintenance run (`autonomous.intervalMs`) and the
skills reconciler (`skills.reconcile_interval_ms`). It owns only the schedule; the run, which
needs the whole app, is handed in as a callable by the composition root, and its result (did it
change anything) is what `tick` reports, so a loop run until idle is not kept busy.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

__all__ = ["RunInterval", "ScheduledWorker"]


class RunInterval:
    """At most one run per `interval`: `due(now)` is True when the last run is that long ago
    (or there was none) and then counts `now` as the run; `last_run = None` makes the next call
    due."""

    def __init__(self, interval: timedelta) -> None:
        self.interval = interval
        self.last_run: datetime | None = None

    def due(self, now: datetime) -> bool:
        if self.last_run is not None and now - self.last_run < self.interval:
            return False
        self.last_run = now  # set first: a failing run waits its interval, not the back-off
        return True


class ScheduledWorker(RunInterval):
    def __init__(
        self, name: str, run: Callable[[datetime], bool], *, interval_ms: int, enabled: bool = True
    ) -> None:
        super().__init__(timedelta(milliseconds=interval_ms))
        self.name = name
        self.run = run
        self.enabled = enabled

    def tick(self, now: datetime) -> bool:
        if not self.enabled or not self.due(now):
            return False
        return bool(self.run(now))
