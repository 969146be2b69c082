"""The embedder seam: one method that turns texts into unit vectors.

`embed(texts)` returns float32 rows of shape `(len(texts), dimensions)`, L2-normalised so a dot
product is a cosine; failures raise `ProviderError`, `ProviderTimeout` or `BadResponse`.
`make_embedder` looks the name up in `PROVIDERS`, where the built-ins register as a plugin would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from signet.errors import InvalidInput


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed width."""

    name: str
    model: str
    dimensions: int
    # Cheap and local enough to run on the write path (before the write transaction), so a
    # new memory is searchable by meaning at once; False: the embed worker fills it later.
    inline: bool

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class EmbedderSettings:
    """Everything a provider factory may need; each factory reads the fields it understands."""

    model: str = ""
    dimensions: int = 384
    base_url: str = ""
    api_key: str = ""
    timeout_s: float = 30.0
    batch_size: int = 32
    threads: int = 1


EmbedderFactory = Callable[[EmbedderSettings], Embedder]


def _hash(s: EmbedderSettings) -> Embedder:
    from signet.providers.hash_embedder import HashEmbedder

    return HashEmbedder(dimensions=s.dimensions)


def _local(s: EmbedderSettings) -> Embedder:
    # Imported lazily: onnxruntime and tokenizers cost start-up time nobody else should pay.
    from signet.providers.local_embedder import DIMENSIONS, MODEL, MODELS, LocalEmbedder

    # The bundled model file serves fixed models: a config asking for another width or model
    # would otherwise get vectors that do not match what it stores.
    if s.dimensions != DIMENSIONS or s.model not in ("", *MODELS):
        raise InvalidInput(
            f"the local provider serves {' or '.join(MODELS)} at {DIMENSIONS} dimensions, "
            f"not {s.model or MODEL!r} at {s.dimensions}"
        )
    return LocalEmbedder(model=s.model or MODEL, batch_size=s.batch_size, threads=s.threads)


def _remote(
    make: Callable[..., Embedder], s: EmbedderSettings, model: str, api_key: str = ""
) -> Embedder:
    """A server-backed embedder (remote_embedders.py) of the configured model, else `model`;
    `api_key` is sent as a bearer token (Ollama takes none)."""
    return make(
        model=s.model or model, dimensions=s.dimensions, base_url=s.base_url, api_key=api_key,
        timeout_s=s.timeout_s, batch_size=s.batch_size,
    )


def _ollama(s: EmbedderSettings) -> Embedder:
    from signet.providers.remote_embedders import OllamaEmbedder

    return _remote(OllamaEmbedder, s, "nomic-embed-text")


def _openai(s: EmbedderSettings) -> Embedder:
    from signet.providers.remote_embedders import OpenAIEmbedder

    return _remote(OpenAIEmbedder, s, "text-embedding-3-small", s.api_key)


# The registry. A plugin adds an entry (`PROVIDERS["mine"] = factory`) and is then selectable
# through configuration like the built-in ones. "none" is handled by `make_embedder`.
PROVIDERS: dict[str, EmbedderFactory] = {
    "local": _local,
    "ollama": _ollama,
    "openai": _openai,
    "hash": _hash,
}


def make_embedder(
    provider: str,
    *,
    model: str = "",
    dimensions: int = 384,
    base_url: str = "",
    api_key: str = "",
    timeout_s: float = 30.0,
    batch_size: int = 32,
    threads: int = 1,
) -> Embedder | None:
    """The embedder configured by `provider` (local|ollama|openai|hash), or None for "none"."""
    if provider == "none":
        return None
    factory = PROVIDERS.get(provider)
    if factory is None:
        known = ", ".join(sorted([*PROVIDERS, "none"]))
        raise InvalidInput(f"unknown embedding provider {provider!r} (known: {known})")
    if dimensions <= 0 or batch_size <= 0 or threads <= 0:
        raise InvalidInput("embedding dimensions, batch_size and threads must be positive")
    settings = EmbedderSettings(
        model=model,
        dimensions=dimensions,
        base_url=base_url,
        api_key=api_key,
        timeout_s=timeout_s,
        batch_size=batch_size,
        threads=threads,
    )
    return factory(settings)
