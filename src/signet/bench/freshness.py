"""`signet bench freshness`: how long after `remember` answers a memory is found by meaning, against
a real daemon with the bundled model, idle and beside `bench load`'s traffic. Each probe checks
keyword recall finds it at once, then polls vector-only recall every `poll_ms` (an upper bound).
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from signet.bench import load as load_bench
from signet.bench.metrics import percentile
from signet.bench.perf import synthetic_corpus

__all__ = ["format_freshness", "run_freshness"]

GIVE_UP_S = 120.0


def run_freshness(
    probes: int = 30,
    clients: Sequence[int] = (0, 50),
    seconds: float = 20.0,
    *,
    poll_ms: float = 20.0,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """One daemon per client count; `probes` probes each (fewer under load when the load's
    `seconds` run out first)."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="signet-fresh-", dir=workdir) as tmp:
        for n in clients:
            if progress:
                progress(f"freshness: {probes} probes, {n} background clients")
            runs.append(_one_run(Path(tmp) / f"ws-{n}", probes, n, seconds, poll_ms / 1000))
    return {"probes": probes, "poll_ms": poll_ms, "runs": runs}


def _one_run(
    workspace: Path, probes: int, clients: int, seconds: float, poll_s: float
) -> dict[str, Any]:
    workspace.mkdir(parents=True)
    (workspace / "agent.yaml").write_text(
        "embedding:\n  provider: local\n"
        f"auth:\n  rate_limit_per_minute: {load_bench.NO_RATE_LIMIT}\n"
    )
    daemon = load_bench.Daemon(workspace)
    try:
        headers = daemon.wait_ready()
        with httpx.Client(base_url=daemon.url, headers=headers, timeout=GIVE_UP_S) as http:
            http.post(load_bench.RECALL, json={"query": "warm up the model", "mode": "vector"})
            background = _Background(daemon.url, headers, clients, seconds)
            background.start()
            samples = _probes(http, probes, poll_s, background)
            background.join()
    finally:
        daemon.stop()
    return _report(clients, samples, background)


class _Background:
    """`bench load`'s mixed clients on a thread of their own (nothing when clients is 0)."""

    def __init__(self, url: str, headers: dict[str, str], clients: int, seconds: float) -> None:
        self.clients, self.seconds = clients, seconds
        self.logs: list[Any] = []
        self.ends_at = 0.0
        self._thread = threading.Thread(
            target=self._run, args=(url, headers), name="freshness-load", daemon=True
        )

    def start(self) -> None:
        if self.clients:
            self.ends_at = time.monotonic() + self.seconds
            self._thread.start()
            time.sleep(self.seconds / 5)  # a backlog first: probes meet a busy embed worker

    def _run(self, url: str, headers: dict[str, str]) -> None:
        self.logs = load_bench.drive(url, headers, self.clients, self.seconds)

    def running(self) -> bool:
        return self.clients == 0 or time.monotonic() < self.ends_at

    def join(self) -> None:
        if self.clients:
            self._thread.join()


def _probes(
    http: httpx.Client, probes: int, poll_s: float, background: _Background
) -> list[dict[str, Any]]:
    corpus = synthetic_corpus(probes, seed=4242)
    samples = []
    for i, sentence in enumerate(corpus):
        if not background.running():
            break
        samples.append(_probe(http, f"freshness probe {i}: {sentence}", poll_s))
    return samples


def _probe(http: httpx.Client, text: str, poll_s: float) -> dict[str, Any]:
    started = time.perf_counter()
    reply = http.post(load_bench.REMEMBER, json={"content": text})
    remember_ms = (time.perf_counter() - started) * 1000
    reply.raise_for_status()
    memory_id, embedded = reply.json()["id"], reply.json()["embedded"]
    lexical = _found(http, text, memory_id, "keyword")
    while not _found(http, text, memory_id, "vector"):
        if time.perf_counter() - started > GIVE_UP_S:
            return {"remember_ms": remember_ms, "embedded": embedded, "lexical": lexical,
                    "fresh_ms": None}
        time.sleep(poll_s)
    fresh_ms = (time.perf_counter() - started) * 1000
    return {"remember_ms": remember_ms, "embedded": embedded, "lexical": lexical,
            "fresh_ms": fresh_ms}


def _found(http: httpx.Client, text: str, memory_id: str, mode: str) -> bool:
    reply = http.post(load_bench.RECALL, json={"query": text, "mode": mode, "limit": 10})
    reply.raise_for_status()
    for hit in reply.json()["results"]:
        if hit["id"] == memory_id:
            channel = "semantic" if mode == "vector" else "lexical"
            return hit["evidence"].get(channel) is not None
    return False


def _report(clients: int, samples: list[dict[str, Any]], background: _Background) -> dict[str, Any]:
    remember = [s["remember_ms"] for s in samples]
    fresh = [s["fresh_ms"] for s in samples if s["fresh_ms"] is not None]
    deferred = [s for s in samples if not s["embedded"]]
    out: dict[str, Any] = {
        "clients": clients, "probes": len(samples),
        "remember_ms": _stats(remember),
        "fresh_ms": {**_stats(fresh), "max": round(max(fresh), 1) if fresh else None},
        "never_fresh": len(samples) - len(fresh),
        "returned_unembedded": len(deferred),
        "found_lexically_before_embedding": sum(1 for s in deferred if s["lexical"]),
    }
    if clients:
        out["background"] = load_bench.summarise(clients, background.seconds, background.logs)
    return out


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None}
    return {"p50": round(percentile(values, 50), 1), "p95": round(percentile(values, 95), 1)}


def format_freshness(result: dict[str, Any]) -> str:
    lines = [f"{'clients':>7} {'probes':>6} {'remember p50/p95 ms':>20} {'fresh p50/p95/max ms':>24}"
             f" {'lexical before embed':>20} {'background req/s':>16}"]
    for run in result["runs"]:
        rem, fresh = run["remember_ms"], run["fresh_ms"]
        lexical = f"{run['found_lexically_before_embedding']}/{run['returned_unembedded']}"
        load = run.get("background", {}).get("throughput_rps", "-")
        remembered = f"{rem['p50']} / {rem['p95']}"
        fresh_cell = f"{fresh['p50']} / {fresh['p95']} / {fresh['max']}"
        lines.append(
            f"{run['clients']:>7} {run['probes']:>6} {remembered:>20} {fresh_cell:>24}"
            f" {lexical:>20} {load:>16}"
        )
    return "\n".join(lines)
