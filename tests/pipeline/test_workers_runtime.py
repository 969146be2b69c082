"""The workers at run time: no model call ever inside a write transaction, the embed worker,
graph persistence (non-fatal) and inline linking, hints found by recall, queue throughput."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from worker_support import (
    Script,
    execute,
    http_llm,
    job_rows,
    open_app,
    pipeline_config,
    proposals,
    query,
    rows,
)

from fakes.llm_server import FakeLLMServer
from signet.errors import ProviderError
from signet.providers.hash_embedder import HashEmbedder
from signet.providers.llm import LLM, Completion
from signet.store import embeddings as emb_sql
from signet.store import graph as graph_sql
from signet.store.db import Store
from signet.store.pipeline import PipelineStore
from signet.types import RecallQuery


class TxGuard:
    """Records every call it wraps together with whether a write transaction was open."""

    def __init__(self) -> None:
        self.store: Store | PipelineStore | None = None
        self.calls: list[tuple[str, bool]] = []

    def note(self, what: str) -> None:
        assert self.store is not None
        self.calls.append((what, self.store.in_write_tx))


class GuardedLLM:
    def __init__(self, inner: LLM, guard: TxGuard) -> None:
        self.inner, self.guard = inner, guard
        self.name, self.model = inner.name, inner.model

    def complete(self, prompt: str, **kw: Any) -> Completion:
        self.guard.note("llm")
        return self.inner.complete(prompt, **kw)


class GuardedEmbedder:
    def __init__(self, inner: Any, guard: TxGuard, *, fail: bool = False) -> None:
        self.inner, self.guard, self.fail = inner, guard, fail
        self.name, self.model, self.dimensions = "guarded", inner.model, inner.dimensions
        self.inline = False  # as a remote embedder: vectors come from the embed worker

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.guard.note("embed")
        if self.fail:
            raise ProviderError("embedding server down")
        return self.inner.embed(texts)


def test_no_llm_or_embedding_call_happens_inside_a_write_transaction(
    tmp_path: Path, backend: str, store_url: str | None
) -> None:
    guard = TxGuard()
    target: dict[str, str] = {}
    script = Script(
        facts={"Upgrade": [
            {"content": "The weekly team meeting happens on Thursday mornings", "confidence": 0.9},
            {"content": "The office coffee machine was replaced by a new one", "confidence": 0.9},
        ]},
        decide=lambda prompt: (
            {"action": "update", "targetId": target["id"], "confidence": 0.9}
            if "meeting" in prompt.splitlines()[0] else {"action": "add", "confidence": 0.9}
        ),
        contradiction={"contradicts": False, "confidence": 0.8, "reason": "fine"},
    )
    config = pipeline_config(tmp_path / "ws", allow_update_delete=True, store_url=store_url)
    with FakeLLMServer(responder=script) as server:
        llm = GuardedLLM(http_llm(server), guard)
        # A remote-style embedder (not embedded inline): every vector comes from the embed
        # worker or the pipeline's own preparation, all under the guard.
        embedder = GuardedEmbedder(HashEmbedder(64), guard)
        with open_app(config, llm, embedder=embedder) as app:  # type: ignore[arg-type]
            # The pipeline's write transaction on either backend (store/pipeline.py).
            guard.store = app.store if backend == "sqlite" else app.backend.pipeline()
            target["id"] = app.remember("The weekly team meeting happens on Tuesday mornings").id
            app.run_pipeline_until_idle()
            source = app.remember("Upgrade: meeting moved, new coffee machine").id
            app.run_pipeline_until_idle()
            assert [p["outcome"] for p in proposals(app, source)] == ["update", "add"]
            assert app.get(target["id"]).content.endswith("Thursday mornings")
            assert query(app, "SELECT content FROM memories_cold WHERE memory_id = ?",
                         target["id"]) == [("The weekly team meeting happens on Tuesday mornings",)]
            unembedded = query(app, "SELECT count(*) FROM memories m WHERE NOT m.is_deleted AND"
                               " NOT EXISTS (SELECT 1 FROM embeddings e WHERE"
                               " e.content_hash = m.content_hash AND e.model = ?)",
                               embedder.model)
            assert unembedded == [(0,)]
    kinds = {what for what, _ in guard.calls}
    assert kinds == {"llm", "embed"}
    assert {"extract", "decide", "contradiction", "hints"} <= set(script.calls)
    assert [c for c in guard.calls if c[1]] == []


def test_the_embed_worker_fills_missing_vectors_and_fails_with_the_reason(tmp_path: Path) -> None:
    guard = TxGuard()
    config = pipeline_config(tmp_path / "ws", enabled=False)
    broken = GuardedEmbedder(HashEmbedder(64), guard, fail=True)
    with open_app(config, None, embedder=broken) as app:  # type: ignore[arg-type]
        guard.store = app.store
        ids = [app.remember(f"memory number {i} about gardening").id for i in range(3)]
        assert len(app.jobs(job_type="embed")) == 3
        embed = next(w for w in app.workers() if w.name == "embed")
        start = datetime.now(UTC) + timedelta(seconds=1)
        for i in range(3):
            assert embed.tick(start + timedelta(minutes=i))
        jobs = app.jobs(job_type="embed")
        assert {(j.status, j.attempts) for j in jobs} == {("dead", 3)}
        assert all("embedding server down" in (j.error or "") for j in jobs)
    working = GuardedEmbedder(HashEmbedder(64), guard)
    with open_app(config, None, embedder=working) as app:  # type: ignore[arg-type]
        guard.store = app.store
        assert app.requeue_dead_jobs() == 3
        app.run_pipeline_until_idle()
        assert {j.status for j in app.jobs(job_type="embed")} == {"completed"}
        conn = app.store.reader()
        assert emb_sql.audit(conn, working.model)["missing"] == 0
        hits = app.recall(RecallQuery("gardening", mode="vector", touch=False)).hits
        assert {h.memory.id for h in hits} == set(ids)
    assert [c for c in guard.calls if c[1]] == []


def test_graph_failure_is_logged_and_never_reverts_the_facts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, backend: str, store_url: str | None
) -> None:
    script = Script(
        facts={"Berlin": [{"content": "The user lives in Berlin", "confidence": 0.9}]},
        entities={"Berlin": [{"source": "user", "relationship": "lives_in", "target": "Berlin"}]},
    )
    config = pipeline_config(tmp_path / "ws", hints=False, store_url=store_url)
    with FakeLLMServer(responder=script) as server:
        with open_app(config, http_llm(server)) as app:
            # A broken graph schema: every relation upsert fails (phase 3, its own transaction).
            execute(app, "DROP TABLE relations" + (" CASCADE" if backend == "postgres" else ""))
            source = app.remember("I moved to Berlin.").id
            with caplog.at_level(logging.WARNING):
                app.run_pipeline_until_idle()
            assert "graph persistence failed" in caplog.text
            assert [p["outcome"] for p in proposals(app, source)] == ["add"]
            assert app.get(source).extraction_status == "completed"
            assert query(app, "SELECT count(*) FROM entities") == [(0,)]


def test_inline_linking_joins_new_memories_to_known_entities_without_an_llm(tmp_path: Path) -> None:
    script = Script(
        facts={"Mustang": [{"content": "The user drives a Ford Mustang", "confidence": 0.9}]},
        entities={"Mustang": [
            {"source": "user", "relationship": "drives", "target": "Ford Mustang"},
        ]},
    )
    with FakeLLMServer(responder=script) as server:
        with open_app(pipeline_config(tmp_path / "ws", hints=False), http_llm(server)) as app:
            app.remember("I drive a Ford Mustang.")
            app.run_pipeline_until_idle()
            requests = len(server.requests)
            later = app.remember("Booked the Ford Mustang in for an air filter at Target.")
            conn = app.store.reader()
            linked = [e.canonical_name for e in graph_sql.entities_of_memory(conn, later.id)]
            assert linked == ["ford mustang"]  # linked at write time; "target" is no entity
            assert len(server.requests) == requests  # no model involved
            assert rows(conn, "SELECT count(*) FROM entities") == [(2,)]


def test_llm_hints_are_stored_and_found_by_the_hint_channel(
    tmp_path: Path, store_url: str | None
) -> None:
    script = Script(hints=["where can I get discounts on car parts?", "which stores do I shop at?"])
    with FakeLLMServer(responder=script) as server:
        config = pipeline_config(tmp_path / "ws", store_url=store_url)
        with open_app(config, http_llm(server)) as app:
            memory_id = app.remember("The user has a Target loyalty card").id
            app.run_pipeline_until_idle()
            assert app.get(memory_id).hints == (
                "where can I get discounts on car parts? which stores do I shop at?"
            )
            response = app.recall(RecallQuery("discounts", mode="keyword", touch=False))
            [hit] = response.hits
            assert hit.memory.id == memory_id and hit.evidence.hint is not None
            [(_, _, _, result)] = job_rows(app, "hints")
            assert json.loads(result)["method"] == "llm"


class InstantLLM:
    """A model that answers at once (the pipeline's own cost is what the test measures)."""

    name, model = "instant", "instant"

    def complete(self, prompt: str, **kw: Any) -> Completion:
        if "Extract the facts" in prompt:
            text = prompt.split("Text:\n", 1)[-1]
            body = {"facts": [{"content": f"The user said: {text}", "confidence": 0.9}],
                    "entities": [{"source": "user", "relationship": "said", "target": "Note"}]}
        elif "Write 3 to 5" in prompt:
            body = {"hints": ["first question?", "second question?", "third question?"]}
        else:
            body = {"action": "add", "confidence": 0.9}
        return Completion(json.dumps(body), None, None, 0.0, self.model, self.name)


def test_queue_throughput_with_an_instant_llm(tmp_path: Path) -> None:
    count = 150
    with open_app(pipeline_config(tmp_path / "ws"), InstantLLM()) as app:  # type: ignore[arg-type]
        for i in range(count):
            app.remember(f"Note {i}: the user bought item {i} at shop {i % 7}")
        started = time.perf_counter()
        app.run_pipeline_until_idle()
        seconds = time.perf_counter() - started
        done = sum(by_status.get("completed", 0) for by_status in app.job_depths().values())
    # extract + hints for each note, and hints for each derived fact
    assert done == 3 * count
    rate = done / seconds
    print(f"\nqueue throughput: {done} jobs in {seconds:.2f} s = {rate:.0f} jobs/s")
    assert rate > 20


def test_facts_below_the_write_gate_cost_no_search(tmp_path: Path) -> None:
    """Without an LLM the rule extractor's facts (confidence 0.6) are below the write gate:
    they are not proposed at all, so no candidate search (no query embedding) runs. (A memory
    marking itself current, "now", is searched once for what it replaces: not this one.)"""
    guard = TxGuard()
    embedder = GuardedEmbedder(HashEmbedder(64), guard)
    with open_app(pipeline_config(tmp_path / "ws"), None, embedder=embedder) as app:  # type: ignore[arg-type]
        guard.store = app.store
        source = app.remember(
            "User: I moved to Lisbon last spring and I work at a small design studio.\n"
            "User: My sister Ana visits every summer."
        ).id
        guard.calls.clear()
        app.run_pipeline_until_idle(only=("extract",))
        assert proposals(app, source) == []
        assert app.get(source).extraction_status == "completed"
        assert [what for what, _ in guard.calls] == []
