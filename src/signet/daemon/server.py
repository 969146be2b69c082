"""The FastAPI app of the daemon. `create_app(app)` wraps an opened SignetApp and opens nothing, so
tests serve one on a temporary workspace; the real start is daemon/startup.py.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import Depends, FastAPI

from signet import dashboard
from signet.app import SignetApp
from signet.daemon import (
    errors,
    routes_config,
    routes_connectors,
    routes_dashboard,
    routes_docs,
    routes_documents,
    routes_feedback,
    routes_hooks,
    routes_knowledge,
    routes_lineage,
    routes_memory,
    routes_memory_batch,
    routes_metrics,
    routes_pipeline,
    routes_portable,
    routes_projection,
    routes_repair,
    routes_secrets,
    routes_sessions,
    routes_skills,
    routes_system,
    routes_telemetry,
    security,
)
from signet.daemon import openapi as openapi_doc
from signet.daemon.dependencies import known_query_only
from signet.daemon.mcp_sessions import McpSessionCap
from signet.daemon.middleware import AccessLog, BodyLimit
from signet.daemon.request_telemetry import RequestTelemetry
from signet.mcp.http import mount_mcp
from signet.types import utc_now
from signet.version import __version__


def create_app(app: SignetApp, *, openapi: bool = True, lazy_mcp: bool = False) -> FastAPI:
    """The API over `app`. `openapi` False defers building the OpenAPI document (the largest part of
    the build) until the API serves; `lazy_mcp` defers the MCP server to the first /mcp request."""
    api = FastAPI(
        title="Signet",
        version=__version__,
        description="Local-first long-term memory for AI agents.",
        docs_url=None,  # the Swagger page loads scripts from a CDN: routes_docs serves /docs
        redoc_url=None,
        dependencies=[Depends(known_query_only)],  # an unknown query parameter is a 400
        # FastAPI's OpenTelemetry hooks are off: the daemon exports nothing, and asking
        # OpenTelemetry on every request whether a provider was configured (environment
        # lookups) cost ~10% of the event loop's CPU under load. Our own per-route latency and
        # errors are request_telemetry.RequestTelemetry's.
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    api.state.signet = app
    api.state.started_at = time.time()
    api.state.started_at_iso = utc_now()
    errors.install(api)
    api.include_router(routes_system.router)
    api.include_router(routes_metrics.router)  # /metrics: the telemetry for Prometheus
    api.include_router(routes_memory_batch.router)  # before /api/memory/{memory_id}
    api.include_router(routes_memory.router)
    api.include_router(routes_feedback.router)
    api.include_router(routes_knowledge.router)
    api.include_router(routes_sessions.router)  # transcripts, sessions (signet/sessions)
    api.include_router(routes_lineage.router)  # threads, lineage, artifacts
    api.include_router(routes_hooks.router)  # harness hooks (signet/injection)
    for module in (routes_pipeline, routes_repair, routes_telemetry, routes_config, routes_projection,
                   routes_documents, routes_connectors, routes_skills, routes_portable):
        api.include_router(module.router)
    api.include_router(routes_secrets.router)
    api.include_router(routes_docs.router)  # /docs: the API reference page, no CDN
    api.include_router(routes_dashboard.router)  # /app/login before the page shell's /app/...
    dashboard.install(api)  # the web app's shell and static files (signet/dashboard)
    mount_mcp(api, app, lambda: _scoped_backend(app), guard=lambda server: _guard(api, server),
              lazy=lazy_mcp)  # /mcp; its session manager starts on the first MCP request
    api.add_middleware(McpSessionCap, api=api, per_token=app.config.auth.mcp_sessions_per_token,
                       idle_s=app.config.auth.mcp_session_idle_s)
    # Inside the guards: a body is read only once Host and token have passed, so a caller
    # without a token cannot make the daemon buffer a megabyte per connection.
    api.add_middleware(BodyLimit)
    security.install(api, app)  # tokens, permissions, Host/Origin guards (docs/security.md)
    api.add_middleware(RequestTelemetry, telemetry=app.telemetry)  # latency and errors per route
    api.add_middleware(AccessLog)  # added last = outermost: it sees every response and error
    openapi_doc.install(api, app.config)  # the document states the configured bounds
    if openapi:
        api.openapi()  # built now, from this configuration: a bad schema fails the start
    return api


def _scoped_backend(app: SignetApp) -> Any:
    from signet.daemon.mcp_guard import ScopedAppBackend  # the MCP SDK: imported when needed

    return ScopedAppBackend(app)


def _guard(api: FastAPI, server: Any) -> None:
    """Every MCP message checked against the calling token (daemon/mcp_guard.py), with the
    rate limiter security.install sets up."""
    from signet.daemon.mcp_guard import guard_mcp

    guard_mcp(server, lambda: getattr(api.state, "rate_limiter", None))
