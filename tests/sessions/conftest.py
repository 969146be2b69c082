"""Fixtures for the session tests: a real workspace database in tmp_path, the hash embedder,
no LLM (the summary is the deterministic extractive one)."""

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
    signet = SignetApp.open(config, embedder=HashEmbedder(64), llm=None)
    yield signet
    signet.close()
