"""Connection-level limits: what a client may hold open before it has said who it is.

uvicorn times out idle keep-alive connections but not slow headers, so a client trickling headers
would hold a socket and parser forever. `GuardedH11` closes a connection whose headers are not
complete within `network.header_timeout_s`. The body has its own deadline (middleware.BodyLimit) and
`network.max_connections` caps concurrent connections (503 past it).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["GuardedH11", "guarded_h11"]

HEADER_TIMEOUT_S = 10.0


class GuardedH11(H11Protocol):
    header_timeout_s = HEADER_TIMEOUT_S
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()  # the headers are in: the route (and BodyLimit) take it from here

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request on this connection has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        in_request = self.cycle is not None and not self.cycle.response_complete
        if not in_request and not self.transport.is_closing():
            self.transport.close()


def guarded_h11(header_timeout_s: float) -> type[GuardedH11]:
    """The protocol class uvicorn instantiates per connection, with this deadline."""
    return type("GuardedH11", (GuardedH11,), {"header_timeout_s": header_timeout_s})
