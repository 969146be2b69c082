"""MCP over streamable HTTP at `/mcp`, inside the daemon's FastAPI app. `mount_mcp` adds a route
rather than a mount (a mount redirects `/mcp` to `/mcp/`), so it runs inside the daemon's
middleware and guards, calling the daemon's SignetApp in-process. With `lazy` the server is built
on the first `/mcp` request, as the SDK's import is a large part of the start. The SDK's session
manager runs once, within the app's lifespan.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from fastapi import FastAPI
from starlette.routing import Route

from signet.app import SignetApp

if TYPE_CHECKING:  # the SDK is imported when the server is built
    from mcp.server.mcpserver import MCPServer

    from signet.mcp.backends import Backend

__all__ = ["MCP_PATH", "mount_mcp"]

MCP_PATH = "/mcp"


def mount_mcp(
    api: FastAPI, app: SignetApp, backend: Callable[[], Backend] | None = None, *,
    guard: Callable[[MCPServer], None] | None = None, lazy: bool = False,
) -> None:
    """Serve MCP at /mcp on `api` with tools over `backend()` (default: `app` in-process),
    `guard` applied to the server once built; `api.state.mcp` is the MCP server once built
    (at once unless `lazy`)."""
    endpoint = _McpEndpoint(api, app, backend, guard)
    api.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
    _stop_with_lifespan(api, endpoint)
    if not lazy:
        endpoint.build()


class _McpEndpoint:
    """The ASGI app at /mcp: builds the server when first needed, starts its session manager
    on the first request, then hands every request to the SDK's own endpoint."""

    def __init__(self, api: FastAPI, app: SignetApp, backend: Callable[[], Backend] | None,
                 guard: Callable[[MCPServer], None] | None) -> None:
        self.api, self.app, self.backend, self.guard = api, app, backend, guard
        self.server: MCPServer | None = None
        self._inner: Any = None
        self._starting: asyncio.Lock | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def build(self) -> None:
        from signet.mcp.backends import AppBackend
        from signet.mcp.tools import build_server

        if self.server is not None:
            return
        server = build_server(self.backend() if self.backend else AppBackend(self.app))
        if self.guard is not None:
            self.guard(server)
        # host: the SDK turns on DNS-rebinding protection (Host and Origin checks) for a
        # loopback bind, and leaves it off where the operator chose to listen on others.
        sub = server.streamable_http_app(
            streamable_http_path=MCP_PATH, host=self.app.config.bind,
            # Sessions a client never closes are reaped after minutes, not the SDK's 30.
            session_idle_timeout=self.app.config.auth.mcp_session_idle_s,
        )
        self._inner = next(r.app for r in sub.routes
                           if isinstance(r, Route) and r.path == MCP_PATH)
        self.server = server
        self.api.state.mcp = server

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self._task is None:
            if self._starting is None:
                self._starting = asyncio.Lock()
            async with self._starting:
                if self._task is None:
                    await self._start()
        await self._inner(scope, receive, send)

    async def _start(self) -> None:
        if self.server is None:
            await anyio.to_thread.run_sync(self.build)
        assert self.server is not None
        manager, running = self.server.session_manager, asyncio.Event()
        self._stop = stop = asyncio.Event()

        async def serve() -> None:
            async with manager.run():
                running.set()
                await stop.wait()

        self._task = asyncio.create_task(serve())
        waiting = asyncio.create_task(running.wait())
        await asyncio.wait({self._task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if not running.is_set():
            waiting.cancel()
            self._task.result()  # the manager failed to start: its error

    async def stop(self) -> None:
        if self._task is not None and self._stop is not None:
            self._stop.set()
            await self._task


def _stop_with_lifespan(api: FastAPI, endpoint: _McpEndpoint) -> None:
    outer = api.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        try:
            async with outer(asgi_app) as state:
                yield state
        finally:
            await endpoint.stop()

    api.router.lifespan_context = lifespan
