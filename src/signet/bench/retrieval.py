"""The retrieval benchmarks: ingest through the real remember path, ask every question through the
real recall, score per category or tier, all modes side by side. Each group gets a fresh
workspace with the bundled model and no LLM (or a scratch PostgreSQL database); a doc's key is
its memory's `source_id`. Runs repeat exactly: the clock stands at `BENCH_NOW`, ids come from a
generator seeded per group, and accesses are recorded before each mode is asked.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from signet.app import SignetApp
from signet.bench.datasets import (
    BenchDoc,
    BenchQuestion,
    load_locomo,
    load_memaware,
    with_dialogue,
)
from signet.bench.llm_cache import SessionCachedLLM
from signet.bench.metrics import locomo_groups, memaware_groups, percentile, score
from signet.clock import ManualClock
from signet.config import Config, StoreConfig
from signet.errors import InvalidInput, NotOnBackend
from signet.ids import seeded_ids
from signet.pipeline.vocab_hints import VocabularyHints
from signet.providers.embedder import Embedder
from signet.providers.embedding_cache import CachedEmbedder
from signet.recall import combine
from signet.services.providers import configured_embedder
from signet.services.store_backend import scratch_store_url
from signet.types import RecallQuery, RecallResponse
from signet.workers.hints_worker import HintsWorker
from signet.workers.loop import WorkerLoop

# Sees every response: (the question, or None for a negative query; mode; response; doc keys
# of each memory id). The confidence calibration (bench/calibration.py) collects through it.
Observer = Callable[[BenchQuestion | None, str, RecallResponse, dict[str, list[str]]], None]

MODE_TO_RECALL = {"bm25": "keyword", "vector": "vector", "hybrid": "hybrid", "full": "full"}
ALL_MODES = ("bm25", "vector", "hybrid", "full")
INGEST_BATCH = 256
BENCH_NOW = datetime(2026, 1, 1, tzinfo=UTC)
MAX_RETRY_ROUNDS = 10  # with --llm: rounds per session for jobs waiting out a failed call


@dataclass
class BenchResult:
    results: dict[str, dict[str, dict[str, float]]]
    latency_ms: dict[str, dict[str, float]]
    ingest: dict[str, float]
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Per mode (and fusion variant), each question's ranked doc keys (bench/loo.py reads them).
    ranked: dict[str, dict[str, list[str]]] = dataclasses.field(default_factory=dict)
    questions: list[BenchQuestion] = dataclasses.field(default_factory=list)
    # With `candidates`: each question's candidates (recall/combine.py), for bench/combiner_fit.py.
    candidates: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)

    def to_json(self, timings: bool = True) -> dict[str, Any]:
        """`timings` False leaves out latencies and ingest times, the only parts of the output
        that differ between two runs of the same code."""
        if not timings:
            counts = {k: v for k, v in self.ingest.items() if k == "docs"}
            return {**self.results, "ingest": counts, **self.extra}
        return {**self.results, "latency_ms": self.latency_ms, "ingest": self.ingest, **self.extra}


def bench_data_dir() -> Path:
    """Where the development data lives: $SIGNET_BENCH_DATA, else ../shared/bench-data."""
    env = os.environ.get("SIGNET_BENCH_DATA")
    candidates = [Path(env)] if env else []
    candidates += [Path.cwd().parent / "shared" / "bench-data"]
    candidates += [p / "shared" / "bench-data" for p in Path(__file__).resolve().parents]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise InvalidInput("benchmark data not found: set SIGNET_BENCH_DATA or pass the files")


def parse_modes(mode: str) -> tuple[str, ...]:
    if mode == "all":
        return ALL_MODES
    modes = tuple(m.strip() for m in mode.split(","))
    unknown = [m for m in modes if m not in MODE_TO_RECALL]
    if unknown:
        raise InvalidInput(f"unknown mode(s) {unknown} (bm25, vector, hybrid, full, all)")
    return modes


def run(
    docs: Sequence[BenchDoc],
    questions: Sequence[BenchQuestion],
    groups: dict[str, list[str]],
    modes: Sequence[str],
    *,
    config_for: Callable[[Path], Config] | None = None,
    embedder: Embedder | None | str = "config",
    depth: int = 10,
    progress: Callable[[str], None] | None = None,
    workdir: Path | None = None,
    hints: bool = False,
    after_ask: Callable[[SignetApp, list[BenchQuestion], dict[str, list[str]]], None] | None = None,
    cache: Path | None = None,
    observe: Observer | None = None,
    negatives: Sequence[str] = (),
    store_url: str | None = None,
    leads: Sequence[float | tuple[float, float]] = (),
    llm: SessionCachedLLM | None = None,
    candidates: bool = False,
) -> BenchResult:
    """Run the benchmark over `docs` and `questions`. `hints` runs the hints worker after ingest;
    `after_ask` is called per group after the modes were asked (bench/injection.py); `cache` is
    the embedding cache folder; `observe` sees every response and the `negatives` are asked in
    every store; `store_url` a PostgreSQL server for scratch databases; `leads` extra hybrid
    variants for bench/loo.py; `llm` runs the whole write path through a model
    (bench/llm_cache.py); `candidates` keeps each question's candidates for the combiner's fit
    (bench/combiner_fit.py)."""
    ranked: dict[str, dict[str, list[str]]] = {m: {} for m in modes}
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    pairs = [x if isinstance(x, tuple) else (x, 0.0) for x in leads]
    variants = {variant_name(*x): x for x in pairs}
    ranked.update({name: {} for name in variants})
    found: dict[str, list[dict[str, Any]]] = {}
    ingest = {"docs": 0.0, "seconds": 0.0}
    by_group: dict[str, list[BenchDoc]] = {}
    for doc in docs:
        by_group.setdefault(doc.group, []).append(doc)
    with tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir) as tmp:
        for index, (group, group_docs) in enumerate(by_group.items()):
            config = (config_for or Config.default)(Path(tmp) / f"ws{index}")
            # Recall quality over embedded memories: vectors are made as they are written.
            config = config.replace(
                embedding=dataclasses.replace(config.embedding, write_path="inline")
            )
            if embedder == "config" and cache is not None:
                embedder = _cached(config, cache)
            graph = "full" in modes and llm is None
            config = (_pipeline_on(config, hints=llm is not None or hints)
                      if llm is not None or hints or graph else _quiet(config))
            with (_store(config, store_url) as config, seeded_ids(index),
                  SignetApp.open(config, embedder=embedder, llm=llm,
                                 clock=ManualClock(BENCH_NOW)) as app):
                started = time.perf_counter()
                keys_of = (_ingest(app, group_docs) if llm is None
                           else _ingest_with_llm(app, group_docs, llm, progress))
                ingest["seconds"] += time.perf_counter() - started
                ingest["docs"] += len(group_docs)
                if graph:
                    started = time.perf_counter()
                    app.run_pipeline_until_idle(only=("extract",))
                    ingest["graph_seconds"] = ingest.get("graph_seconds", 0.0) + (
                        time.perf_counter() - started
                    )
                if hints and llm is None:
                    started = time.perf_counter()
                    _run_hints(app)
                    ingest["hints_seconds"] = ingest.get("hints_seconds", 0.0) + (
                        time.perf_counter() - started
                    )
                if progress:
                    progress(f"{group}: {len(group_docs)} docs ingested")
                asked = [q for q in questions if q.group == group]
                for mode in modes:
                    app.memory.accesses.flush()
                    _ask(app, asked, mode, keys_of, depth, ranked[mode], latencies[mode], observe)
                    if observe is None:
                        continue
                    for text in negatives:
                        query = RecallQuery(text, limit=depth, mode=MODE_TO_RECALL[mode])  # type: ignore[arg-type]
                        observe(None, mode, app.recall(query), keys_of)
                for name, (lexical, dense) in variants.items():
                    recaller = app.recaller.respec(lexical_lead=lexical, dense_lead=dense)
                    _ask(app, asked, "hybrid", keys_of, depth, ranked[name], [],
                         recall=recaller.recall)
                if candidates:
                    found.update(_candidates(app, asked, keys_of))
                if after_ask is not None:
                    after_ask(app, asked, keys_of)
    results = {m: score(questions, ranked[m], groups) for m in ranked}
    latency = {
        m: {"p50": percentile(v, 50), "p95": percentile(v, 95)} for m, v in latencies.items() if v
    }
    ingest["per_second"] = ingest["docs"] / ingest["seconds"] if ingest["seconds"] else 0.0
    return BenchResult(results, latency, ingest, ranked=ranked, questions=list(questions),
                       candidates=found)


def _candidates(
    app: SignetApp, questions: Sequence[BenchQuestion], keys_of: dict[str, list[str]]
) -> dict[str, list[dict[str, Any]]]:
    """Each question's candidates as the combiner sees them (recall/combine.py): the default
    hybrid page and the dense-heavy one, each `combine.CANDIDATES` deep; per candidate its doc
    keys (quoted ones left out, as scoring leaves them) and its features."""
    plain = app.recaller
    wide = plain.respec(lexical_lead=0.0, fixed_share=combine.WIDE_SHARE)
    out = {}
    for question in questions:
        query = RecallQuery(question.text, limit=combine.CANDIDATES, mode="hybrid")
        rows = combine.candidates(question.text, plain.recall(query).hits,
                                  wide.recall(query).hits)
        out[question.qid] = [
            {"keys": [k for k in keys_of.get(hit.memory.id, []) if k not in question.quoted],
             **features}
            for hit, features in rows
        ]
    return out


def variant_name(lead: float, dense: float = 0.0) -> str:
    """The name of hybrid asked with this lexical lead and dense lead (recall/fuse.py
    `dense_share`; a dense lead of 0 is left out of the name)."""
    return f"lead={lead:g}" if dense == 0 else f"lead={lead:g}/{dense:g}"


@contextmanager
def _store(config: Config, url: str | None) -> Iterator[Config]:
    """`config` on a scratch PostgreSQL database of the server at `url` (None: as it is)."""
    if url is None:
        yield config
        return
    with scratch_store_url(url) as scratch:
        yield config.replace(store=StoreConfig(backend="postgres", url=scratch))


def default_cache_dir() -> Path:
    """$SIGNET_BENCH_CACHE, else `.cache/embeddings` in the current folder (the checkout's
    ignored .cache/ when run from it); never the home folder."""
    env = os.environ.get("SIGNET_BENCH_CACHE")
    return Path(env) if env else Path.cwd() / ".cache" / "embeddings"


def _cached(config: Config, folder: Path) -> Embedder | None:
    inner = configured_embedder(config)
    return CachedEmbedder(inner, folder) if inner is not None else None


def _quiet(config: Config) -> Config:
    """Benchmarks measure recall: no background pipeline jobs are enqueued."""
    return dataclasses.replace(config, pipeline=dataclasses.replace(config.pipeline, enabled=False))


def _pipeline_on(config: Config, *, hints: bool) -> Config:
    """The pipeline on, hints on or off. With an LLM: the whole write path, extraction
    (decisions, controlled writes, the graph) and hints, as a user's daemon runs it. For
    --hints only the hints job matters (extract jobs wait unused). Mode `full` alone asks the
    graph: extraction builds it after ingest (with no LLM, the deterministic extractor's
    entities, pipeline/rule_extractor.py), hints off."""
    pipeline = config.pipeline
    return dataclasses.replace(config, pipeline=dataclasses.replace(
        pipeline, enabled=True, hints=dataclasses.replace(pipeline.hints, enabled=hints)
    ))


def session_of(doc: BenchDoc) -> str:
    """The conversation a doc belongs to: its session, else its key (a MemAware window's key
    is its session's id)."""
    return doc.session or doc.key


def _ingest_with_llm(
    app: SignetApp, docs: Sequence[BenchDoc], llm: SessionCachedLLM,
    progress: Callable[[str], None] | None,
) -> dict[str, list[str]]:
    """One session at a time, as they would arrive: its docs remembered, then the pipeline run
    until idle (the LLM's calls kept under that session)."""
    sessions: list[list[BenchDoc]] = []
    for doc in docs:
        if sessions and session_of(sessions[-1][-1]) == session_of(doc):
            sessions[-1].append(doc)
        else:
            sessions.append([doc])
    keys_of: dict[str, list[str]] = {}
    for i, session in enumerate(sessions, 1):
        llm.session(session_of(session[0]))
        for memory_id, keys in _ingest(app, session).items():
            kept = keys_of.setdefault(memory_id, [])
            kept += [k for k in keys if k not in kept]
        for _ in range(MAX_RETRY_ROUNDS):
            app.run_pipeline_until_idle(only=("extract", "hints", "embed"))
            waiting = sum(counts.get("pending", 0) for counts in app.job_depths().values())
            if not waiting or not isinstance(app.clock, ManualClock):
                break
            # A failed call's job waits out its back-off: the still clock steps past it.
            app.clock.advance(minutes=1)
        if progress and (i % 10 == 0 or i == len(sessions)):
            usage = llm.usage()
            progress(f"{i}/{len(sessions)} sessions through the LLM: {usage['calls']} calls, "
                     f"{usage['cached']} from the cache")
    return keys_of


def _run_hints(app: SignetApp) -> None:
    """The hints worker until idle: the LLM's hints, or without an LLM the vocabulary method
    the app leaves off by default (docs/pipeline.md), so the benchmark can measure it."""
    if app.llm is not None or app.embedder is None:
        app.run_pipeline_until_idle(only=("hints",))
        return
    worker = HintsWorker(
        app.backend.pipeline(), app.config.pipeline, None, app.embedder,
        vocabulary=VocabularyHints(app.embedder),
    )
    WorkerLoop([worker]).run_until_idle()


def _ingest(app: SignetApp, docs: Sequence[BenchDoc]) -> dict[str, list[str]]:
    keys_of: dict[str, list[str]] = {}
    for start in range(0, len(docs), INGEST_BATCH):
        batch = docs[start : start + INGEST_BATCH]
        items = [
            {"content": d.text, "source_id": d.key, "source_type": "bench", "event_at": d.event_at,
             "session_id": d.session}
            for d in batch
        ]
        try:
            results = app.remember_many(items)
        except NotOnBackend:  # not on this store backend yet: one at a time, the same writes
            results = [app.remember(**cast(dict[str, Any], item)) for item in items]
        for doc, result in zip(batch, results, strict=True):
            keys = keys_of.setdefault(result.id, [])
            if doc.key not in keys:
                keys.append(doc.key)
    return keys_of


def _ask(
    app: SignetApp,
    questions: Sequence[BenchQuestion],
    mode: str,
    keys_of: dict[str, list[str]],
    depth: int,
    ranked: dict[str, list[str]],
    latencies: list[float],
    observe: Observer | None = None,
    recall: Callable[[RecallQuery], RecallResponse] | None = None,
) -> None:
    """Ask each question in `mode` through `recall` (the app's, by default)."""
    ask = recall or app.recall
    for question in questions:
        query = RecallQuery(
            question.text, limit=depth + len(question.quoted), mode=MODE_TO_RECALL[mode],  # type: ignore[arg-type]
        )
        started = time.perf_counter()
        response = ask(query)
        latencies.append((time.perf_counter() - started) * 1000)
        ranked[question.qid] = [
            k for hit in response.hits for k in keys_of.get(hit.memory.id, [])
            if k not in question.quoted
        ]
        if observe is not None:
            observe(question, mode, response, keys_of)


def run_locomo(
    path: Path | None, modes: Sequence[str], *, limit: int | None = None,
    long_queries: int = 0, **kw: Any,
) -> BenchResult:
    """`long_queries`: each question preceded by that many dialogue turns (0: the questions
    alone; datasets.with_dialogue)."""
    path = path or bench_data_dir() / "locomo" / "locomo-dev.json"
    docs, questions = load_locomo(path)
    if limit:
        questions = questions[:limit]
    if long_queries > 0:
        questions = with_dialogue(docs, questions, long_queries)
    return run(docs, questions, locomo_groups(questions), modes, depth=10, **kw)


def run_memaware(
    sessions: Path | None,
    questions_path: Path | None,
    modes: Sequence[str],
    *,
    limit: int | None = None,
    first_sessions: int | None = None,
    **kw: Any,
) -> BenchResult:
    root = bench_data_dir() / "memaware" if sessions is None or questions_path is None else None
    sessions = sessions or (root / "sessions" if root else None)
    questions_path = questions_path or (root / "questions-dev.json" if root else None)
    assert sessions is not None and questions_path is not None
    docs, questions = load_memaware(sessions, questions_path, unit="window")
    if first_sessions:
        # A tiny run (the cost of --llm, say): the first N sessions and the questions about them.
        kept: list[str] = []
        for doc in docs:
            if session_of(doc) not in kept:
                kept.append(session_of(doc))
        chosen = set(kept[:first_sessions])
        docs = [d for d in docs if session_of(d) in chosen]
        questions = [q for q in questions if q.gold & chosen]
    if limit:
        questions = questions[:limit]
    # Windows pool back to sessions: ask deep enough that ten distinct sessions come back.
    return run(docs, questions, memaware_groups(questions), modes, depth=50, **kw)
