"""The projection service behind `GET /api/embeddings/projection`.

A layout takes seconds, so it never runs on a request: `get` answers from the cache while it matches
the caller's slice's vector count, else starts one background computation and answers "computing"
(202). It reads on its own connection, lays out outside any transaction and writes in one short one;
two daemons may compute one key (the later write wins).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from signet.clock import Clock, SystemClock, stamp
from signet.projection.layout import HALF_RANGE, layout
from signet.store.projection import ProjectionStore
from signet.store.write_queue import background_writes
from signet.types import MemoryScope

log = logging.getLogger(__name__)

DIMENSIONS = (2, 3)
RETRY_AFTER_MS = 1000


@dataclass(frozen=True, slots=True)
class Pending:
    """Not ready yet: ask again after `retry_after_ms`."""

    retry_after_ms: int
    embedding_count: int


def scope_key(scope: MemoryScope | None) -> str:
    """The cache key of a slice: `agent/project`, `*` for no constraint. Each name is
    percent-encoded (`*` and `/` included), so no agent or project can be spelt into another
    slice's key, the unscoped `*/*` among them."""
    scope = scope or MemoryScope()
    return "/".join(
        quote(name, safe="") if name else "*" for name in (scope.agent_id, scope.project)
    )


class ProjectionService:
    def __init__(
        self, store: ProjectionStore, model: str | None, vector_dims: int | None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        self.model = model
        self.vector_dims = vector_dims
        self._running: dict[tuple[int, str], threading.Thread] = {}
        self._lock = threading.Lock()
        self._closed = False

    def get(self, dimensions: int, scope: MemoryScope | None = None) -> dict[str, Any] | Pending:
        """The cached projection when current, else Pending (and a computation under way)."""
        if self.model is None or self.vector_dims is None:
            return _result([], {}, dimensions, 0, "none", None, stamp(self.clock), reason="no embedding provider")
        key = (dimensions, scope_key(scope))
        count = self.store.count_embedded(self.model, scope)
        cached = self.store.cached(dimensions, key[1], self.model)
        if cached is not None and cached[0] == count:
            return cached[1]
        if count == 0:
            return _result([], {}, dimensions, 0, "none", self.model, stamp(self.clock))
        self._start(key, scope)
        return Pending(RETRY_AFTER_MS, count)

    def compute(
        self, dimensions: int, scope: MemoryScope | None = None, *, use_umap: bool | None = None
    ) -> dict[str, Any]:
        """Compute and cache now, on this thread (the background job, the bench, tests);
        `use_umap` None: UMAP when the viz extra is installed."""
        assert self.model is not None and self.vector_dims is not None
        started = time.perf_counter()
        points = self.store.embedded_points(self.model, self.vector_dims, scope)
        if not points.ids:
            return _result([], {}, dimensions, 0, "none", self.model, stamp(self.clock))
        placed = layout(points.matrix, dimensions, use_umap=use_umap)
        meta = points.meta
        if scope is not None and scope.project is not None:
            # Communities are detected over the agent's whole graph, other projects' links
            # included; a caller scoped to a project walks no graph and is shown none.
            meta = [{**m, "community": None} for m in meta]
        result = _result(
            [_node(i, m, c) for i, m, c in zip(points.ids, meta, placed.coords, strict=True)],
            {"n_neighbors": placed.n_neighbors, "knn": placed.knn},
            dimensions, len(points.ids), placed.method, self.model, stamp(self.clock),
            compute_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        if self._closed:  # the app is closing its store: keep the result out of it
            return result
        self.store.cache_put(
            dimensions=dimensions, scope_key=scope_key(scope), model=self.model,
            embedding_count=len(points.ids), method=placed.method, result=result,
            now=result["cached_at"],
        )
        return result

    def _start(self, key: tuple[int, str], scope: MemoryScope | None) -> None:
        with self._lock:
            if self._closed:
                return
            running = self._running.get(key)
            if running is not None and running.is_alive():
                return
            thread = threading.Thread(
                target=self._run, args=(key, scope), name=f"signet-projection-{key[0]}d",
                daemon=True,
            )
            self._running[key] = thread
            thread.start()

    def _run(self, key: tuple[int, str], scope: MemoryScope | None) -> None:
        try:
            with background_writes():  # the cache write waits behind requests' writes
                self.compute(key[0], scope)
        except Exception:  # logged; the next request starts a new attempt
            log.exception("projection (%dd, %s) failed", *key)

    def wait(self, timeout_s: float = 30.0) -> None:
        """Wait for computations under way (shutdown, tests)."""
        with self._lock:
            threads = list(self._running.values())
        for thread in threads:
            thread.join(timeout_s)

    def close(self, timeout_s: float = 10.0) -> None:
        """Start nothing more and wait up to `timeout_s` in all for the computations under
        way (the store is closed next); a cache entry is cheap to compute again."""
        with self._lock:
            self._closed = True
            threads = list(self._running.values())
        deadline = time.monotonic() + timeout_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.warning("projection %s still running at close; its result is dropped",
                            thread.name)


def _node(memory_id: str, meta: dict[str, Any], coords: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"id": memory_id, "x": round(float(coords[0]), 3),
                            "y": round(float(coords[1]), 3)}
    if len(coords) > 2:
        node["z"] = round(float(coords[2]), 3)
    return {**node, **meta}


def _result(
    nodes: list[dict[str, Any]], graph: dict[str, Any], dimensions: int, count: int,
    method: str, model: str | None, now: str, **extra: Any,
) -> dict[str, Any]:
    return {
        "nodes": nodes, "dimensions": dimensions, "count": count, "method": method,
        "fallback": method == "pca", "model": model, "range": [-HALF_RANGE, HALF_RANGE],
        **graph, "cached_at": now, **extra,
    }
