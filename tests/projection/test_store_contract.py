"""The projection store protocol (store/projection.py `ProjectionStore`) on both backends: the
same counts, points and cache behaviour from SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.providers.hash_embedder import HashEmbedder
from signet.types import MemoryScope
from write_paths import inline


@pytest.fixture
def app(backend_store: StoreConfig, tmp_path: Path) -> Iterator[SignetApp]:
    cfg = inline(Config.default(tmp_path)).replace(store=backend_store)
    opened = SignetApp.open(cfg, embedder=HashEmbedder(16), llm=None)
    yield opened
    opened.close()


def test_counts_points_and_the_cache_by_slice(app: SignetApp) -> None:
    store, model = app.projection.store, "hash-16"
    assert app.embedder is not None and app.embedder.model == model
    ids = {p: [app.remember(f"note {i} of {p}", project=p).id for i in range(3)]
           for p in ("p", "q")}
    app.forget(ids["q"][0])
    alpha = MemoryScope(project="p")
    assert store.count_embedded(model, None) == 5 and store.count_embedded(model, alpha) == 3
    assert store.count_embedded("another-model", None) == 0

    points = store.embedded_points(model, 16, alpha)
    assert points.ids == ids["p"] and points.matrix.shape == (3, 16)
    assert points.matrix.dtype == np.float32
    expected = app.embedder.embed(["note 0 of p"])[0]
    assert np.allclose(points.matrix[0], expected, atol=1e-6)
    assert points.meta[0]["content"] == "note 0 of p" and points.meta[0]["project"] == "p"
    assert store.embedded_points(model, 8, None).ids == []  # another dimension count

    assert store.cached(2, "*/p", model) is None
    store.cache_put(dimensions=2, scope_key="*/p", model=model, embedding_count=3,
                    method="pca", result={"nodes": [1]}, now="2026-12-01T00:00:00.000Z")
    store.cache_put(dimensions=2, scope_key="*/p", model=model, embedding_count=4,
                    method="pca", result={"nodes": [2]}, now="2026-12-01T00:00:01.000Z")
    assert store.cached(2, "*/p", model) == (4, {"nodes": [2]})  # replaced whole
    assert store.cached(3, "*/p", model) is None and store.cached(2, "*/*", model) is None
