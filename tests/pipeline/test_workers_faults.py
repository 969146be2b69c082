"""Faults: malformed, empty, failing and slow model replies, rate limits and killed workers.

Each fault must leave the job retried with back-off and, after max_attempts, dead with the
reason in its error field; the memory's extraction is then "failed" and nothing is half-written.
A worker killed with SIGKILL in the middle of its write transaction leaves nothing behind; the
reaper hands the job out again and the rerun writes everything once.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from worker_support import Script, http_llm, job_rows, open_app, pipeline_config, proposals, rows

from fakes.llm_server import FakeLLMServer, Reply
from signet.app import SignetApp
from signet.providers.llm_registry import make_llm
from signet.store.choose import open_backend
from signet.types import MemoryFilters, format_ts
from signet.workers.loop import ReaperWorker, Worker

SOURCE = "I moved to Berlin last spring and I drive a Ford Mustang."
FACTS = [
    {"content": "The user lives in Berlin since last spring", "confidence": 0.9},
    {"content": "The user drives a Ford Mustang", "confidence": 0.9},
]
GOOD = Script(facts={"Berlin": FACTS})


def worker(app: SignetApp, name: str) -> Worker:
    return next(w for w in app.workers() if w.name == name)


def drive(app: SignetApp, name: str, ticks: int) -> list[bool]:
    """Tick one worker `ticks` times, a minute apart, so retry back-off never holds it."""
    start = datetime.now(UTC) + timedelta(seconds=1)
    return [worker(app, name).tick(start + timedelta(minutes=i)) for i in range(ticks)]


FAULTS: dict[str, tuple[Reply, str]] = {
    "non-JSON": (Reply("Sorry, I cannot help with that request."), "BadResponse"),
    "empty": (Reply("   "), "empty reply"),
    "http 500": (Reply("model crashed", status=500), "500"),
    "timeout": (Reply('{"facts": []}', delay_s=2.0), "ProviderTimeout"),
}


# Every fault on SQLite; the malformed reply on PostgreSQL too (the same worker and lease code).
FAULT_LEGS = [(fault, "sqlite") for fault in sorted(FAULTS)] + [("non-JSON", "postgres")]


@pytest.mark.parametrize(("fault", "store"), FAULT_LEGS)
def test_a_faulty_reply_retries_then_dies_with_the_reason(
    tmp_path: Path, fault: str, store: str, request: pytest.FixtureRequest
) -> None:
    reply, reason = FAULTS[fault]
    url = str(request.getfixturevalue("pg_url")) if store == "postgres" else None
    with FakeLLMServer(default=reply) as server:
        config = pipeline_config(tmp_path / "ws", hints=False, store_url=url)
        with open_app(config, http_llm(server, timeout_ms=300)) as app:
            source = app.remember(SOURCE).id
            assert drive(app, "extract", 4) == [True, True, True, False]
            [(status, attempts, error, _)] = job_rows(app, "extract")
            assert (status, attempts) == ("dead", 3)
            assert error and reason in error
            assert app.get(source).extraction_status == "failed"
            assert proposals(app, source) == [] and app.list().total == 1
            assert len(server.requests) == 3


def test_malformed_fields_cost_warnings_not_the_job(tmp_path: Path) -> None:
    reply = Reply('{"facts": "none", "entities": [{"source": "user"}]}')
    with FakeLLMServer(default=reply) as server:
        with open_app(pipeline_config(tmp_path / "ws", hints=False), http_llm(server)) as app:
            source = app.remember(SOURCE).id
            assert drive(app, "extract", 2) == [True, False]
            [job] = app.jobs(job_type="extract")
            assert job.status == "completed" and job.result
            assert job.result["warnings"] == [
                "'facts' is not a list; ignored",
                "entity 0: needs source, relationship and target; dropped",
            ]
            assert app.get(source).extraction_status == "completed"


def test_retries_wait_for_their_back_off(tmp_path: Path) -> None:
    with FakeLLMServer(default=Reply("", status=503)) as server:
        with open_app(pipeline_config(tmp_path / "ws", hints=False), http_llm(server)) as app:
            app.remember(SOURCE)
            start = datetime.now(UTC) + timedelta(seconds=1)
            extract = worker(app, "extract")
            assert extract.tick(start)
            assert not extract.tick(start + timedelta(milliseconds=500))  # 1 s back-off
            assert extract.tick(start + timedelta(seconds=1, milliseconds=10))
            assert not extract.tick(start + timedelta(seconds=2))  # now 2 s
            [job] = app.jobs()
            assert job.status == "pending" and job.attempts == 2 and "503" in (job.error or "")


def test_a_failure_in_the_decision_stage_writes_none_of_the_facts(tmp_path: Path) -> None:
    calls: list[str] = []

    def decide(prompt: str) -> dict[str, Any]:
        calls.append(prompt)
        return {"action": "merge-ish"}  # not an action: BadResponse

    script = Script(facts={"moved to Berlin": FACTS}, decide=decide)
    with FakeLLMServer(responder=script) as server:
        config = pipeline_config(tmp_path / "ws", hints=False)
        with open_app(config, http_llm(server)) as app:
            app.remember("The user lives in Berlin since last spring")  # a candidate to decide on
            app.run_pipeline_until_idle()
            source = app.remember(SOURCE).id
            drive(app, "extract", 3)
            [job] = app.jobs(job_type="extract", status="dead")
            assert "unknown decision action" in (job.error or "")
            assert proposals(app, source) == [] and app.list().total == 2
            # An operator requeues it once the model behaves; it then completes cleanly.
            script.decide = None
            assert app.requeue_dead_jobs() == 1
            app.run_pipeline_until_idle()
            assert app.get(source).extraction_status == "completed"
            assert len(proposals(app, source)) == 2


def test_a_rate_limited_provider_pauses_the_worker_without_spending_attempts(
    tmp_path: Path, store_url: str | None
) -> None:
    with FakeLLMServer(responder=GOOD) as server:
        llm = make_llm("ollama", model="m", base_url=server.url, max_calls_per_hour=1, burst=1)
        assert llm is not None
        llm.complete("an earlier call takes the only token in the bucket")
        config = pipeline_config(tmp_path / "ws", hints=False, store_url=store_url)
        with open_app(config, llm) as app:
            app.remember(SOURCE)
            start = datetime.now(UTC) + timedelta(seconds=1)
            extract = worker(app, "extract")
            assert extract.tick(start)
            [(status, attempts, _, _)] = job_rows(app, "extract")
            assert (status, attempts) == ("pending", 0)  # released with its attempt
            assert not extract.tick(start + timedelta(seconds=10))  # paused, no call made
            assert len(server.requests) == 1
            assert app.run_pipeline_until_idle() == 0


KILLER = textwrap.dedent(
    """
    import dataclasses, json, os, signal, sys
    from datetime import UTC, datetime
    from signet.app import SignetApp
    from signet.config import Config
    from signet.providers.hash_embedder import HashEmbedder
    from signet.providers.llm_registry import make_llm
    from signet.workers.extract_worker import ExtractWorker

    workspace, url, kill_at = sys.argv[1], sys.argv[2], sys.argv[3]
    config = Config.default(workspace)
    config = dataclasses.replace(config, pipeline=dataclasses.replace(
        config.pipeline, hints=dataclasses.replace(config.pipeline.hints, enabled=False)),
        embedding=dataclasses.replace(config.embedding, write_path="inline"))
    llm = make_llm("ollama", model="m", base_url=url)
    app = SignetApp.open(config, embedder=HashEmbedder(64), llm=llm)

    class KillAfterFirstWrite:
        # The app's write path, with a SIGKILL after the first fact is in (mid-transaction).
        def prepare_memory(self, content, **kw):
            return app.prepare_memory(content, **kw)

        def write_prepared(self, prepared):
            result = app.write_prepared(prepared)
            if kill_at == "write":
                assert app.store.in_write_tx
                os.kill(os.getpid(), signal.SIGKILL)
            return result

    worker = ExtractWorker(app.backend.pipeline(), app.recaller, KillAfterFirstWrite(),
                           config.pipeline, llm, embedder_model=app.embedder.model,
                           graph=app.graph.store)
    print("ticking", flush=True)
    worker.tick(datetime.now(UTC))
    print("survived", flush=True)
    """
)


@pytest.mark.parametrize("kill_at", ["write", "llm"])
def test_a_killed_worker_leaves_nothing_half_written(tmp_path: Path, kill_at: str) -> None:
    script = Script(facts={"Berlin": FACTS})
    hold = Reply(json.dumps({"facts": FACTS}), delay_s=30)  # the worker dies while waiting
    with FakeLLMServer(responder=script) as server:
        root = tmp_path / "ws"
        config = pipeline_config(root, hints=False)
        with open_app(config, http_llm(server)) as app:
            source = app.remember(SOURCE).id
        if kill_at == "llm":
            server.push(hold)
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLER, str(root), server.url, kill_at], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        if kill_at == "llm":
            deadline = time.monotonic() + 30
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, err
        assert "survived" not in out

        with open_app(config, http_llm(server)) as app:
            conn = app.store.reader()
            assert app.list().total == 1 and proposals(app, source) == []
            assert rows(conn, "SELECT status, attempts FROM memory_jobs") == [("leased", 1)]
            later = datetime.now(UTC) + timedelta(milliseconds=config.pipeline.lease_timeout_ms + 5000)
            assert ReaperWorker(app.backend.core, config.pipeline.lease_timeout_ms).tick(later)
            app.run_pipeline_until_idle()
            derived = sorted(m.content for m in app.list(MemoryFilters(source_id=source)).items)
            assert derived == sorted(f["content"] for f in FACTS)
            assert [p["outcome"] for p in proposals(app, source)] == ["add", "add"]
            [job] = app.jobs(job_type="extract")
            assert (job.status, job.attempts) == ("completed", 2)


def test_a_worker_whose_lease_was_taken_back_writes_nothing(
    tmp_path: Path, store_url: str | None
) -> None:
    """While our worker waits for the model, the reaper hands its job to another worker: our
    results must roll back (the other worker's run is the one that counts). On PostgreSQL the
    facts are inserted by the memory service inside the worker's transaction (PostgresCore.transaction):
    they roll back with it."""
    config = pipeline_config(tmp_path / "ws", hints=False, store_url=store_url)
    script = Script(facts={"Berlin": FACTS})
    taken: list[str] = []

    def slow_model_meanwhile_reaped(request: Any) -> Reply:
        if not taken:
            later = format_ts(
                datetime.now(UTC) + timedelta(milliseconds=config.pipeline.lease_timeout_ms + 5000)
            )
            # Another process's connection, in effect.
            other = open_backend(config.store, sqlite_path=config.db_path,
                                 key_path=tmp_path / "k").core
            try:
                other.reap_stale_leases(later, config.pipeline.lease_timeout_ms)
                job = other.lease(later, job_types=["extract"])
                assert job is not None
                taken.append(job.id)
            finally:
                other.close()
        return script(request)

    with FakeLLMServer(responder=slow_model_meanwhile_reaped) as server:
        with open_app(config, http_llm(server)) as app:
            source = app.remember(SOURCE).id
            assert drive(app, "extract", 1) == [True]
            assert taken
            [(status, attempts, error, _)] = job_rows(app, "extract")
            assert (status, attempts, error) == ("leased", 2, "lease expired")
            assert app.list().total == 1 and proposals(app, source) == []
            assert app.get(source).extraction_status == "pending"


def test_max_attempts_comes_from_the_configuration(tmp_path: Path) -> None:
    config = pipeline_config(tmp_path / "ws", hints=False)
    config = dataclasses.replace(
        config, pipeline=dataclasses.replace(config.pipeline, max_attempts=1)
    )
    with FakeLLMServer(default=Reply("down", status=500)) as server:
        with open_app(config, http_llm(server)) as app:
            source = app.remember(SOURCE).id
            assert drive(app, "extract", 2) == [True, False]
            [job] = app.jobs(job_type="extract")
            assert (job.status, job.attempts, job.max_attempts) == ("dead", 1, 1)
            assert app.get(source).extraction_status == "failed"
