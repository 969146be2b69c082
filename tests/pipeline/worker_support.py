"""Helpers for the worker tests: a scripted fake LLM behind the real HTTP providers, and apps
opened on a real SQLite workspace in tmp_path with a given set of pipeline flags.

`Script` answers each pipeline prompt by its kind (extraction, decision, contradiction, hints),
so a test says "extracting X gives these facts; deciding about fact F gives this action" and the
FakeLLMServer speaks the provider's wire format around it.

`pipeline_config(..., store_url=...)` puts the workspace's shared state on a PostgreSQL database
(tests/pg_server.py) instead; `query(app, sql)` then reads that database (`?` placeholders on
both), so one test body checks both backends.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from fakes.llm_server import FakeLLMServer, Reply, prompt_of
from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.providers.hash_embedder import HashEmbedder
from signet.providers.llm import LLM
from signet.providers.llm_registry import make_llm
from signet.store.connection import Connection
from write_paths import inline

EXTRACTION_MARK = "Extract the facts worth remembering"
DECISION_MARK = "New fact ("
CONTRADICTION_MARK = "Now compare:"
HINTS_MARK = "different questions or\nrequests"


@dataclass
class Script:
    """What the fake model answers, by prompt kind; unknown prompts get empty results."""

    facts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # content substring ->
    entities: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)  # fact substring ->
    contradiction: dict[str, Any] = field(
        default_factory=lambda: {"contradicts": False, "confidence": 0.9, "reason": "compatible"}
    )
    hints: list[str] = field(default_factory=lambda: ["where do I shop?", "any discounts?", "what car do I drive?"])
    calls: list[str] = field(default_factory=list)
    decide: Callable[[str], dict[str, Any]] | None = None

    def __call__(self, request: Any) -> Reply:
        prompt = prompt_of(request)
        if EXTRACTION_MARK in prompt:
            self.calls.append("extract")
            text = prompt.split("Text:\n", 1)[-1]
            facts = next((v for k, v in self.facts.items() if k in text), [])
            entities = next((v for k, v in self.entities.items() if k in text), [])
            return Reply(json.dumps({"facts": facts, "entities": entities}))
        if DECISION_MARK in prompt:
            self.calls.append("decide")
            fact_line = prompt.splitlines()[0]
            if self.decide is not None:
                return Reply(json.dumps(self.decide(prompt)))
            answer = next((v for k, v in self.decisions.items() if k in fact_line), None)
            return Reply(json.dumps(answer or {"action": "add", "confidence": 0.9, "reason": "new"}))
        if CONTRADICTION_MARK in prompt:
            self.calls.append("contradiction")
            return Reply(json.dumps(self.contradiction))
        if HINTS_MARK in prompt:
            self.calls.append("hints")
            return Reply(json.dumps({"hints": self.hints}))
        self.calls.append("other")
        return Reply("{}")


def pipeline_config(
    root: Path,
    *,
    enabled: bool = True,
    shadow: bool = False,
    frozen: bool = False,
    allow_update_delete: bool = False,
    min_confidence: float = 0.7,
    hints: bool = True,
    store_url: str | None = None,
) -> Config:
    config = inline(Config.default(root))  # the workers' own tests: vectors as they write
    if store_url is not None:
        config = config.replace(store=StoreConfig(backend="postgres", url=store_url))
    pipeline = config.pipeline
    pipeline = dataclasses.replace(
        pipeline, enabled=enabled, shadow_mode=shadow, mutations_frozen=frozen,
        min_fact_confidence_for_write=min_confidence,
        hints=dataclasses.replace(pipeline.hints, enabled=hints),
        autonomous=dataclasses.replace(pipeline.autonomous, allow_update_delete=allow_update_delete),
    )
    return dataclasses.replace(config, pipeline=pipeline)


def http_llm(server: FakeLLMServer, provider: str = "ollama", timeout_ms: int = 5_000) -> LLM:
    llm = make_llm(provider, model="fake-model", base_url=server.url, timeout_ms=timeout_ms,
                   max_calls_per_hour=100_000, burst=1_000)
    assert llm is not None
    return llm


def open_app(config: Config, llm: LLM | None, embedder: Any = "hash") -> SignetApp:
    chosen = HashEmbedder(64) if embedder == "hash" else embedder
    return SignetApp.open(config, embedder=chosen, llm=llm)


def rows(conn: Connection, sql: str, *params: Any) -> list[Any]:
    return [tuple(r) for r in conn.execute(sql, params).fetchall()]


def query(app: SignetApp, sql: str, *params: Any) -> list[Any]:
    """Rows of `sql` on the app's own database, SQLite or PostgreSQL (`?` placeholders)."""
    if app.config.store.backend == "sqlite":
        return rows(app.store.reader(), sql, *params)
    assert app.config.store.url
    with psycopg.connect(app.config.store.url) as conn:
        return [tuple(r) for r in conn.execute(sql.replace("?", "%s"), params).fetchall()]


def execute(app: SignetApp, sql: str) -> None:
    """One statement on the app's own database (a test breaking something on purpose)."""
    if app.config.store.backend == "sqlite":
        with app.store.write_tx() as conn:
            conn.execute(sql)
        return
    assert app.config.store.url
    with psycopg.connect(app.config.store.url, autocommit=True) as conn:
        conn.execute(sql)


def job_rows(app: SignetApp, job_type: str) -> list[tuple[Any, ...]]:
    """(status, attempts, error, result) of every job of `job_type`, oldest first."""
    return query(app, "SELECT status, attempts, error, result FROM memory_jobs"
                 " WHERE job_type = ? ORDER BY created_at", job_type)


def history_events(app: SignetApp, memory_id: str) -> list[tuple[str, str]]:
    return [(e.event, e.changed_by) for e in app.history(memory_id)]


def proposals(app: SignetApp, memory_id: str) -> list[dict[str, Any]]:
    """The pipeline's proposal records on a memory (event "none" with a proposal)."""
    return [
        {**e.metadata, "actor": e.changed_by}
        for e in app.history(memory_id)
        if e.event == "none" and e.metadata and "proposal" in e.metadata
    ]
