"""`signet bench scale`'s options for a 1M run: hash vectors at 384 dimensions with the bundled
model's query embedding timed apart, larger ingest batches, recall timed at checkpoints on the
way, progress with a rate and an ETA, and a kept store tied to the embedder that built it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from signet.bench import perf, vector_graph
from signet.providers.embedder import make_embedder
from signet.providers.hash_embedder import HashEmbedder


def test_checkpoints_time_every_mode_on_the_store_as_ingested_so_far(tmp_path: Path) -> None:
    kept = tmp_path / "store"
    model = make_embedder("local")
    assert model is not None
    data = perf.bench_recall(
        300, ("keyword", "full"), queries=6, embedder=HashEmbedder(384), keep=kept,
        batch=64, batch_tx=True, checkpoints=[100, 5000], embedder_name="hash-384",
        query_embedder=model,
    )
    with sqlite3.connect(next(kept.rglob("*.db"))) as conn:  # one transaction per batch
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 300
        assert conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 300
    assert data["transaction"] == "per batch"
    # Measured at the first batch boundary past 100 (64 x 2); 5000 is past N and never reached.
    assert list(data["checkpoints"]) == ["128"]
    at = data["checkpoints"]["128"]
    assert at["recall_keyword_ms"]["p95"] > 0 and at["recall_full_cpu_ms"]["p50"] > 0
    assert 0 < at["db_mb"] and at["rss_mb"] > 0 and at["ingest_per_second"] > 0
    stages = data["full_stages_ms"]  # where the default mode's time goes, per stage
    assert {"lexical", "embed", "semantic", "fuse"} <= set(stages)
    assert stages["lexical"]["runs"] == 6 and stages["semantic"]["p95"] > 0
    assert data["batch"] == 64 and data["embedder"] == "hash-384"
    assert data["query_embedder"] == model.model  # the bundled model
    assert data["query_embedding_ms"]["p95"] > 0 and data["query_embedding_cpu_ms"]["p50"] > 0
    text = perf.format_recall(data)
    assert "stored vectors: hash-384 (not the bundled model)" in text
    assert f"query embedding, {model.model} alone" in text and "at 128: recall p95" in text
    staged = next(line for line in text.splitlines() if "stages (full, wall p50/p95 ms): " in line)
    assert "lexical " in staged and "semantic " in staged


def test_a_kept_store_is_refused_to_a_run_with_another_embedder(tmp_path: Path) -> None:
    kept = tmp_path / "store"
    perf.bench_recall(100, ("keyword",), queries=2, embedder=HashEmbedder(32), entities=0,
                      keep=kept, embedder_name="hash-32")
    assert json.loads((kept / "bench-scale.json").read_text())["embedder"] == "hash-32"
    with pytest.raises(perf.KeptStoreError, match="embedder=hash-32, not n=100, entities=0, "
                                                  "embedder=local"):
        perf.bench_recall(100, ("keyword",), queries=2, embedder=None, entities=0, keep=kept)


def _scale(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "signet", "bench", "scale", "--n", "200", "--queries", "4",
         "--entities", "0", *args], capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=600,
    )


def test_bench_scale_hash_run_reports_what_it_stored_and_its_progress(tmp_path: Path) -> None:
    done = _scale(tmp_path, "--embedder", "hash", "--batch", "50", "--checkpoints", "100",
                  "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["embedder"] == "hash-384" and data["batch"] == 50
    assert data["transaction"] == "per memory"
    assert list(data["checkpoints"]) == ["100"] and data["query_embedding_ms"]["p50"] > 0
    assert "ingested 200/200: " in done.stderr and " ETA " in done.stderr
    refused = _scale(tmp_path, "--checkpoints", "200")
    assert refused.returncode != 0 and "--checkpoints" in refused.stderr


def test_bench_scale_runs_each_backend_in_turn_and_reports_them_side_by_side(
    tmp_path: Path, pg_url: str
) -> None:
    """`--backend sqlite,postgres`: one leg per backend (a process each), the same corpus;
    the postgres leg writes a transaction per memory (`--batch-tx` widens SQLite's only) and
    adds the server's CPU; a database that already holds memories is refused; both legs write
    the same knowledge graph and time traversal."""
    done = _scale(tmp_path, "--embedder", "hash", "--batch", "50", "--batch-tx", "--entities", "20",
                  "--backend", "sqlite,postgres", "--store-url", pg_url, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    sqlite, postgres = data["sqlite"], data["postgres"]
    assert data["backends"] == ["sqlite", "postgres"]
    assert (sqlite["backend"], postgres["backend"]) == ("sqlite", "postgres")
    assert sqlite["transaction"] == "per batch" and postgres["transaction"] == "per memory"
    assert postgres["write"] == "remember_many"
    for leg in (sqlite, postgres):
        assert leg["n"] == 200 and leg["recall_full_ms"]["p95"] > 0 and leg["db_mb"] > 0
        assert leg["graph"]["entities"] == 20 and leg["traversal_answered"] > 0
        assert leg["ingest_cpu_ms_per_memory"] > 0 and leg["peak_rss_mb"] > 0
    assert "ingest_server_cpu_ms_per_memory" in postgres
    assert "recall_hybrid_server_cpu_ms" not in sqlite
    assert postgres["recall_hybrid_server_cpu_ms"]["mean"] >= 0
    assert postgres["maintenance_observe_ms"] is not None
    assert "[postgres] ingested 200/200" in done.stderr
    again = _scale(tmp_path, "--embedder", "hash", "--backend", "postgres", "--store-url", pg_url)
    assert again.returncode != 0 and "needs an empty database; this one holds 200" in again.stderr
    assert {k: v for k, v in sqlite["graph"].items() if k != "build_seconds"} == {
        k: v for k, v in postgres["graph"].items() if k != "build_seconds"}


class _Stopped(Exception):
    """Raised from the progress callback: the run stopped part way, as a kill would."""


def test_a_stopped_ingest_resumes_where_it_stopped(tmp_path: Path) -> None:
    kept = tmp_path / "store"

    def stop_after_checkpoint(message: str) -> None:
        if message.startswith("checkpoint"):
            raise _Stopped

    options: dict[str, object] = {
        "queries": 2, "embedder": HashEmbedder(32), "entities": 0, "keep": kept, "batch": 64,
        "checkpoints": [100], "embedder_name": "hash-32",
    }
    with pytest.raises(_Stopped):
        perf.bench_recall(300, ("keyword",), progress=stop_after_checkpoint, **options)  # type: ignore[arg-type]
    # Stopped at the checkpoint of the batch that passed 100, before its ids were recorded:
    # one batch on record, the second written again on resuming (the store's dedup answers
    # with the ids it holds).
    assert len((kept / "bench-scale.ids").read_text().split()) == 64
    told: list[str] = []
    data = perf.bench_recall(300, ("keyword",), progress=told.append, **options)  # type: ignore[arg-type]
    assert "resuming the ingest after 64 memories" in told
    assert "reused" not in data and list(data["checkpoints"]) == ["128"]
    assert sorted(p.name for p in kept.iterdir()) == ["bench-scale.json", "memory"]
    with sqlite3.connect(next(kept.rglob("*.db"))) as conn:  # nothing ingested twice
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 300
    again = perf.bench_recall(300, ("keyword",), **options)  # type: ignore[arg-type]
    assert again["reused"] == str(kept)


def test_the_timing_waits_for_the_vector_graph_the_store_asks_for(tmp_path: Path) -> None:
    # The graph is made on another thread; the timed searches must go through it, not the
    # exact index that answers until it is ready.
    data = perf.bench_recall(300, ("vector",), queries=4, embedder=HashEmbedder(32), entities=0,
                             ann_min_vectors=200)
    assert data["vector_graph"]["read_back"] is False and data["vector_graph"]["added"] == 300
    assert 0 < data["vector_top10_overlap"] <= 1
    assert "vector graph built (+300 -0 rows) before the timing" in perf.format_recall(data)


def test_the_vector_graph_bench_measures_a_kept_store_and_saves_its_graph(tmp_path: Path) -> None:
    kept = tmp_path / "store"
    perf.bench_recall(300, ("keyword",), queries=2, embedder=HashEmbedder(32), entities=0,
                      keep=kept, embedder_name="hash-32")
    first = vector_graph.run(kept, [100], [128, 256], 6, lambda _: None)
    assert list(first["sizes"]) == ["100", "300"] and first["queries"] == 6
    whole = first["sizes"]["300"]
    assert whole["graph"] == "built" and 0 < whole["ef_256"]["overlap"] <= 1
    assert whole["exact_cpu_ms"]["p95"] > 0 and whole["ef_128"]["cpu_ms"]["p50"] > 0
    # The whole store's graph is saved where the daemon looks, and read back the next time.
    assert len(list(kept.rglob("*.usearch"))) == 1
    again = vector_graph.run(kept, [], [128], 6, lambda _: None)
    assert again["sizes"]["300"]["graph"] == "read back"
    assert "ef 128: overlap " in vector_graph.format_result(again)
