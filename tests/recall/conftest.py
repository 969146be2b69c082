"""Fixtures for recall tests: a real workspace database in tmp_path and the hash embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.providers.hash_embedder import HashEmbedder


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.default(tmp_path / "ws")


@pytest.fixture
def app(config: Config) -> Iterator[SignetApp]:
    signet = SignetApp.open(config, embedder=HashEmbedder(64))
    yield signet
    signet.close()


@pytest.fixture
def lexical_app(config: Config) -> Iterator[SignetApp]:
    """No embedder: only the lexical channels."""
    signet = SignetApp.open(config, embedder=None)
    yield signet
    signet.close()
