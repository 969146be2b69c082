"""The ingest and projection benchmarks run end to end on small inputs and report counts that
match what they made."""

from __future__ import annotations

from pathlib import Path

from signet.bench.documents_bench import bench_ingest, bench_projection, write_notes


def test_write_notes_makes_markdown_files_in_subfolders(tmp_path: Path) -> None:
    size = write_notes(tmp_path, 12)
    files = sorted(tmp_path.rglob("*.md"))
    assert len(files) == 12 and size == sum(f.stat().st_size for f in files)
    assert files[0].read_text().startswith("# Note 0")


def test_bench_ingest_indexes_every_note(tmp_path: Path) -> None:
    result = bench_ingest(8, embedder=None, workdir=tmp_path)
    assert (result["documents"], result["failed"], result["embedder"]) == (8, 0, "none")
    assert result["chunks"] >= 8 and result["chunks_per_s"] > 0


def test_bench_projection_times_pca_in_two_and_three_dimensions(tmp_path: Path) -> None:
    result = bench_projection([300], methods=["pca"], workdir=tmp_path)
    assert [(r["n"], r["method"], r["dimensions"]) for r in result["results"]] == [
        (300, "pca", 2), (300, "pca", 3)]
