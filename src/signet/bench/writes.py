"""Write-side speed in process. `bench_ingest` (`signet bench embed-ingest`) times `remember_many`
until the embed worker has stored the last vector, with CPU seconds per memory; `bench_remember`
(`signet bench remember`) times single remembers on a store of N memories: the raw write a client
waits for.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from signet.app import SignetApp
from signet.bench.load import _children, tree_cpu_seconds
from signet.bench.metrics import percentile
from signet.bench.perf import synthetic_corpus
from signet.config import Config
from signet.workers.loop import WorkerLoop

__all__ = ["bench_ingest", "bench_remember"]

BATCH = 256
WRITE_PATHS = ("deferred", "inline")


def _config(
    workspace: Path, write_path: str, *, pipeline: bool, model: str = "", processes: int = -1,
) -> Config:
    config = Config.default(workspace)
    if processes < 0:
        processes = config.embedding.worker_processes
    return config.replace(
        pipeline=dataclasses.replace(config.pipeline, enabled=pipeline),
        embedding=dataclasses.replace(
            config.embedding, write_path="inline" if write_path == "inline" else "deferred",
            model=model or config.embedding.model, worker_processes=processes,
        ),
    )


def bench_ingest(
    n: int, write_path: str = "deferred", *, workdir: Path | None = None,
    progress: Callable[[str], None] | None = None, model: str = "", processes: int = -1,
) -> dict[str, Any]:
    """Ingest `n` synthetic memories with the bundled model until every one has its vector;
    `model` picks one of the local provider's models (default: the configured default),
    `processes` the embed worker's child processes (`embedding.worker_processes`; -1: its
    default)."""
    if write_path not in WRITE_PATHS:
        raise ValueError(f"write_path must be one of {', '.join(WRITE_PATHS)}")
    corpus = synthetic_corpus(n, seed=23)
    with tempfile.TemporaryDirectory(prefix="signet-ingest-", dir=workdir) as tmp:
        config = _config(Path(tmp), write_path, pipeline=False, model=model, processes=processes)
        with SignetApp.open(config) as app:
            assert app.embedder is not None, "the bench needs the bundled model"
            rate = _model_rate(app, corpus)
            result = _ingest(app, corpus, write_path, progress)
            used = app.embedder.model
    return {"n": n, "write_path": write_path, "model": used,
            "worker_processes": config.embedding.worker_processes, **result, "model_only": rate}


def _model_rate(app: SignetApp, corpus: list[str]) -> dict[str, float]:
    """The model alone on (a sample of) the same texts: texts per CPU second and per second."""
    assert app.embedder is not None
    app.embedder.embed(["warm up the session"])
    sample = corpus[: min(len(corpus), 512)]
    wall, cpu = time.perf_counter(), time.process_time()
    app.embedder.embed(sample)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"texts_per_cpu_second": round(len(sample) / cpu, 1),
            "texts_per_second": round(len(sample) / wall, 1)}


def _ingest(
    app: SignetApp, corpus: list[str], write_path: str,
    progress: Callable[[str], None] | None,
) -> dict[str, Any]:
    embed = [w for w in app.workers() if w.name == "embed"]
    stop, wake = threading.Event(), threading.Event()

    def sleep(_stop: threading.Event, seconds: float) -> None:
        wake.wait(seconds)
        wake.clear()

    loop = WorkerLoop(embed, idle_sleep_s=0.5, sleep=sleep)
    app.memory.on_deferred = wake.set  # as the daemon wires it
    thread = threading.Thread(target=loop.run, args=(stop,), name="bench-embed", daemon=True)
    wall, cpu = time.perf_counter(), time.process_time()
    child_cpu = _children_cpu()
    thread.start()
    try:
        for start in range(0, len(corpus), BATCH):
            app.remember_many([{"content": t} for t in corpus[start : start + BATCH]])
            if progress and (start // BATCH) % 8 == 0:
                progress(f"ingest ({write_path}): written {min(start + BATCH, len(corpus))}"
                         f"/{len(corpus)}")
        written = time.perf_counter() - wall
        while _unembedded(app):
            time.sleep(0.02)
    finally:
        stop.set()
        wake.set()
        thread.join(30)
        total, cpu = time.perf_counter() - wall, time.process_time() - cpu
        child_cpu = _children_cpu() - child_cpu  # read before the app closes its child
    n = len(corpus)
    return {
        "written_per_second": round(n / written, 1),
        "ingest_per_second": round(n / total, 1),
        "seconds": round(total, 2),
        # this process (writes, the worker's thread) and the embedding process beside it
        "cpu_ms_per_memory": round((cpu + child_cpu) * 1000 / n, 2),
        "writer_cpu_ms_per_memory": round(cpu * 1000 / n, 2),
        "embed_process_cpu_ms_per_memory": round(child_cpu * 1000 / n, 2),
        "embed_ticks": loop.state()["embed"]["work_done"],
    }


def _children_cpu() -> float:
    """CPU seconds of this process's running children (the embedding process)."""
    return sum(tree_cpu_seconds(child) for child in _children(os.getpid()))


def _unembedded(app: SignetApp) -> int:
    queued = app.job_depths().get("embed", {})
    return queued.get("pending", 0) + queued.get("leased", 0)


def bench_remember(
    n: int, calls: int = 300, *, workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Fill a store with `n` memories (deferred: raw writes), then time `calls` remembers."""
    corpus = synthetic_corpus(n + calls, seed=29)
    with tempfile.TemporaryDirectory(prefix="signet-remember-", dir=workdir) as tmp:
        with SignetApp.open(_config(Path(tmp), "deferred", pipeline=True)) as app:
            filled = time.perf_counter()
            for start in range(0, n, 1024):
                app.remember_many([{"content": t} for t in corpus[start : min(start + 1024, n)]])
                if progress and (start // 1024) % 10 == 0:
                    progress(f"remember: filled {min(start + 1024, n)}/{n}")
            fill_s = time.perf_counter() - filled
            latencies, own, cpu = [], [], time.process_time()
            for text in corpus[n:]:
                mark, thread_mark = time.perf_counter(), time.thread_time()
                result = app.remember(text)
                latencies.append((time.perf_counter() - mark) * 1000)
                # The call's own CPU: its wall time less what a busy machine's scheduler took.
                own.append((time.thread_time() - thread_mark) * 1000)
                assert not result.deduped and not result.embedded
            cpu = time.process_time() - cpu
    return {
        "n": n, "calls": calls, "fill_per_second": round(n / fill_s, 1),
        "remember_ms": {"p50": round(percentile(latencies, 50), 2),
                        "p95": round(percentile(latencies, 95), 2),
                        "max": round(max(latencies), 2)},
        "remember_cpu_ms": {"p50": round(percentile(own, 50), 2),
                            "p95": round(percentile(own, 95), 2)},
        "cpu_ms_per_remember": round(cpu * 1000 / calls, 2),
    }
