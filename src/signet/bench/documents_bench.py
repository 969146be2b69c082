"""`signet bench ingest` (generated markdown notes through `signet ingest`: documents/s and
chunks/s) and `signet bench projection` (`ProjectionService.compute` on random unit vectors
around 50 centres, in 2 and 3 dimensions), each in a temporary workspace.
"""

from __future__ import annotations

import dataclasses
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from signet.app import SignetApp
from signet.bench.perf import synthetic_corpus
from signet.config import Config, PipelineConfig
from signet.projection import layout
from signet.projection.service import ProjectionService
from signet.store import projection as proj_sql
from signet.store.projection import SqliteProjection
from signet.types import utc_now

Progress = Callable[[str], None]


def _quiet(_message: str) -> None:
    pass


def write_notes(folder: Path, files: int, seed: int = 5) -> int:
    """`files` markdown notes under `folder` (in 10 subfolders); returns the bytes written."""
    rng = random.Random(seed)
    corpus = synthetic_corpus(files * 40, seed=seed)
    total = 0
    for i in range(files):
        sub = folder / f"area-{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        paragraphs = [
            " ".join(rng.sample(corpus, rng.randint(2, 6))) for _ in range(rng.randint(3, 12))
        ]
        text = f"# Note {i}\n\n" + "\n\n".join(paragraphs) + "\n"
        total += (sub / f"note-{i:05d}.md").write_text(text, encoding="utf-8")
    return total


def bench_ingest(
    files: int, *, embedder: Any = "config", workdir: Path | None = None,
    progress: Progress = _quiet,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir) as tmp:
        root = Path(tmp)
        size = write_notes(root / "notes", files)
        progress(f"wrote {files} notes ({size / 1e6:.1f} MB)")
        cfg = Config.default(root / "ws")
        cfg = cfg.replace(pipeline=PipelineConfig(enabled=False),
                          embedding=dataclasses.replace(cfg.embedding, write_path="inline"))
        with SignetApp.open(cfg, embedder=embedder, llm=None) as app:
            started = time.perf_counter()
            for path in sorted((root / "notes").rglob("*.md")):
                app.documents.ingest_file(path)
            registered = time.perf_counter()
            worker = next(w for w in app.workers() if w.name == "documents")
            done = 0
            while worker.tick(_now()):
                done += 1
                if done % 100 == 0:
                    progress(f"  {done}/{files} documents")
            finished = time.perf_counter()
            counts = app.documents.list(limit=1)["total"], _chunks(app)
            model = app.embedder.model if app.embedder else "none"
            failed = app.documents.list(status="failed", limit=1)["total"]
    elapsed = finished - started
    return {
        "files": files, "bytes": size, "documents": counts[0], "failed": failed,
        "chunks": counts[1], "embedder": model,
        "seconds": round(elapsed, 2), "register_s": round(registered - started, 2),
        "worker_s": round(finished - registered, 2),
        "documents_per_s": round(counts[0] / elapsed, 1),
        "chunks_per_s": round(counts[1] / elapsed, 1),
    }


def _chunks(app: SignetApp) -> int:
    row = app.store.reader().execute(
        "SELECT count(*) FROM memories WHERE type = 'document_chunk' AND is_deleted = 0"
    ).fetchone()
    return int(row[0])


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def bench_projection(
    sizes: list[int], *, dims: int = 384, methods: list[str] | None = None,
    workdir: Path | None = None, progress: Progress = _quiet,
) -> dict[str, Any]:
    """Time the projection at each size; `methods` None: PCA, and UMAP when installed."""
    if methods is None:
        methods = ["pca"] + (["umap"] if layout.umap_available() else [])
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir) as tmp:
            cfg = Config.default(Path(tmp)).replace(pipeline=PipelineConfig(enabled=False))
            with SignetApp.open(cfg, embedder=None, llm=None) as app:
                model = "bench-random"
                _fill(app, n, dims, model)
                service = ProjectionService(SqliteProjection(app.store), model, dims)
                for method in methods:
                    for dimensions in (2, 3):
                        progress(f"n={n} {method} {dimensions}d ...")
                        seconds = _time_layout(service, dimensions, method == "umap")
                        results.append({"n": n, "method": method, "dimensions": dimensions,
                                        "seconds": round(seconds, 2)})
    return {"umap_installed": layout.umap_available(), "results": results}


def _time_layout(service: ProjectionService, dimensions: int, umap: bool) -> float:
    started = time.perf_counter()
    result = service.compute(dimensions, use_umap=umap)
    assert result["method"] == ("umap" if umap else "pca"), result["method"]
    return time.perf_counter() - started


def _fill(app: SignetApp, n: int, dims: int, model: str) -> None:
    """n unit vectors around 50 random centres, as memories with embeddings."""
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(50, dims))
    now = utc_now()
    for start in range(0, n, 5000):
        count = min(5000, n - start)
        vectors = centres[rng.integers(0, 50, count)] + rng.normal(scale=0.4, size=(count, dims))
        vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
        with app.store.write_tx() as conn:
            proj_sql.add_points(conn, [f"m{start + i}" for i in range(count)], vectors,
                                model=model, now=now)
