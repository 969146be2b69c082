"""The writer's queue: whose write transaction runs next, in arrival order, in two lanes.

With a plain lock a worker that commits and asks again can win over and over while a request
waits. Here FOREGROUND writes (requests') go before BACKGROUND ones (workers, flushes), except a
background write that has waited `background_max_wait_s`, so neither starves. A nested
`write_tx()` is a savepoint and does not queue; `stats()` feeds the daemon's /metrics.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["BACKGROUND", "FOREGROUND", "LANES", "WriteQueue", "background_writes"]

FOREGROUND = 0
BACKGROUND = 1
LANES = ("foreground", "background")
# How long a background write may be passed over by requests' writes before it goes next.
BACKGROUND_MAX_WAIT_S = 0.25

_lane: ContextVar[int] = ContextVar("signet_write_lane", default=FOREGROUND)


@contextmanager
def background_writes() -> Iterator[None]:
    """Write transactions this thread opens inside queue behind every waiting foreground one."""
    token = _lane.set(BACKGROUND)
    try:
        yield
    finally:
        _lane.reset(token)


class _Ticket:
    __slots__ = ("granted", "lane", "since", "thread")

    def __init__(self, thread: int, lane: int) -> None:
        self.thread = thread
        self.lane = lane
        self.granted = threading.Event()
        self.since = time.monotonic()


class WriteQueue:
    """One writer slot, handed over first come, first served within a lane, foreground first."""

    def __init__(self, background_max_wait_s: float | None = BACKGROUND_MAX_WAIT_S) -> None:
        # None: strict priority (a background write waits while any request's write does).
        self.background_max_wait_s = background_max_wait_s
        self._mutex = threading.Lock()
        self._owner: int | None = None
        self._depth = 0
        # Invariant: while nobody holds the slot, nobody waits (release hands it over).
        self._lanes: tuple[deque[_Ticket], deque[_Ticket]] = (deque(), deque())
        # Per lane: [turns, seconds waited, seconds held]; the turn running: its lane, start.
        self._counts = [[0, 0.0, 0.0], [0, 0.0, 0.0]]
        self._held: tuple[int, float] = (FOREGROUND, 0.0)

    def acquire(self) -> None:
        """Wait for this thread's turn (at once when free or already held by this thread)."""
        me = threading.get_ident()
        with self._mutex:
            if self._owner == me:
                self._depth += 1
                return
            if self._owner is None:
                self._owner, self._depth = me, 1
                self._start(_lane.get(), time.monotonic())
                return
            ticket = _Ticket(me, _lane.get())
            lane = self._lanes[ticket.lane]
            lane.append(ticket)
        try:
            ticket.granted.wait()
        except BaseException:
            self._abandon(ticket, lane)
            raise

    def release(self) -> None:
        with self._mutex:
            if self._owner != threading.get_ident():
                raise RuntimeError("the write turn is released by a thread that does not hold it")
            self._depth -= 1
            if self._depth == 0:
                self._end_hold()
                self._hand_over()

    @contextmanager
    def turn(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def waiting(self) -> tuple[int, int]:
        """How many threads wait, (foreground, background)."""
        with self._mutex:
            return len(self._lanes[FOREGROUND]), len(self._lanes[BACKGROUND])

    def stats(self) -> dict[str, dict[str, float]]:
        """Per lane since the queue was made: `turns` granted, `wait_s` spent waiting for
        them, `hold_s` spent holding the slot (the turn running counts once released)."""
        with self._mutex:
            return {
                name: {"turns": turns, "wait_s": waited, "hold_s": held}
                for name, (turns, waited, held) in zip(LANES, self._counts, strict=True)
            }

    def _end_hold(self) -> None:
        lane, began = self._held
        self._counts[lane][2] += time.monotonic() - began

    def _start(self, lane: int, now: float, waited: float = 0.0) -> None:
        counts = self._counts[lane]
        counts[0] += 1
        counts[1] += waited
        self._held = (lane, now)

    def _hand_over(self) -> None:
        for lane in self._order():
            if lane:
                ticket = lane.popleft()
                self._owner, self._depth = ticket.thread, 1
                now = time.monotonic()
                self._start(ticket.lane, now, now - ticket.since)
                ticket.granted.set()
                return
        self._owner = None

    def _order(self) -> tuple[deque[_Ticket], ...]:
        """The lanes in the order they are served now: foreground first, unless the oldest
        background write has waited its bound."""
        foreground, background = self._lanes
        bound = self.background_max_wait_s
        if bound is not None and background and (
            time.monotonic() - background[0].since >= bound
        ):
            return background, foreground
        return self._lanes

    def _abandon(self, ticket: _Ticket, lane: deque[_Ticket]) -> None:
        """A waiter interrupted (KeyboardInterrupt in the main thread) leaves the queue; if
        its turn had already come, it passes the turn on, so nobody waits for it forever."""
        with self._mutex:
            if ticket in lane:
                lane.remove(ticket)
            elif self._owner == ticket.thread:
                self._end_hold()
                self._hand_over()
