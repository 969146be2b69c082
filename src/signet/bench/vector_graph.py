"""`signet bench vector-graph`: the HNSW graph against the exact search on a store kept by
`signet bench scale --db` (recall/graph_probe.py measures), over the scale bench's own queries
embedded by the embedder that filled the store. What `embedding.ann_min_vectors` and the graph's
search width were chosen by (docs/decisions.md). The whole store's graph is read from, or saved
to, the file a daemon would use, so a later `signet bench scale --db` on the folder reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from signet.app import SignetApp
from signet.bench import perf
from signet.providers.embedder import Embedder
from signet.providers.hash_embedder import HashEmbedder
from signet.recall.graph_probe import K, probe


def run(folder: Path, sizes: Sequence[int], efs: Sequence[int], queries: int,
        progress: Callable[[str], None]) -> dict[str, Any]:
    """The figures per size (ascending; then the whole store) and ef."""
    kept = json.loads((folder / "bench-scale.json").read_text())
    _, _, asked = perf.scale_inputs(kept["n"], kept["entities"], queries)
    with SignetApp.open(perf._config(folder), embedder=_embedder(kept["embedder"])) as app:
        vectors, embedder = app.vectors, app.embedder
        assert vectors is not None and embedder is not None
        progress(f"embedding {len(asked)} queries with {embedder.model}")
        asked_vectors = np.asarray(embedder.embed(asked), dtype=np.float32)
        out = probe(app.store.reader(), embedder.model, embedder.dimensions, asked_vectors,
                    sizes, efs, vectors.ann_file, progress)
    return {**out, "embedder": kept["embedder"]}


def _embedder(name: str) -> Embedder | str:
    return HashEmbedder(int(name.removeprefix("hash-"))) if name.startswith("hash-") else "config"


def format_result(data: dict[str, Any]) -> str:
    lines = [f"{data['n']} vectors ({data['embedder']}), {data['queries']} queries, top {K}"]
    for size, one in data["sizes"].items():
        exact = one["exact_cpu_ms"]
        lines.append(f"{size}: exact CPU p50/p95 {exact['p50']} / {exact['p95']} ms; graph"
                     f" {one['graph']} ({one['graph_cpu_s']} s CPU)")
        for key, fig in one.items():
            if key.startswith("ef_"):
                lines.append(f"  ef {key[3:]}: overlap {fig['overlap']}, CPU p50/p95"
                             f" {fig['cpu_ms']['p50']} / {fig['cpu_ms']['p95']} ms")
    return "\n".join(lines)
