"""The providers a Config names, built at the composition root (app.py, the benchmarks).

API keys are resolved here and only here: `api_key` (a `secret:NAME` reference, read from the
workspace's secret store now, at start) or else the environment variable `api_key_env` names.
Nothing below reads the environment; the provider holds the plaintext and no log shows it.
"""

from __future__ import annotations

import os
from typing import Any

from signet.config import Config
from signet.providers.embedder import Embedder, make_embedder
from signet.providers.llm import LLM
from signet.providers.llm_registry import make_llm
from signet.secret_store import SecretStore

__all__ = ["configured_embedder", "configured_llm", "worker_embedder"]


def configured_embedder(config: Config) -> Embedder | None:
    """The embedder `config` names (None for provider none); the benchmarks wrap it in a cache."""
    e = config.embedding
    return make_embedder(
        e.provider, model=e.model, dimensions=e.dimensions, base_url=e.base_url,
        api_key=_api_key(config, "embedding") if e.provider in ("ollama", "openai") else "",
        timeout_s=e.timeout_ms / 1000, batch_size=e.batch_size, threads=e.threads,
    )


def worker_embedder(config: Config, embedder: Embedder | None) -> Embedder | None:
    """The embedder the embed worker uses: the bundled model in a child process
    (providers/embed_process.py) when `embedding.worker_processes` is not 0 and `embedder`
    is the configured local model, else `embedder` itself."""
    e = config.embedding
    if (embedder is None or not e.worker_processes or e.provider != "local"
            or embedder.name != "local" or embedder.model != (e.model or embedder.model)):
        return embedder
    from signet.providers.embed_process import ProcessEmbedder

    return ProcessEmbedder(model=embedder.model, dimensions=embedder.dimensions,
                           batch_size=e.batch_size, threads=e.threads,
                           processes=e.worker_processes)


def configured_llm(config: Config, usage_sink: Any = None) -> LLM | None:
    """The LLM `config` names (None for provider none), reporting its usage to `usage_sink`."""
    c = config.llm
    return make_llm(
        c.provider, model=c.model, base_url=c.base_url, timeout_ms=c.timeout_ms,
        api_key=_api_key(config, "llm") if c.provider != "none" else "",
        command=c.command, max_calls_per_hour=c.max_calls_per_hour, burst=c.burst,
        max_tokens=c.max_tokens, concurrency=c.concurrency, usage_sink=usage_sink,
    )


def _api_key(config: Config, section: str) -> str:
    chosen = getattr(config, section)
    if chosen.api_key:
        return SecretStore(config.workspace).resolve(chosen.api_key, f"{section}.api_key")
    return os.environ.get(chosen.api_key_env, "") if chosen.api_key_env else ""
