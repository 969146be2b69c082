"""`signet bench daemon-start`: from spawning `signet daemon start --foreground` on a store of N
memories to `/health` answering (target p95 <= 2 s), to the first authenticated `/api/status`,
and to the first recall (which loads the model and vectors). Each wall time is given with the
daemon's CPU time from /proc, which load does not stretch.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from signet.bench.hooks_latency import _fill
from signet.bench.load import Daemon
from signet.bench.metrics import percentile
from signet.bench.perf import synthetic_corpus, synthetic_queries
from signet.workspace import init_workspace

__all__ = ["TARGET_P95_MS", "format_daemon_start", "run_daemon_start"]

TARGET_P95_MS = 2000.0
POLL_S = 0.01
STAGES = ("health", "status", "recall")


def run_daemon_start(
    runs: int = 10, memories: int = 1000, *, embedder: str = "local",
    workdir: Path | None = None, progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    if runs < 1 or memories < 0:
        raise ValueError("runs must be positive and memories not negative")
    with tempfile.TemporaryDirectory(prefix="signet-start-", dir=workdir) as tmp:
        workspace = init_workspace(Path(tmp) / "ws").workspace
        (workspace / "agent.yaml").write_text(f"embedding:\n  provider: {embedder}\n")
        corpus = synthetic_corpus(max(memories, 1), seed=7)
        if memories:
            _fill(workspace, corpus[:memories], progress)
        queries = synthetic_queries(corpus, runs)
        samples = []
        for i in range(runs):
            if progress:
                progress(f"daemon-start: run {i + 1}/{runs}")
            samples.append(_one(workspace, queries[i]))
    figures = {
        stage: {
            "wall_p50_ms": round(percentile([s[stage][0] for s in samples], 50), 1),
            "wall_p95_ms": round(percentile([s[stage][0] for s in samples], 95), 1),
            "cpu_p50_ms": round(percentile([s[stage][1] for s in samples], 50), 1),
            "cpu_p95_ms": round(percentile([s[stage][1] for s in samples], 95), 1),
        }
        for stage in STAGES
    }
    return {
        "command": "signet daemon start --foreground", "runs": runs, "memories": memories,
        "embedder": embedder, "load_average": [round(x, 2) for x in os.getloadavg()],
        **figures, "target_p95_ms": TARGET_P95_MS,
        "meets_target": figures["health"]["wall_p95_ms"] <= TARGET_P95_MS,
    }


def _one(workspace: Path, query: str) -> dict[str, tuple[float, float]]:
    """(wall ms from spawn, daemon CPU ms) at each stage of one daemon's start."""
    started = time.perf_counter()
    daemon = Daemon(workspace)
    out: dict[str, tuple[float, float]] = {}
    try:
        with httpx.Client(base_url=daemon.url, timeout=60.0) as http:
            _until(daemon, lambda: _health(http, daemon.proc.pid))
            out["health"] = _stamp(started, daemon)
            headers = daemon._headers()
            reply = http.get("/api/status", headers=headers)
            reply.raise_for_status()
            out["status"] = _stamp(started, daemon)
            reply = http.post("/api/memory/recall", headers=headers,
                              json={"query": query, "limit": 10})
            reply.raise_for_status()
            out["recall"] = _stamp(started, daemon)
    finally:
        daemon.stop()
    return out


def _health(http: httpx.Client, pid: int) -> bool:
    try:
        reply = http.get("/health", timeout=0.5)
    except httpx.HTTPError:
        return False
    return reply.status_code == 200 and reply.json().get("pid") == pid


def _until(daemon: Daemon, ok: Callable[[], bool], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if daemon.proc.poll() is not None:
            raise RuntimeError(f"the daemon exited {daemon.proc.returncode}: "
                               f"{daemon.output.read_text(errors='replace')[-500:]}")
        if ok():
            return
        time.sleep(POLL_S)
    raise RuntimeError("the daemon did not answer /health in time")


def _stamp(started: float, daemon: Daemon) -> tuple[float, float]:
    return (time.perf_counter() - started) * 1000, daemon.cpu_seconds() * 1000


def format_daemon_start(result: dict[str, Any]) -> str:
    lines = [f"{result['command']} ({result['memories']} memories, {result['embedder']}"
             f" embeddings, {result['runs']} runs), load {result['load_average']}"]
    names = {"health": "/health", "status": "/api/status", "recall": "first recall"}
    for stage in STAGES:
        f = result[stage]
        lines.append(f"  {names[stage]:13} wall p50 {f['wall_p50_ms']:7.1f} / p95 "
                     f"{f['wall_p95_ms']:7.1f} ms   daemon CPU p50 {f['cpu_p50_ms']:7.1f} / p95 "
                     f"{f['cpu_p95_ms']:7.1f} ms")
    verdict = "meets" if result["meets_target"] else "misses"
    lines.append(f"  target: /health p95 <= {result['target_p95_ms']:.0f} ms ({verdict} it)")
    return "\n".join(lines)
