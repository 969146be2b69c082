"""Recall's tests run on both store backends through the one Recaller (recall/hybrid.py).

In this folder `app` and `lexical_app` take the `backend` fixture (tests/conftest.py): each test
runs on the workspace's SQLite file and on a fresh PostgreSQL database (tests/pg_server.py),
the same ranking over the two backends' recall reads (store/recall_reads.py). A test that
reaches past recall into SQLite itself (its FTS tables, its write transaction) asks for
`sqlite_app` / `sqlite_lexical_app` instead.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.providers.hash_embedder import HashEmbedder


def _on(config: Config, backend: str, request: pytest.FixtureRequest) -> Config:
    if backend == "sqlite":
        return config
    url = request.getfixturevalue("pg_url")
    return config.replace(store=StoreConfig(backend="postgres", url=url))


@pytest.fixture
def app(config: Config, backend: str, request: pytest.FixtureRequest) -> Iterator[SignetApp]:
    signet = SignetApp.open(_on(config, backend, request), embedder=HashEmbedder(64), llm=None)
    yield signet
    signet.close()


@pytest.fixture
def lexical_app(
    config: Config, backend: str, request: pytest.FixtureRequest
) -> Iterator[SignetApp]:
    """No embedder: only the lexical channels."""
    signet = SignetApp.open(_on(config, backend, request), embedder=None, llm=None)
    yield signet
    signet.close()


@pytest.fixture
def sqlite_app(config: Config) -> Iterator[SignetApp]:
    signet = SignetApp.open(config, embedder=HashEmbedder(64), llm=None)
    yield signet
    signet.close()


@pytest.fixture
def sqlite_lexical_app(config: Config) -> Iterator[SignetApp]:
    signet = SignetApp.open(config, embedder=None, llm=None)
    yield signet
    signet.close()
