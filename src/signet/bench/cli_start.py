"""`signet bench cli`: the `signet` command as a whole process, spawn to exit: `signet --version`
(target 150 ms) and `signet recall` against a running daemon (target 300 ms). Load and CPU time
are recorded beside the wall time, which load moves most.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from signet.bench.load import Daemon
from signet.bench.metrics import percentile
from signet.bench.perf import synthetic_corpus, synthetic_queries

__all__ = ["TARGETS_MS", "format_cli", "run_cli"]

TARGETS_MS = {"version": 150.0, "recall": 300.0}
CORPUS_SIZE = 200
EMBEDDERS = ("local", "none")


def run_cli(
    runs: int = 20,
    *,
    embedder: str = "local",
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """p50/p95 wall time of `signet --version` and of `signet recall` through a daemon."""
    if embedder not in EMBEDDERS:
        raise ValueError(f"embedder must be one of {', '.join(EMBEDDERS)}")
    if runs < 1:
        raise ValueError("runs must be positive")
    command = signet_command()
    with tempfile.TemporaryDirectory(prefix="signet-cli-", dir=workdir) as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        (workspace / "agent.yaml").write_text(f"embedding:\n  provider: {embedder}\n")
        env = {**os.environ, "SIGNET_WORKSPACE": str(workspace)}
        if progress:
            progress(f"cli: {runs} x `signet --version`")
        version = [_timed([*command, "--version"], env) for _ in range(runs)]
        daemon = Daemon(workspace)
        try:
            if progress:
                progress(f"cli: starting a daemon ({embedder} embeddings), {CORPUS_SIZE} memories")
            queries = _fill(daemon)
            env["SIGNET_PORT"] = str(daemon.port)
            if progress:
                progress(f"cli: {runs} x `signet recall QUERY` against it")
            recall = [_timed([*command, "recall", queries[i % len(queries)]], env)
                      for i in range(runs)]
        finally:
            daemon.stop()
    return {
        "command": " ".join(Path(command[0]).name if i == 0 else part
                            for i, part in enumerate(command)),
        "embedder": embedder, "runs": runs, "load_average": [round(x, 2) for x in os.getloadavg()],
        "version": _summary(version, TARGETS_MS["version"]),
        "recall": _summary(recall, TARGETS_MS["recall"]),
    }


def signet_command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m signet`."""
    script = Path(sys.executable).parent / "signet"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    found = shutil.which("signet")
    return [found] if found else [sys.executable, "-m", "signet"]


def _fill(daemon: Daemon) -> list[str]:
    headers = daemon.wait_ready()
    corpus = synthetic_corpus(CORPUS_SIZE, seed=3)
    with httpx.Client(base_url=daemon.url, headers=headers, timeout=60) as http:
        for content in corpus:
            http.post("/api/memory/remember", json={"content": content}).raise_for_status()
    return synthetic_queries(corpus, 50)


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one process, in ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    elapsed = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[-2:])} exited {done.returncode}: {done.stderr[-300:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return elapsed, cpu


def _summary(samples: list[tuple[float, float]], target: float) -> dict[str, Any]:
    # Wall time is what the target is about; CPU time is the process's own cost, which the
    # machine's load does not inflate, so figures taken under load stay comparable.
    wall, cpu = [w for w, _ in samples], [c for _, c in samples]
    p95 = percentile(wall, 95)
    return {"p50_ms": round(percentile(wall, 50), 1), "p95_ms": round(p95, 1),
            "cpu_p50_ms": round(percentile(cpu, 50), 1), "cpu_p95_ms": round(percentile(cpu, 95), 1),
            "target_ms": target, "meets_target": p95 <= target}


def format_cli(result: dict[str, Any]) -> str:
    """One row per command, with its target."""
    lines = [f"{'command':<22} {'p50 ms':>8} {'p95 ms':>8} {'target ms':>10} {'met':>4}"
             f" {'CPU p50 ms':>11} {'CPU p95 ms':>11}"]
    for name, label in (("version", "signet --version"), ("recall", "signet recall (daemon)")):
        row = result[name]
        lines.append(f"{label:<22} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['target_ms']:>10g}"
                     f" {'yes' if row['meets_target'] else 'no':>4}"
                     f" {row['cpu_p50_ms']:>11} {row['cpu_p95_ms']:>11}")
    load = ", ".join(str(x) for x in result["load_average"])
    lines.append(f"({result['runs']} runs each, {result['embedder']} embeddings, load {load})")
    return "\n".join(lines)
