"""Embedders that call a server: Ollama's `/api/embed` and OpenAI-compatible `/v1/embeddings`. Every
answer is checked (one finite, non-zero vector of the configured width per text) and normalised.
There are no retries here: the embed job is retried by the worker with back-off.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from signet.errors import BadResponse, ProviderError, ProviderTimeout
from signet.providers.rows import normalize_rows

OLLAMA_URL = "http://127.0.0.1:11434"
OPENAI_URL = "https://api.openai.com"


class _RemoteEmbedder(ABC):
    """Batching, HTTP, error mapping and validation; subclasses say where and how to ask."""

    name = "remote"
    inline = False  # a network call: never on the write path
    path = ""

    def __init__(
        self,
        *,
        model: str,
        dimensions: int,
        base_url: str,
        api_key: str = "",
        timeout_s: float = 30.0,
        batch_size: int = 32,
    ) -> None:
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.url = base_url.rstrip("/") + self.path
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # One pooled client per embedder: keep-alive matters when a backfill sends many batches.
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s), headers=headers)

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            out[start : start + len(batch)] = self._checked(self._vectors(batch), len(batch))
        return out

    @abstractmethod
    def _vectors(self, batch: list[str]) -> list[Any]:
        """The raw vectors for `batch`, in order, from the server's JSON."""

    def _post(self, payload: dict[str, Any]) -> Any:
        try:
            response = self._client.post(self.url, json=payload)
        except httpx.TimeoutException as e:
            raise ProviderTimeout(f"{self.name} embeddings at {self.url} timed out: {e}") from e
        except httpx.HTTPError as e:
            raise ProviderError(f"{self.name} embeddings at {self.url} failed: {e}") from e
        if response.status_code >= 400:
            raise ProviderError(
                f"{self.name} embeddings at {self.url} answered {response.status_code}: "
                f"{_error_message(response)}"
            )
        try:
            return response.json()
        except ValueError as e:
            raise BadResponse(
                f"{self.name} embeddings at {self.url} sent invalid JSON: {response.text[:200]!r}"
            ) from e

    def _checked(self, vectors: list[Any], expected_rows: int) -> np.ndarray:
        if len(vectors) != expected_rows:
            raise BadResponse(
                f"{self.name} sent {len(vectors)} embeddings for {expected_rows} texts"
            )
        for vector in vectors:
            self._check_vector(vector)
        rows = np.asarray(vectors, dtype=np.float32).reshape(expected_rows, self.dimensions)
        return normalize_rows(rows)

    def _check_vector(self, vector: Any) -> None:
        if not isinstance(vector, list) or not all(_is_number(x) for x in vector):
            raise BadResponse(f"{self.name} sent an embedding that is not a list of numbers")
        if len(vector) != self.dimensions:
            raise BadResponse(
                f"{self.name} model {self.model!r} returned {len(vector)} dimensions, "
                f"expected {self.dimensions} (set embedding.dimensions to match the model)"
            )
        if not any(vector):
            raise BadResponse(f"{self.name} sent an all-zero embedding, which has no direction")


class OllamaEmbedder(_RemoteEmbedder):
    """Ollama: POST /api/embed {"model", "input": [...]} -> {"embeddings": [[...], ...]}."""

    name = "ollama"
    path = "/api/embed"

    def __init__(self, *, model: str, dimensions: int, base_url: str = "", **kw: Any) -> None:
        super().__init__(model=model, dimensions=dimensions, base_url=base_url or OLLAMA_URL, **kw)

    def _vectors(self, batch: list[str]) -> list[Any]:
        body = self._post({"model": self.model, "input": batch})
        vectors = body.get("embeddings") if isinstance(body, dict) else None
        if not isinstance(vectors, list):
            raise BadResponse(f"ollama answered without an 'embeddings' list: {str(body)[:200]}")
        return vectors


class OpenAIEmbedder(_RemoteEmbedder):
    """OpenAI-compatible: POST /v1/embeddings -> {"data": [{"embedding", "index"}, ...]}."""

    name = "openai"
    path = "/v1/embeddings"

    def __init__(self, *, model: str, dimensions: int, base_url: str = "", **kw: Any) -> None:
        # Compatible servers are often configured as ".../v1"; accept both spellings.
        root = (base_url or OPENAI_URL).rstrip("/").removesuffix("/v1")
        super().__init__(model=model, dimensions=dimensions, base_url=root, **kw)

    def _vectors(self, batch: list[str]) -> list[Any]:
        body = self._post({"model": self.model, "input": batch})
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not all(_is_item(d) for d in data):
            raise BadResponse(f"openai answered without a 'data' list: {str(body)[:200]}")
        # The API promises an index per item, not an order; place each row by its index.
        if sorted(d["index"] for d in data) != list(range(len(data))):
            raise BadResponse("openai sent embedding indexes that are not 0..n-1")
        return [d["embedding"] for d in sorted(data, key=lambda d: d["index"])]


def _is_item(d: Any) -> bool:
    return isinstance(d, dict) and "embedding" in d and isinstance(d.get("index"), int)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _error_message(response: httpx.Response) -> str:
    """The server's own error text: Ollama's {"error": "..."}, OpenAI's {"error": {"message"}}."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return response.text[:200] or response.reason_phrase
    if isinstance(error, dict):
        error = error.get("message")
    return str(error)[:200] if error else response.text[:200]
