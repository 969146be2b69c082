"""MCP over streamable HTTP at `/mcp`, inside the daemon's FastAPI app.

`mount_mcp` builds the tool server around the daemon's own SignetApp (in-process: no HTTP hop
back to itself) and adds the SDK's `/mcp` route to the FastAPI router itself, rather than
mounting a sub-application: a mount at `/mcp` answers a POST to `/mcp` with a redirect to
`/mcp/`, and a mount at `/` would take over the daemon's 404s. The route then runs inside the
daemon's middleware (access log, body limit) like every other request.

The SDK's session manager holds a task group for the sessions and must run for as long as the
app serves, so `mount_mcp` wraps the app's lifespan to run it; the server must therefore be
started with its lifespan on. The manager can run only once, so one FastAPI app serves once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer

from signet.app import SignetApp
from signet.mcp.backends import AppBackend, Backend
from signet.mcp.tools import build_server

__all__ = ["MCP_PATH", "mount_mcp"]

MCP_PATH = "/mcp"


def mount_mcp(api: FastAPI, app: SignetApp, backend: Backend | None = None) -> MCPServer:
    """Serve MCP at /mcp on `api` with tools over `backend` (default: `app` in-process);
    returns the MCP server."""
    server = build_server(backend or AppBackend(app))
    # host: the SDK turns on DNS-rebinding protection (Host and Origin checks) for a loopback
    # bind, and leaves it off where the operator chose to listen on other interfaces.
    sub = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=app.config.bind,
        # Sessions a client never closes are reaped after minutes, not the SDK's 30.
        session_idle_timeout=app.config.auth.mcp_session_idle_s,
    )
    api.router.routes.extend(sub.routes)
    _run_with_lifespan(api, server)
    api.state.mcp = server
    return server


def _run_with_lifespan(api: FastAPI, server: MCPServer) -> None:
    outer = api.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        async with server.session_manager.run():
            async with outer(asgi_app) as state:
                yield state

    api.router.lifespan_context = lifespan
