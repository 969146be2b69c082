"""The HNSW graph against the exact search over a store's vectors, for `signet bench vector-graph`:
per store size and search width (ef), the share of each query's exact top 10 the graph finds and
the CPU of one search each way, plus the graph's build CPU. The whole store's graph is read from,
or saved to, `saved`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from signet.recall.vectors import LOAD_STEP
from signet.store import embeddings as emb_sql
from signet.store.ann_index import HnswIndex
from signet.store.connection import Connection
from signet.store.vector_index import QuantizedIndex

K = 10
Progress = Callable[[str], None]


def probe(
    conn: Connection, model: str, dimensions: int, asked: np.ndarray, sizes: Sequence[int],
    efs: Sequence[int], saved: Path | None, progress: Progress,
) -> dict[str, Any]:
    """The figures per size (ascending, then the whole store) and ef, over the queries
    `asked` (vectors)."""
    ids, rows = _all_vectors(conn, model, dimensions)
    out: dict[str, Any] = {"n": len(ids), "queries": len(asked), "k": K, "sizes": {}}
    for size in sorted(s for s in sizes if s < len(ids)) + [len(ids)]:
        out["sizes"][str(size)] = _one_size(
            conn, ids[:size], rows[:size], asked, efs, saved if size == len(ids) else None,
            progress)
    return out


def _all_vectors(conn: Connection, model: str, dimensions: int) -> tuple[np.ndarray, np.ndarray]:
    """Every current vector of the store, in id order, as unit rows."""
    ids: list[int] = []
    blocks: list[np.ndarray] = []
    after = 0
    while True:
        got, matrix = emb_sql.load_since(conn, model, dimensions, after, LOAD_STEP * 4)
        if not got:
            break
        ids.extend(got)
        blocks.append(np.asarray(matrix, dtype=np.float32))
        after = got[-1]
    rows = np.concatenate(blocks) if blocks else np.zeros((0, dimensions), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return np.asarray(ids, dtype=np.int64), rows


def _one_size(
    conn: Connection, ids: np.ndarray, rows: np.ndarray, asked: np.ndarray, efs: Sequence[int],
    saved: Path | None, progress: Progress,
) -> dict[str, Any]:
    def exact_rows(wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return emb_sql.vectors_by_id(conn, wanted.tolist(), rows.shape[1])

    truth = _exact_top(ids, rows, asked)
    exact = QuantizedIndex(rows.shape[1], exact_rows, capacity=len(ids))
    exact.add(ids.tolist(), rows)
    result: dict[str, Any] = {"exact_cpu_ms": _cpu(lambda q: exact.search(q, K), asked)}
    graph = HnswIndex(rows.shape[1], exact_rows)
    cpu = time.process_time()
    if saved is not None and graph.load(saved) and len(graph) == len(ids):
        result["graph"] = "read back"
    else:
        graph = HnswIndex(rows.shape[1], exact_rows)
        progress(f"building the graph over {len(ids)} vectors")
        for start in range(0, len(ids), LOAD_STEP):
            graph.add(ids[start : start + LOAD_STEP].tolist(), rows[start : start + LOAD_STEP])
        result["graph"] = "built"
        if saved is not None:
            graph.save(saved)
    result["graph_cpu_s"] = round(time.process_time() - cpu, 2)
    for ef in efs:
        graph.expansion_search = ef
        found = [{i for i, _ in graph.search(q, K)} for q in asked]
        overlap = np.mean([len(f & set(t)) / K for f, t in zip(found, truth, strict=True)])
        result[f"ef_{ef}"] = {"overlap": round(float(overlap), 4),
                              "cpu_ms": _cpu(lambda q: graph.search(q, K), asked)}
        progress(f"{len(ids)} vectors, ef {ef}: {json.dumps(result[f'ef_{ef}'])}")
    return result


def _exact_top(ids: np.ndarray, rows: np.ndarray, asked: np.ndarray) -> list[list[int]]:
    """Each query's exact top K ids (float32 cosine over every row; ties by the smaller id)."""
    tops = []
    for q in asked / np.linalg.norm(asked, axis=1, keepdims=True):
        scores = rows @ q
        order = np.lexsort((ids, -scores))[:K]
        tops.append(ids[order].tolist())
    return tops


def _cpu(search: Callable[[np.ndarray], object], asked: np.ndarray) -> dict[str, float]:
    """CPU per search (this thread), p50 / p95 in ms, after one warm-up search."""
    search(asked[0])
    spent = []
    for q in asked:
        mark = time.thread_time()
        search(q)
        spent.append((time.thread_time() - mark) * 1000)
    return {"p50": round(float(np.percentile(spent, 50)), 3),
            "p95": round(float(np.percentile(spent, 95)), 3)}
