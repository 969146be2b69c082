"""The FastAPI app and the uvicorn server that runs it.

`create_app(app)` wraps an already opened SignetApp: it opens nothing itself, so tests serve a
SignetApp built on a temporary workspace. `run(config)` is the composition for the real
daemon: open the workspace's SignetApp, start the pipeline's workers (daemon/background.py),
serve on a socket bound beforehand (so a busy port is a clear error before anything else
happens), and on shutdown stop the workers, checkpoint the WAL and close.

Shutdown: uvicorn turns SIGTERM/SIGINT into a graceful stop (in-flight requests finish), then
re-raises the signal with the previous handler in place. `run` installs a handler that raises
SystemExit there, so the `finally` that checkpoints and closes the store always runs.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import uvicorn
from fastapi import Depends, FastAPI

from signet import dashboard
from signet.app import SignetApp
from signet.config import Config
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
from signet.daemon.background import BackgroundWorkers
from signet.daemon.connections import guarded_h11
from signet.daemon.dependencies import known_query_only
from signet.daemon.mcp_guard import ScopedAppBackend
from signet.daemon.mcp_sessions import McpSessionCap
from signet.daemon.middleware import AccessLog, BodyLimit
from signet.daemon.network import check_network_mode
from signet.daemon.request_telemetry import RequestTelemetry
from signet.daemon.tokens import refuse_open_bind
from signet.errors import Conflict, SignetError, StoreError
from signet.mcp.http import mount_mcp
from signet.store.connection import DatabaseError
from signet.types import utc_now
from signet.version import __version__

log = logging.getLogger(__name__)

GRACEFUL_SHUTDOWN_S = 5


def create_app(app: SignetApp) -> FastAPI:
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
    mount_mcp(api, app, ScopedAppBackend(app))  # /mcp; its session manager runs in the lifespan
    api.add_middleware(McpSessionCap, api=api, per_token=app.config.auth.mcp_sessions_per_token,
                       idle_s=app.config.auth.mcp_session_idle_s)
    # Inside the guards: a body is read only once Host and token have passed, so a caller
    # without a token cannot make the daemon buffer a megabyte per connection.
    api.add_middleware(BodyLimit)
    security.install(api, app)  # tokens, permissions, Host/Origin guards (docs/security.md)
    api.add_middleware(RequestTelemetry, telemetry=app.telemetry)  # latency and errors per route
    api.add_middleware(AccessLog)  # added last = outermost: it sees every response and error
    openapi_doc.install(api, app.config)  # the document states the configured bounds
    api.openapi()  # built now, from this configuration: a bad schema fails the start
    return api


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port; Conflict naming the port when it is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
    # and without it every keep-alive response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise Conflict(
                f"port {port} on {host} is already in use (another signet daemon or program);"
                " stop it or choose another port with SIGNET_PORT",
                code="port_in_use",
            ) from exc
        raise SignetError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.set_inheritable(True)
    return sock


def make_server(api: FastAPI) -> uvicorn.Server:
    network = api.state.signet.config.network
    return uvicorn.Server(
        uvicorn.Config(
            api,
            log_config=None,  # our logging (daemon/logfile.py) is already configured
            access_log=False,  # middleware.AccessLog writes the request lines
            lifespan="on",  # runs the MCP session manager (see signet.mcp.http)
            server_header=False,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
            # Slow or partial request headers are timed out (connections.py).
            http=guarded_h11(network.header_timeout_s),
            limit_concurrency=network.max_connections,
        )
    )


def run(
    config: Config, sock: socket.socket | None = None, ready: Callable[[], None] | None = None
) -> None:
    """Serve the workspace's memory until SIGTERM/SIGINT. Raises SignetError (StoreError for
    an unusable database, Conflict for a busy port) before serving when it cannot start;
    `ready` is called once everything is open, just before serving."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _exit_on_signals()
    refuse_open_bind(config)
    check_network_mode(config)  # network.mode: loopback, the tailnet or the LAN
    sock = sock or bind_socket(config.bind, config.port)
    try:
        if config.store.backend == "sqlite":
            refuse_read_only(config.db_path)
        app = SignetApp.open(config)
        workers = BackgroundWorkers(app)
        app.memory.on_deferred = workers.nudge_embed  # a write without its vector wakes it
        try:
            api = create_app(app)
            security.prepare(config, api)
            api.state.workers = workers  # the pipeline routes pause, resume and nudge it
            workers.start()
            log.info("serving", extra={"port": config.port, "bind": config.bind})
            if ready is not None:
                ready()
            make_server(api).run(sockets=[sock])
        finally:
            workers.stop()
            _close(app)
    finally:
        sock.close()


def refuse_read_only(db_path: Path) -> None:
    """StoreError when the database file, or the directory it lives (or will live) in, cannot
    be written.

    SQLite opens a read-only file without complaint and fails only at the first write, so the
    daemon would start and then refuse every remember. Checked before opening, so a refused
    start leaves no -wal or -shm file behind either."""
    if db_path.exists() and not os.access(db_path, os.W_OK):
        raise StoreError(f"cannot open database {db_path}: the file is read-only")
    folder = next(p for p in (db_path.parent, *db_path.parents) if p.exists())
    if not os.access(folder, os.W_OK):
        raise StoreError(
            f"cannot open database {db_path}: {folder} is read-only (SQLite writes the -wal"
            " and -shm files beside the database)"
        )


def _close(app: SignetApp) -> None:
    try:
        app.checkpoint()
    except (DatabaseError, SignetError) as exc:
        log.warning("WAL checkpoint at shutdown failed: %s", exc)
    app.close()
    log.info("stopped")


def _exit_on_signals() -> None:
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(0)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
