"""The write-side benchmarks run end to end on small inputs (figures are for docs, not tests):
ingest until every vector is stored, remember at N, freshness against a real daemon."""

from __future__ import annotations

from pathlib import Path

from signet.bench.freshness import format_freshness, run_freshness
from signet.bench.writes import bench_ingest, bench_remember


def test_ingest_counts_only_once_every_vector_is_stored(tmp_path: Path) -> None:
    result = bench_ingest(24, "deferred", workdir=tmp_path)
    assert result["n"] == 24 and result["write_path"] == "deferred"
    assert result["ingest_per_second"] <= result["written_per_second"]
    assert result["cpu_ms_per_memory"] > 0
    assert result["embed_ticks"] > 0  # the embed worker made the vectors, not the writes
    assert result["model"] == "all-MiniLM-L6-v2-int8-dynamic"


def test_ingest_measures_the_model_it_is_asked_for(tmp_path: Path) -> None:
    result = bench_ingest(8, "inline", workdir=tmp_path, model="all-MiniLM-L6-v2-int8")
    assert result["model"] == "all-MiniLM-L6-v2-int8"
    assert result["model_only"]["texts_per_cpu_second"] > 0


def test_remember_is_timed_on_a_filled_store(tmp_path: Path) -> None:
    result = bench_remember(60, calls=5, workdir=tmp_path)
    assert result["n"] == 60 and result["calls"] == 5
    assert 0 < result["remember_ms"]["p50"] <= result["remember_ms"]["max"]


def test_freshness_probes_a_real_daemon(tmp_path: Path) -> None:
    result = run_freshness(probes=2, clients=[0], workdir=tmp_path)
    [run] = result["runs"]
    assert run["probes"] == 2 and run["never_fresh"] == 0
    # Remember answered before the vector existed, and keyword recall found it meanwhile.
    assert run["returned_unembedded"] == 2 == run["found_lexically_before_embedding"]
    assert "fresh p50/p95/max" in format_freshness(result)
