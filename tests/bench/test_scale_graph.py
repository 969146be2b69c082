"""`signet bench scale` with its synthetic knowledge graph: the graph is written through the
audited path, half the queries name an entity, and the traversal stage's own time and its
overhead over hybrid are reported (as JSON and as text)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from signet.bench import graph_corpus, perf
from signet.providers.hash_embedder import HashEmbedder


def test_the_planned_graph_has_zipf_hubs_and_unique_names() -> None:
    graph = graph_corpus.plan_graph(3000, 300)
    assert len(set(graph.names)) == 300
    assert all(1 <= len(m) <= 3 for m in graph.mentions)
    counts = Counter(e for m in graph.mentions for e in m)
    assert counts[0] > 20 * sorted(counts.values())[len(counts) // 2]  # the head is a hub
    queries = perf.with_entity_names(["a b", "c d", "e f", "g h"], graph)
    assert [q.count(" ") > 1 for q in queries] == [True, True, False, False]


def test_scale_bench_builds_the_graph_and_reports_traversal_timings(tmp_path: Path) -> None:
    data = perf.bench_recall(
        300, ("hybrid", "full"), queries=20, embedder=HashEmbedder(64), workdir=tmp_path,
        entities=30,
    )
    graph = data["graph"]
    assert data["entities"] == graph["entities"] == 30
    assert graph["aspects"] >= 30 and graph["attributes"] > 100
    assert graph["dependencies"] > 30 and graph["mentions"] >= 300
    assert data["traversal_ms"]["p95"] > 0 and data["traversal_ms"]["p50"] >= 0
    assert 0 < data["traversal_answered"] <= data["queries"] == 20
    overhead = data["recall_full_ms"]["p95"] - data["recall_hybrid_ms"]["p95"]
    assert data["traversal_overhead_ms"] == round(overhead, 3)
    assert data["recall_full_cpu_ms"]["p95"] > 0 and data["recall_hybrid_cpu_ms"]["p50"] > 0
    text = perf.format_recall(data)
    assert "traversal stage (full)" in text and "traversal overhead" in text
    assert "(CPU p50 " in text


def test_without_entities_there_is_no_graph(tmp_path: Path) -> None:
    data = perf.bench_recall(
        200, ("full",), queries=6, embedder=None, workdir=tmp_path, entities=0
    )
    assert "graph" not in data and data["traversal_answered"] == 0


def test_bench_scale_command_prints_the_traversal_figures(tmp_path: Path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "scale", "--n", "300", "--queries", "10"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("graph: entities 30,") for line in lines), done.stdout
    assert any("traversal stage (full) p50" in line for line in lines)
    assert any(line.startswith("traversal overhead (full p95 - hybrid p95):") for line in lines)


def test_a_kept_store_is_reused_by_the_next_run_and_a_foreign_folder_refused(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "store"
    first = perf.bench_recall(
        200, ("keyword",), queries=4, embedder=HashEmbedder(32), entities=20, keep=kept
    )
    assert "reused" not in first and (kept / "bench-scale.json").exists()
    second = perf.bench_recall(
        200, ("keyword",), queries=4, embedder=HashEmbedder(32), entities=20, keep=kept
    )
    assert second["reused"] == str(kept)
    assert second["ingest_per_second"] == first["ingest_per_second"]
    assert second["graph"] == first["graph"]
    with sqlite3.connect(next(kept.rglob("*.db"))) as conn:  # nothing ingested twice
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 200
    with pytest.raises(perf.KeptStoreError, match="n=200, entities=20, embedder=local, not n=300"):
        perf.bench_recall(300, ("keyword",), queries=2, embedder=None, entities=30, keep=kept)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(perf.KeptStoreError, match="not empty"):
        perf.bench_recall(100, ("keyword",), queries=2, embedder=None, entities=0, keep=other)
