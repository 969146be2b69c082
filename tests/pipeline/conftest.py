"""The pipeline tests' store: `store_url` is None on the SQLite leg of a test that takes the
`backend` fixture (tests/conftest.py), a fresh PostgreSQL database's URL on the other."""

from __future__ import annotations

import pytest


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    return str(request.getfixturevalue("pg_url")) if backend == "postgres" else None
