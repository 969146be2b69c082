"""The store contract suites' kit: `open_store`, so each suite runs on both backends.

A test taking `open_store` takes the root conftest's `backend` parameter through
`backend_store`: it runs on a SQLite file in tmp_path, then on a fresh PostgreSQL database
(tests/pg_server.py). No fixture here is named `backend`: that would hide the parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from signet.config import StoreConfig
from signet.store.backend import Backend
from signet.store.choose import open_backend


@pytest.fixture
def open_store(
    backend_store: StoreConfig, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Backend]]:
    """open_store(folder="a") -> another handle on the test's store (what a second daemon
    would hold); another folder is a store apart (on PostgreSQL another fresh database). All
    are closed at teardown."""
    opened: list[Backend] = []
    # Asked for now, so that its databases are dropped after the handles here are closed.
    fresh = request.getfixturevalue("pg_urls") if backend_store.backend == "postgres" else None
    urls: dict[str, str] = {}

    def open_one(folder: str = "a") -> Backend:
        config = backend_store
        if folder != "a" and fresh is not None:
            if folder not in urls:
                urls[folder] = fresh()
            config = StoreConfig(backend="postgres", url=urls[folder])
        opened.append(open_backend(config, sqlite_path=tmp_path / folder / "memories.db",
                                   key_path=tmp_path / folder / ".secrets" / "auth.key"))
        return opened[-1]

    yield open_one
    for backend in opened:
        backend.close()
