"""`signet bench store`: the core store operations on each backend through `CoreStore`: ingest
(`write_memory` with a precomputed vector), `lexical_search` and `vector_search` latency, size on
disk, and the top-10 overlap across backends (vector near 1, as both rescore exactly; lexical
differs by stemmer). The whole app per backend is `signet bench scale --backend`. The PostgreSQL
leg refuses a database that holds memories.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from signet.bench.metrics import percentile
from signet.bench.perf import synthetic_corpus, synthetic_queries
from signet.config import Config, StoreConfig
from signet.errors import InvalidInput
from signet.normalize import normalize_content
from signet.providers.embedder import make_embedder
from signet.services.store_backend import CoreStore, open_workspace_backend
from signet.types import Actor, MemoryFilters, NewMemory, utc_now

BACKENDS = ("sqlite", "postgres")
LIMIT = 10


def run_store_bench(
    n: int, *, queries: int, backends: Sequence[str], url: str,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown or not backends:
        raise InvalidInput(f"unknown backend(s) {unknown}; expected {', '.join(BACKENDS)}")
    if "postgres" in backends and not url:
        raise InvalidInput("the postgres leg needs --store-url or SIGNET_STORE_URL")
    corpus = synthetic_corpus(n)
    asked = synthetic_queries(corpus, queries)
    embedder = make_embedder("local")
    assert embedder is not None
    say(f"embedding {n} memories and {len(asked)} queries (not timed)")
    vectors = _embed(embedder.embed, corpus, say)
    query_vectors = embedder.embed(asked)
    result: dict[str, Any] = {"n": n, "queries": len(asked), "model": embedder.model}
    tops: dict[str, dict[str, list[list[str]]]] = {}
    for backend in backends:
        kind: Literal["sqlite", "postgres"] = "postgres" if backend == "postgres" else "sqlite"
        with tempfile.TemporaryDirectory(prefix="signet-bench-store-") as tmp:
            config = Config.default(Path(tmp))
            config = dataclasses.replace(config, store=StoreConfig(backend=kind, url=url))
            opened = open_workspace_backend(config)
            try:
                leg, tops[backend] = _leg(opened.core, corpus, vectors, asked, query_vectors,
                                          embedder.model, say)
            finally:
                opened.close()
        result[backend] = leg
    if len(tops) == 2:
        a, b = (tops[k] for k in backends)
        result["top10_overlap"] = {
            mode: round(float(np.mean([len(set(x) & set(y)) / max(len(x), 1)
                                        for x, y in zip(a[mode], b[mode], strict=True)])), 3)
            for mode in ("lexical", "vector")
        }
    return result


def _embed(embed: Callable[[list[str]], np.ndarray], corpus: list[str],
           say: Callable[[str], None]) -> np.ndarray:
    parts = []
    for start in range(0, len(corpus), 512):
        parts.append(embed(corpus[start : start + 512]))
        if start % 10_240 == 0:
            say(f"embedded {start + len(parts[-1])}/{len(corpus)}")
    return np.vstack(parts)


def _leg(
    core: CoreStore, corpus: list[str], vectors: np.ndarray, asked: list[str],
    query_vectors: np.ndarray, model: str, say: Callable[[str], None],
) -> tuple[dict[str, Any], dict[str, list[list[str]]]]:
    if core.list_memories(MemoryFilters(include_deleted=True), limit=1, offset=0)[1]:
        raise InvalidInput(f"bench store needs an empty {core.backend} store")
    actor, inserts = Actor(name="bench"), []
    started = time.perf_counter()
    for i, (text, vector) in enumerate(zip(corpus, vectors, strict=True)):
        norm = normalize_content(text)
        mark = time.perf_counter()
        core.write_memory(NewMemory(content=text), storage=norm.storage,
                           normalized=norm.normalized, content_hash=norm.content_hash,
                           actor=actor, now=utc_now(), vector=vector, model=model)
        inserts.append((time.perf_counter() - mark) * 1000)
        if (i + 1) % 5000 == 0:
            say(f"{core.backend}: ingested {i + 1}/{len(corpus)}")
    elapsed = time.perf_counter() - started
    leg: dict[str, Any] = {
        "ingest_per_second": round(len(corpus) / elapsed, 1), "insert_ms": _stats(inserts),
    }
    tops: dict[str, list[list[str]]] = {"lexical": [], "vector": []}
    timings: dict[str, list[float]] = {"lexical": [], "vector": []}
    for text, query in zip(asked, query_vectors, strict=True):
        mark = time.perf_counter()
        found = core.lexical_search(text, MemoryFilters(), LIMIT)
        timings["lexical"].append((time.perf_counter() - mark) * 1000)
        tops["lexical"].append([m for m, _ in found])
        mark = time.perf_counter()
        found = core.vector_search(query, model=model, filters=MemoryFilters(), limit=LIMIT)
        timings["vector"].append((time.perf_counter() - mark) * 1000)
        tops["vector"].append([m for m, _ in found])
    # Ids differ per backend: compare by content, which is unique in the corpus.
    for mode in tops:
        tops[mode] = [[_content(core, m) for m in ids] for ids in tops[mode]]
    leg.update({f"{mode}_ms": _stats(values) for mode, values in timings.items()})
    leg["size_mb"] = round(core.size_bytes() / 2**20, 1)
    say(f"{core.backend}: done")
    return leg, tops


def _content(core: CoreStore, memory_id: str) -> str:
    memory = core.get_memory(memory_id)
    return memory.content if memory is not None else memory_id


def _stats(values: Sequence[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3)}


def format_store(result: dict[str, Any]) -> str:
    lines = [f"bench store: n={result['n']} queries={result['queries']} model={result['model']}"]
    for backend in BACKENDS:
        leg = result.get(backend)
        if leg is None:
            continue
        lines.append(
            f"  {backend:8} ingest {leg['ingest_per_second']}/s (insert p50"
            f" {leg['insert_ms']['p50']} ms, p95 {leg['insert_ms']['p95']} ms); lexical p50"
            f" {leg['lexical_ms']['p50']} / p95 {leg['lexical_ms']['p95']} ms; vector p50"
            f" {leg['vector_ms']['p50']} / p95 {leg['vector_ms']['p95']} ms; {leg['size_mb']} MB"
        )
    if "top10_overlap" in result:
        lines.append(f"  top-10 overlap sqlite/postgres: {result['top10_overlap']}")
    return "\n".join(lines)
