"""The daemon's start: the store open and `/health` answering first, the rest behind it.

`run(config)` binds, opens the app and ensures the install token first, so whatever can refuse a
start does so before anything answers. `StartingGate` then answers `/health` while a thread builds
the API, MCP server, dashboard and workers; other requests wait rather than being refused. FastAPI
is not imported here (it takes seconds). A SIGTERM ends in SystemExit, so the workers stop and the
store closes.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import uvicorn

from signet.config import Config
from signet.daemon.connections import guarded_h11
from signet.daemon.guards import HostGuard
from signet.daemon.network import check_network_mode, own_hosts
from signet.daemon.tokens import TokenAuthority, ensure_install_token, refuse_open_bind
from signet.errors import Conflict, SignetError, StoreError
from signet.version import __version__

if TYPE_CHECKING:
    from signet.app import SignetApp
    from signet.daemon.background import BackgroundWorkers

log = logging.getLogger(__name__)

GRACEFUL_SHUTDOWN_S = 5

ASGIApp = Callable[..., Any]


def run(
    config: Config, sock: socket.socket | None = None, ready: Callable[[], None] | None = None
) -> None:
    """Serve the workspace's memory until SIGTERM/SIGINT. Raises SignetError (StoreError for
    an unusable database, Conflict for a busy port) when it cannot start; `ready` is called
    once the store is open, just before `/health` answers."""
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
        from signet.app import SignetApp  # the store's code; the API's is the builder's

        app = SignetApp.open(config)
        gate = StartingGate(config)
        try:
            # Clients read the token file once /health answers: it is valid before that.
            ensure_install_token(config, TokenAuthority.for_core(app.token_authority_store(),
                                                                 app.clock))
            builder = threading.Thread(target=gate.build, args=(app,), name="signet-start",
                                       daemon=True)
            server = make_server(gate, config)
            gate.on_failure = lambda: setattr(server, "should_exit", True)
            log.info("serving", extra={"port": config.port, "bind": config.bind})
            if ready is not None:
                ready()
            builder.start()
            server.run(sockets=[sock])
            builder.join()
            if gate.failure is not None:
                raise gate.failure
        finally:
            gate.stop_workers()
            _close(app)
    finally:
        sock.close()


class StartingGate:
    """The ASGI app uvicorn serves: `/health` at once, everything else by the full API once
    `build` has made it (requests that come earlier wait for it)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.api: ASGIApp | None = None
        self.failure: BaseException | None = None
        self.workers: BackgroundWorkers | None = None
        self.on_failure: Callable[[], None] = lambda: None
        self._built = threading.Event()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._built_here: asyncio.Event | None = None  # _built, seen from the event loop
        self._made: ASGIApp | None = None
        self._ready: asyncio.Event | None = None
        self._health = HostGuard(_starting_health, port=config.port,  # type: ignore[arg-type]
                                 allowed_hosts=own_hosts(config))
        self._inner_shutdown: Callable[[], Any] | None = None

    # --- the builder thread --------------------------------------------------------------------

    def build(self, app: SignetApp) -> None:
        started = time.perf_counter()
        try:
            from signet.daemon import server  # FastAPI, the routes, MCP, the dashboard
            from signet.daemon.background import BackgroundWorkers

            workers = BackgroundWorkers(app)
            app.memory.on_deferred = workers.nudge_embed  # a write without its vector wakes it
            api = server.create_app(app, openapi=False, lazy_mcp=True)
            api.state.workers = workers  # the pipeline routes pause, resume and nudge it
            self.workers = workers
            workers.start()
            self._made = api
            log.info("api ready", extra={"build_ms": round((time.perf_counter() - started) * 1000)})
        except BaseException as exc:  # reported by run() as a failed start
            self._failed(exc, "the daemon's API could not be built")
        finally:
            with self._lock:
                self._built.set()
                loop, built_here = self._loop, self._built_here
            if loop is not None and built_here is not None:
                try:
                    loop.call_soon_threadsafe(built_here.set)
                except RuntimeError:  # the server has stopped already
                    pass
        made = self._made
        if made is not None:
            # The OpenAPI document (/openapi.json, /docs, the 405s' Allow), built once the API
            # serves: a schema this configuration cannot build still stops the daemon.
            try:
                made.openapi()  # type: ignore[attr-defined]  # a FastAPI app
            except BaseException as exc:  # reported by run() as a failed start
                self._failed(exc, "the daemon's OpenAPI document could not be built")
                self.on_failure()

    def _failed(self, exc: BaseException, what: str) -> None:
        log.exception(what)
        self.failure = exc if isinstance(exc, SignetError) else SignetError(
            f"the daemon could not start: {exc}", code="daemon_start_failed")

    def stop_workers(self) -> None:
        self._built.wait()
        if self.workers is not None:
            self.workers.stop()

    # --- ASGI ----------------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        api = self.api
        if api is None:
            if scope["type"] == "http" and scope["path"] == "/health":
                await self._health(scope, receive, send)
                return
            assert self._ready is not None  # made at lifespan startup, before any connection
            await self._ready.wait()
            api = self.api
            if api is None:
                await _answer(send, 503, {"error": "the daemon failed to start",
                                          "code": "daemon_start_failed"})
                return
        await api(scope, receive, send)

    async def _lifespan(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()  # lifespan.startup
        self._ready = asyncio.Event()
        opening = asyncio.create_task(self._open(scope))
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
        if not opening.done():
            opening.cancel()
        if self._inner_shutdown is not None:
            await self._inner_shutdown()
        await send({"type": "lifespan.shutdown.complete"})

    async def _open(self, scope: dict[str, Any]) -> None:
        """Once built, the API's own lifespan (the MCP session manager) runs, then it serves."""
        built_here = asyncio.Event()
        with self._lock:
            self._loop, self._built_here = asyncio.get_running_loop(), built_here
            if self._built.is_set():
                built_here.set()
        await built_here.wait()  # no thread waits for it: a stop before the build is clean
        api = self._made
        if api is not None:
            try:
                await self._start_inner(api, scope)
                self.api = api
            except Exception as exc:
                log.exception("the API's lifespan did not start")
                self.failure = SignetError(f"the daemon could not start: {exc}",
                                           code="daemon_start_failed")
        assert self._ready is not None
        self._ready.set()
        if self.api is None:
            self.on_failure()

    async def _start_inner(self, api: ASGIApp, scope: dict[str, Any]) -> None:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        await inbox.put({"type": "lifespan.startup"})
        task = asyncio.create_task(api(dict(scope), inbox.get, outbox.put))
        reply = await outbox.get()
        if reply["type"] != "lifespan.startup.complete":
            raise RuntimeError(reply.get("message") or reply["type"])

        async def shutdown() -> None:
            await inbox.put({"type": "lifespan.shutdown"})
            await outbox.get()
            await task

        self._inner_shutdown = shutdown


async def _starting_health(scope: dict[str, Any], receive: Any, send: Any) -> None:
    # routes_system's /health answer (the process is up, its store is open) and `starting`:
    # a client that needs the whole API polls until it is gone, without a request of its own.
    await _answer(send, 200, {"status": "ok", "version": __version__, "pid": os.getpid(),
                              "starting": True})


async def _answer(send: Any, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


def make_server(app: ASGIApp, config: Config | None = None) -> uvicorn.Server:
    """A uvicorn server for `app`: the gate, or (tests) a FastAPI app from server.create_app,
    whose configuration it then reads."""
    network = (config or app.state.signet.config).network  # type: ignore[attr-defined]
    return uvicorn.Server(
        uvicorn.Config(
            app,
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


def refuse_read_only(db_path: Path) -> None:
    """StoreError when the database file or its directory cannot be written: SQLite opens a read-
    only file and fails only at the first write. Checked before opening, so a refused start
    leaves no -wal or -shm file."""
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
    except Exception as exc:  # the store is closed below whatever happened
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
