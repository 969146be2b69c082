"""Time as an input: one `Clock` chosen at the composition root and passed down, so a test or a
replaying benchmark sets the time instead of sleeping. `SystemClock` is the real one;
`ManualClock` stands still until moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

from signet.types import format_ts

__all__ = ["Clock", "ManualClock", "SystemClock", "stamp"]


class Clock(Protocol):
    """The current time, timezone-aware UTC."""

    def now(self) -> datetime: ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


def _epoch() -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class ManualClock:
    """A clock that moves only when told: `advance(days=31)` is a month later."""

    at: datetime = field(default_factory=_epoch)

    def now(self) -> datetime:
        return self.at

    def advance(self, delta: timedelta | None = None, **parts: float) -> datetime:
        """Move forward by `delta` or by `timedelta(**parts)`; returns the new time."""
        self.at = self.at + (delta if delta is not None else timedelta(**parts))
        return self.at


def stamp(clock: Clock) -> str:
    """The clock's time as the store's timestamp string (ISO-8601 UTC, milliseconds)."""
    return format_ts(clock.now())
