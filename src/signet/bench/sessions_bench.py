"""Session benchmarks. `run_memaware_transcripts` imports the MemAware haystack as transcripts,
summarises them without an LLM and asks every question, on three fresh stores: "windows" (the
windows as memories), "transcripts" (the summaries alone) and "both". `run_sessions` measures
import, re-import and summary throughput.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from signet.app import SignetApp
from signet.bench.datasets import BenchDoc, load_memaware, load_memaware_haystack
from signet.bench.metrics import memaware_groups, score
from signet.bench.retrieval import _ask, _ingest, bench_data_dir
from signet.config import Config

__all__ = ["VARIANTS", "run_memaware_transcripts", "run_sessions"]

VARIANTS = ("windows", "transcripts", "both")
DEPTH = 50  # memories asked for per question: windows pool back to sessions


def _paths(sessions: Path | None, questions: Path | None) -> tuple[Path, Path]:
    """The given files, else the development data (found only when needed)."""
    if sessions is not None and questions is not None:
        return sessions, questions
    root = bench_data_dir() / "memaware"
    return sessions or root / "sessions", questions or root / "questions-dev.json"


def _config(root: Path) -> Config:
    """The pipeline on (the summary worker runs under it), hints off: only what is measured."""
    config = Config.default(root)
    pipeline = config.pipeline
    hints = dataclasses.replace(pipeline.hints, enabled=False)
    return config.replace(
        pipeline=dataclasses.replace(pipeline, enabled=True, hints=hints),
        embedding=dataclasses.replace(config.embedding, write_path="inline"),  # stored embedded
    )


def run_memaware_transcripts(
    sessions: Path | None, questions_path: Path | None, modes: Sequence[str], *,
    limit: int | None = None, progress: Callable[[str], None] | None = None,
    embedder: Any = "config", workdir: Path | None = None,
) -> dict[str, Any]:
    sessions, questions_path = _paths(sessions, questions_path)
    whole, questions = load_memaware(sessions, questions_path, unit="session")
    windows, _ = load_memaware(sessions, questions_path, unit="window")
    if limit:
        questions = questions[:limit]
    groups = memaware_groups(questions)
    results: dict[str, Any] = {}
    latency: dict[str, Any] = {}
    stats: dict[str, Any] = {}

    def ask(app: SignetApp, variant: str, keys_of: dict[str, list[str]]) -> None:
        if progress:
            progress(f"{variant}: {len(keys_of)} memories; asking {len(questions)} questions")
        for mode in modes:
            ranked: dict[str, list[str]] = {}
            times: list[float] = []
            _ask(app, questions, mode, keys_of, DEPTH, ranked, times)
            results[f"{variant}/{mode}"] = score(questions, ranked, groups)
            times.sort()
            latency[f"{variant}/{mode}"] = {"p50": times[len(times) // 2]} if times else {}

    with tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir) as tmp:
        # One store asked twice: the windows alone, then with the transcripts' summaries added
        # ("both"); a second store holds the summaries alone ("transcripts").
        with SignetApp.open(_config(Path(tmp) / "windows"), embedder=embedder, llm=None) as app:
            keys_of = _ingest(app, windows)
            ask(app, "windows", keys_of)
            stats["both"] = _import_and_summarise(app, whole, progress)
            ask(app, "both", {**keys_of, **_summary_keys(app)})
        with SignetApp.open(_config(Path(tmp) / "transcripts"), embedder=embedder, llm=None) as app:
            stats["transcripts"] = _import_and_summarise(app, whole, progress)
            ask(app, "transcripts", _summary_keys(app))
        results = {f"{v}/{m}": results[f"{v}/{m}"] for v in VARIANTS for m in modes}
    return {"results": results, "latency_ms": latency, "lineage": stats}


def _import_and_summarise(
    app: SignetApp, docs: Sequence[BenchDoc], progress: Callable[[str], None] | None
) -> dict[str, Any]:
    started = time.perf_counter()
    messages = 0
    for doc in docs:
        result = app.import_transcript(harness="generic", content=doc.text, session_id=doc.key)
        messages += result["session"]["message_count"]
    imported = time.perf_counter() - started
    if progress:
        progress(f"imported {len(docs)} sessions ({messages} messages) in {imported:.1f}s; summarising")
    started = time.perf_counter()
    app.run_pipeline_until_idle(only=("summary",))
    summarised = time.perf_counter() - started
    head = app.synthesize_memory_md()
    listed = app.session_list(limit=1000)
    statuses: dict[str, int] = {}
    for offset in range(0, listed["total"], 1000):
        for item in app.session_list(limit=1000, offset=offset)["items"]:
            statuses[item["summary_status"] or "none"] = statuses.get(item["summary_status"] or "none", 0) + 1
    threads = app.threads()["items"]
    return {
        "sessions": len(docs), "messages": messages, "import_seconds": round(imported, 2),
        "summary_seconds": round(summarised, 2), "statuses": statuses,
        "gate_skip_rate": round(statuses.get("skipped", 0) / max(len(docs), 1), 4),
        "arcs": sum(t["arcs"] for t in threads), "epochs": sum(t["epochs"] for t in threads),
        "memory_md_tokens": head["tokens"],
    }


def _summary_keys(app: SignetApp) -> dict[str, list[str]]:
    """Memory id -> [the session it cites], for every memory the lineage wrote."""
    keys: dict[str, list[str]] = {}
    offset = 0
    while True:
        page = app.list(limit=1000, offset=offset)
        for memory in page.items:
            if memory.source_type in ("session", "pipeline") and memory.source_id:
                keys[memory.id] = [memory.source_id]
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return keys


def run_sessions(
    sessions: Path | None, *, n: int | None = None, embedder: Any = "config",
    progress: Callable[[str], None] | None = None, workdir: Path | None = None,
) -> dict[str, Any]:
    if sessions is None:
        sessions = bench_data_dir() / "memaware" / "sessions"
    docs = load_memaware_haystack(sessions, unit="session")
    docs = docs[:n] if n else docs
    with tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir) as tmp:
        with SignetApp.open(_config(Path(tmp) / "ws"), embedder=embedder, llm=None) as app:
            stats = _import_and_summarise(app, docs, progress)
            started = time.perf_counter()
            for doc in docs:
                app.import_transcript(harness="generic", content=doc.text, session_id=doc.key)
            again = time.perf_counter() - started
    summarised = stats["sessions"] - stats["statuses"].get("skipped", 0)
    return {
        **stats,
        "import_sessions_per_s": round(stats["sessions"] / max(stats["import_seconds"], 1e-9), 1),
        "import_messages_per_s": round(stats["messages"] / max(stats["import_seconds"], 1e-9), 1),
        "reimport_sessions_per_s": round(len(docs) / max(again, 1e-9), 1),
        "summaries": summarised,
        "summary_sessions_per_s": round(stats["sessions"] / max(stats["summary_seconds"], 1e-9), 1),
        "embedder": "none" if embedder is None else "local",
    }

