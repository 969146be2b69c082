"""Shared test set-up: the one test kit.

This file sits in tests/, which has no __init__.py, so pytest puts tests/ on sys.path: the
shared fakes import as `from fakes.llm_server import FakeLLMServer, Reply` (a scripted LLM in
`fakes/scripted_llm.py`, the loopback LLM and embedding servers beside it).

The fixtures every folder shares:
- `config`: a default Config on a workspace in tmp_path, embedding on the write path
  (`write_paths.inline`: these tests read vectors right after writing);
- `app`: a SignetApp opened on it with the deterministic hash embedder and no LLM (on
  PostgreSQL too when the test takes `backend`);
- `lexical_app`: the same with no embedder (only the lexical channels);
- `serve(**config_sections)`: a real daemon app under uvicorn on a free loopback port
  (uvicorn_thread.py, the start-up every in-process server shares), spoken to over real HTTP
  with the install's admin token; everything stops at teardown.

The daemon suites on PostgreSQL: `pytest tests/daemon tests/mcp --store-backend postgres`
(scripts/test runs it after the whole suite) serves every `serve` server on a fresh
PostgreSQL database. That pass collects only the tests that run on a store it chooses: a test
taking the `backend` fixture already ran on both stores in the first pass (one taking `pg_url`
on its own PostgreSQL database), a test with no `serve` server and no `suite_store` (the
store of its own workspaces: the MCP suite's) would only repeat itself on SQLite (the tests
about the SQLite file itself, its WAL and its bytes on disk, are of this kind); these are
deselected, never skipped.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
import pytest

from exit_guard import pytest_sessionfinish, pytest_unconfigure  # noqa: F401  (hooks)
from pg_server import pg_server, pg_url, pg_url_other, pg_urls  # noqa: F401  (fixtures for every folder)
from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.providers.hash_embedder import HashEmbedder
from signet.store.postgres.core import redact
from write_paths import inline

# A hook that finds no daemon starts one (signet/hooks/autostart.py). The tests run hooks
# against ports nobody serves all the time; those must not leave daemons behind. The
# autostart tests turn it on for their own hooks.
os.environ["SIGNET_AUTOSTART"] = "0"

if TYPE_CHECKING:
    from fastapi import FastAPI


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-backend", choices=("sqlite", "postgres"), default="sqlite",
        help="the store every `serve` server runs on (postgres: the daemon suites' second pass)",
    )


# The few-minute suite (`pytest -m quick`, CONTRIBUTING.md): in-process tests of the layers,
# the store contracts on both backends, recall, the graph and the workers; no daemon process.
QUICK = ("test_layers.py", "test_config.py", "test_memory_fields.py", "test_version.py",
         "services", "store", "recall", "graph", "workers")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "quick: the few-minute suite (CONTRIBUTING.md)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.relative_to(here).parts[0] in QUICK:
            item.add_marker(pytest.mark.quick)
    if config.getoption("--store-backend") != "postgres":
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        names = getattr(item, "fixturenames", ())
        # `backend` tests ran on both stores, `pg_url` tests on their own PostgreSQL database.
        on_chosen_store = bool({"serve", "suite_store"} & set(names)) and not (
            {"backend", "pg_url"} & set(names))
        if on_chosen_store:
            kept.append(item)
        else:
            dropped.append(item)
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def _serves_postgres(request: pytest.FixtureRequest) -> bool:
    """Whether `serve` runs on PostgreSQL: the pass's --store-backend, or the test's own
    `backend` parameter."""
    if "backend" in request.fixturenames:
        return request.getfixturevalue("backend") != "sqlite"
    return request.config.getoption("--store-backend") == "postgres"


@pytest.fixture
def suite_store(request: pytest.FixtureRequest) -> StoreConfig:
    """The store this pass runs on (--store-backend), for a test's own workspaces (agent.yaml
    of a daemon subprocess, an app it opens): SQLite, or a fresh PostgreSQL database."""
    if request.config.getoption("--store-backend") == "postgres":
        return StoreConfig(backend="postgres", url=request.getfixturevalue("pg_url"))
    return StoreConfig()


@pytest.fixture
def config(tmp_path: Path) -> Config:
    # These tests read vectors right after writing: embedded on the write path (the deferred
    # path has its own tests, tests/services/test_deferred_embedding.py).
    return inline(Config.default(tmp_path / "ws"))


@pytest.fixture
def app(config: Config, request: pytest.FixtureRequest) -> Iterator[SignetApp]:
    """On the store named by the `backend` fixture when the test takes it, else on SQLite."""
    if "backend" in request.fixturenames and request.getfixturevalue("backend") != "sqlite":
        url = request.getfixturevalue("pg_url")
        config = config.replace(store=StoreConfig(backend="postgres", url=url))
    signet = SignetApp.open(config, embedder=HashEmbedder(64), llm=None)
    yield signet
    signet.close()


@pytest.fixture
def lexical_app(config: Config) -> Iterator[SignetApp]:
    """No embedder: only the lexical channels."""
    signet = SignetApp.open(config, embedder=None, llm=None)
    yield signet
    signet.close()


@dataclass
class Served:
    cfg: Config
    app: SignetApp
    api: FastAPI
    client: httpx.Client
    url: str
    token: str = ""  # the admin token in cfg.token_path; `client` sends it

    def sql(self, statement: str) -> list[tuple[Any, ...]]:
        """Run one statement on the served store itself, whichever backend (a test's way to
        age, remove or count rows behind the daemon's back); the rows it returns."""
        if self.cfg.store.backend == "sqlite":
            with closing(sqlite3.connect(self.cfg.db_path)) as conn, conn:
                return list(conn.execute(statement).fetchall())
        with psycopg.connect(self.cfg.store.url or "", autocommit=True) as pg:
            cursor = pg.execute(statement.encode("utf-8"))
            return list(cursor.fetchall()) if cursor.description else []

    @property
    def database(self) -> str:
        """What the status reports as the database: the file, or the URL without password."""
        if self.cfg.store.backend == "sqlite":
            return str(self.cfg.db_path)
        return redact(self.cfg.store.url or "")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """A test taking `backend` runs twice: `serve` serves it on the workspace's SQLite file,
    then on a fresh PostgreSQL database (tests/pg_server.py)."""
    return str(request.param)


@pytest.fixture
def backend_store(backend: str, request: pytest.FixtureRequest) -> StoreConfig:
    """The store of the `backend` parameter, for a test's own apps: SQLite, or a fresh
    PostgreSQL database."""
    if backend == "sqlite":
        return StoreConfig()
    return StoreConfig(backend="postgres", url=request.getfixturevalue("pg_url"))


@pytest.fixture
def serve(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., Served]]:
    """serve(**config_sections) -> a running server; everything stops at teardown. On the
    store named by the `backend` fixture when the test takes it, else on SQLite."""
    from auth_tokens import auth, install_token
    from signet.daemon.server import create_app
    from uvicorn_thread import serve_in_thread

    stops: list[Callable[[], None]] = []

    def start(**sections: Any) -> Served:
        # No workers run in this server: writes embed on the write path (test_deferred_daemon.py
        # has the daemon's deferred path with its embed worker).
        cfg = inline(Config.default(tmp_path / f"ws{len(stops)}")).replace(**sections)
        if _serves_postgres(request):
            # A second server in one test is apart from the first, as on SQLite (ws0, ws1).
            url = request.getfixturevalue("pg_urls")() if stops else request.getfixturevalue("pg_url")
            cfg = cfg.replace(store=StoreConfig(backend="postgres", url=url))
        app = SignetApp.open(cfg, embedder=HashEmbedder(64))
        api = create_app(app)
        running = serve_in_thread(api)
        token = install_token(cfg, app)
        client = httpx.Client(base_url=running.url, timeout=30, headers=auth(token))

        def stop() -> None:
            client.close()
            running.stop()
            app.close()

        stops.append(stop)
        return Served(cfg, app, api, client, running.url, token)

    yield start
    for stop in stops:
        stop()
