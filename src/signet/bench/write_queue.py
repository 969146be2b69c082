"""`signet bench writer`: a request's remember latency while background threads keep the single
SQLite writer busy, per way of choosing who writes next: `queue` (store/write_queue.py as
shipped, the request in the foreground lane), `fifo` (one lane) and `lock` (a plain RLock).
Reported: the foreground p50/p95/p99/max and the background writes per second.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from signet.app import SignetApp
from signet.bench.metrics import percentile
from signet.config import Config
from signet.store.write_queue import background_writes
from signet.types import Actor

__all__ = ["MODES", "bench_writer", "format_writer"]

MODES = ("queue", "fifo", "lock")
THINK_S = 0.005  # the request's pause between calls: a stream of requests, not a flood


class _PlainLock:
    """The writer lock the queue replaced, for comparison: an RLock, no order, no lanes."""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        with self._lock:
            yield

    def waiting(self) -> tuple[int, int]:
        return (0, 0)


def bench_writer(
    calls: int = 200, workers: int = 4, modes: tuple[str, ...] = MODES, *,
    workdir: Path | None = None, progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Time `calls` foreground remembers beside `workers` busy background writers, per mode."""
    unknown = set(modes) - set(MODES)
    if unknown or calls < 1 or workers < 0:
        raise ValueError(f"modes among {', '.join(MODES)}, calls >= 1, workers >= 0")
    results = {}
    for mode in modes:
        if progress:
            progress(f"writer bench: {mode}, {workers} background writer(s), {calls} calls")
        results[mode] = _run(mode, calls, workers, workdir)
    return {"calls": calls, "workers": workers, "think_ms": THINK_S * 1000, "modes": results}


def _run(mode: str, calls: int, workers: int, workdir: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="signet-writer-", dir=workdir) as tmp:
        with SignetApp.open(Config.default(Path(tmp)), embedder=None, llm=None) as app:
            if mode == "lock":
                app.store._queue = _PlainLock()  # type: ignore[assignment]
            stop, written = threading.Event(), [0] * workers
            failures: list[BaseException] = []
            threads = [threading.Thread(target=_background, args=(app, stop, written, i,
                                                                  mode == "queue", failures))
                       for i in range(workers)]
            for thread in threads:
                thread.start()
            started = time.perf_counter()
            try:
                latencies = _foreground(app, calls)
            finally:
                stop.set()
                for thread in threads:
                    thread.join()
            seconds = time.perf_counter() - started
            if failures:
                raise RuntimeError(f"a background writer failed: {failures[0]!r}") from failures[0]
    return {
        "p50_ms": round(percentile(latencies, 50), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2),
        "background_writes_per_s": round(sum(written) / seconds, 1),
    }


def _foreground(app: SignetApp, calls: int) -> list[float]:
    actor = Actor(name="bench-request", type="operator")
    latencies = []
    for i in range(calls):
        time.sleep(THINK_S)
        began = time.perf_counter()
        app.remember(f"Request number {i} asks to keep note {i * 7919 % 10007}.", actor=actor)
        latencies.append((time.perf_counter() - began) * 1000)
    return latencies


def _background(
    app: SignetApp, stop: threading.Event, written: list[int], index: int, lane: bool,
    failures: list[BaseException],
) -> None:
    actor = Actor(name=f"bench-worker-{index}", type="daemon")
    try:
        with background_writes() if lane else contextlib.nullcontext():
            n = 0
            while not stop.is_set():
                app.remember(f"Worker {index} stores background fact {n}.", actor=actor)
                n += 1
                written[index] = n
    except BaseException as exc:  # reported by the bench, not lost in a thread
        failures.append(exc)
        stop.set()


def format_writer(result: dict[str, Any]) -> str:
    lines = [f"remember beside {result['workers']} busy background writer(s), "
             f"{result['calls']} calls, {result['think_ms']:.0f} ms apart"]
    lines.append(f"{'mode':<6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8} {'bg/s':>8}")
    for mode, r in result["modes"].items():
        lines.append(f"{mode:<6} {r['p50_ms']:>8} {r['p95_ms']:>8} {r['p99_ms']:>8} "
                     f"{r['max_ms']:>8} {r['background_writes_per_s']:>8}")
    return "\n".join(lines)
