"""`signet bench store`: both backends in one run through the real CLI, with the bundled
embedding model; the vector channel is exact on both, so their top 10s agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_bench_store_runs_both_backends_side_by_side(pg_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "SIGNET_WORKSPACE": str(tmp_path / "ws"),
           "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "store", "--n", "60", "--queries", "8",
         "--store-url", pg_url, "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for backend in ("sqlite", "postgres"):
        leg = result[backend]
        assert leg["ingest_per_second"] > 0 and leg["size_mb"] > 0
        assert 0 < leg["lexical_ms"]["p50"] <= leg["lexical_ms"]["p95"]
        assert 0 < leg["vector_ms"]["p50"] <= leg["vector_ms"]["p95"]
    assert result["top10_overlap"]["vector"] == 1.0
    assert 0 < result["top10_overlap"]["lexical"] <= 1.0
    assert "postgres: done" in done.stderr
    # A second run on the same (now full) database is refused rather than measuring a mix.
    again = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "store", "--n", "5", "--queries", "1",
         "--backend", "postgres", "--store-url", pg_url],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert again.returncode != 0 and "needs an empty postgres store" in again.stderr
