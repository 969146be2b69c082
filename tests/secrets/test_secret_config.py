"""`secret:NAME` in the config, resolved when the workspace opens: the embedding provider
authenticates against the loopback fake embedding server (which refuses a request without the
key) with the stored value, while the config and `/api/config`'s view keep only the reference."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fakes.embed_server import FakeEmbedServer
from signet.app import SignetApp
from signet.config import Config
from signet.config_view import effective_config
from signet.errors import ConfigError, ProviderError
from signet.secret_store import SecretStore

KEY = "emb-key-5f4e3d2c1b0a"


def config_for(tmp_path: Path, url: str, reference: str) -> Config:
    cfg = Config.default(tmp_path / "ws")
    embedding = dataclasses.replace(cfg.embedding, provider="openai", model="m", dimensions=32,
                                    base_url=url, api_key=reference)
    return cfg.replace(embedding=embedding,
                       pipeline=dataclasses.replace(cfg.pipeline, enabled=False))


def test_an_embedding_key_from_the_secret_store_authenticates(tmp_path: Path) -> None:
    with FakeEmbedServer(dimensions=32, api_key=KEY) as server:
        cfg = config_for(tmp_path, server.url, "secret:EMB")
        SecretStore(cfg.workspace).set("EMB", KEY, "2026-12-01T00:00:00.000Z")
        with SignetApp.open(cfg, llm=None) as app:
            assert app.embedder is not None
            assert app.embedder.embed(["hello"]).shape == (1, 32)
            view = effective_config(app.config)
        assert server.requests[-1].headers["authorization"] == f"Bearer {KEY}"
        assert view["embedding"]["api_key"] == "secret:EMB" and KEY not in repr(view)
        assert KEY not in repr(app.config)

        SecretStore(cfg.workspace).set("EMB", "a-wrong-key", "2026-12-01T00:00:01.000Z")
        with SignetApp.open(cfg, llm=None) as app, pytest.raises(ProviderError):
            app.embedder.embed(["hello"])  # the fake's 401: the key really is what it checks


def test_a_missing_secret_fails_the_open_naming_the_key(tmp_path: Path) -> None:
    cfg = config_for(tmp_path, "http://127.0.0.1:9", "secret:NOPE")
    with pytest.raises(ConfigError, match="embedding.api_key: secret 'NOPE' is not in"):
        SignetApp.open(cfg, llm=None)
    assert not cfg.db_path.exists()  # resolved before the store opened: nothing left open
