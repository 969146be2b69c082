"""The summary worker: the significance gate, immutable markdown artifacts, facts through the
pipeline citing their session, and a worker killed mid-summary leaving no half artifact."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fakes.transcripts import claude_code, conversation
from signet.app import SignetApp
from signet.config import Config
from signet.lineage.artifacts import parse
from signet.providers.hash_embedder import HashEmbedder
from signet.workers.summary_worker import PreparedWrites, SummaryWorker

T = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def summary_worker(app: SignetApp) -> SummaryWorker:
    return next(w for w in app.workers() if w.name == "summary")  # type: ignore[return-value]


def test_a_trivial_two_turn_session_is_gated_out_and_its_transcript_kept(app: SignetApp) -> None:
    turns = [("user", "hi there"), ("assistant", "Hello! How can I help?"),
             ("user", "nothing, thanks"), ("assistant", "Bye!")]
    app.import_transcript(harness="claude-code", content=claude_code(turns, session_id="tiny"))
    assert summary_worker(app).tick(T)
    job = app.store.reader().execute("SELECT status, result FROM summary_jobs").fetchone()
    assert job["status"] == "completed" and '"gated": true' in job["result"]
    assert app.session_show("tiny")["summary_status"] == "skipped"
    assert app.pipeline_status()["summary_queue"] == {"completed": 1}
    assert not (app.config.workspace / "memory" / "sessions").exists()
    assert app.session_show("tiny")["messages"][0]["text"] == "hi there"  # kept


def test_a_twelve_turn_session_with_a_decision_is_summarised_and_its_facts_cite_it(config: Config) -> None:
    # The rule extractor's facts carry confidence 0.6: let them through the write gate here.
    pipeline = dataclasses.replace(config.pipeline, min_fact_confidence_for_write=0.5)
    with SignetApp.open(config.replace(pipeline=pipeline), embedder=HashEmbedder(64), llm=None) as app:
        _summarised_with_facts(app)


def _summarised_with_facts(app: SignetApp) -> None:
    app.import_transcript(harness="claude-code", project="billing",
                          content=claude_code(conversation(12, decision=True), session_id="s12"))
    assert summary_worker(app).tick(T)
    files = list((app.config.workspace / "memory" / "sessions").glob("*--summary.md"))
    assert [f.name for f in files] == ["2026-11-20-s12--summary.md"]
    artifact = parse("x", files[0].read_text("utf-8"))
    assert artifact.meta["kind"] == "summary" and artifact.meta["thread"] == "project:billing"
    assert "## Decisions\n- We decided to use banker's rounding" in artifact.body
    assert "## Preferences\n- I prefer integer cents everywhere" in artifact.body
    assert app.session_show("s12")["summary_status"] == "summarized"
    row = app.store.reader().execute("SELECT * FROM memory_artifacts").fetchone()
    assert row["source_path"] == "memory/sessions/2026-11-20-s12--summary.md"
    assert row["memory_sentence"].startswith("Session: I am rewriting the billing service")
    summary = app.list().items[0]
    assert (summary.type, summary.source_id, summary.session_id) == ("summary", "s12", "s12")
    app.run_pipeline_until_idle(only=("extract",))
    facts = [m for m in app.list(limit=100).items if m.source_type == "pipeline"]
    assert facts and all(m.source_id == "s12" and m.project == "billing" for m in facts)


def test_the_same_session_summarised_again_gets_a_new_artifact_never_a_rewrite(app: SignetApp) -> None:
    turns = conversation(12)
    app.import_transcript(harness="claude-code", content=claude_code(turns[:12], session_id="grow"))
    assert summary_worker(app).tick(T)
    first = app.config.workspace / "memory" / "sessions" / "2026-11-20-grow--summary.md"
    before = first.read_bytes()
    app.import_transcript(harness="claude-code", content=claude_code(turns, session_id="grow"))
    assert summary_worker(app).tick(T)
    assert first.read_bytes() == before
    second = first.with_name("2026-11-20-grow-r2--summary.md")
    assert parse("x", second.read_text("utf-8")).meta["messages"] == "13-24"


KILLER = """
import os, signal, sys
from datetime import datetime, UTC
from signet.app import SignetApp
from signet.config import Config
from signet.workers import summary_worker as sw
app = SignetApp.open(Config.default(sys.argv[1]), embedder=None, llm=None)
worker = next(w for w in app.workers() if w.name == "summary")
real = sw.write_new
def write_then_die(*args, **kwargs):
    artifact = real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)  # after the file, before the row commits
sw.write_new = write_then_die
worker.tick(datetime.now(UTC))
"""


def test_a_worker_killed_mid_summary_leaves_no_half_artifact_and_the_retry_completes(
    app: SignetApp, tmp_path: Path
) -> None:
    app.import_transcript(harness="claude-code", content=claude_code(conversation(12), session_id="k"))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", KILLER, str(app.config.workspace)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    folder = app.config.workspace / "memory" / "sessions"
    assert not list(folder.glob(".tmp-*"))
    assert app.store.reader().execute("SELECT COUNT(*) FROM memory_artifacts").fetchone()[0] == 0
    # The lease is stale: the reaper hands the job back and the retry reuses the same path.
    app.store.reader().execute("SELECT 1").fetchone()
    with app.store.write_tx() as conn:
        conn.execute("UPDATE summary_jobs SET leased_at = '2000-01-01T00:00:00.000Z'")
    assert summary_worker(app).tick(datetime.now(UTC))
    assert [f.name for f in folder.glob("*.md")] == ["2026-11-20-k--summary.md"]
    assert app.store.reader().execute("SELECT COUNT(*) FROM memory_artifacts").fetchone()[0] == 1


LLM_SUMMARY = """<think>the user is fixing invoices</think>Fixing invoice rounding for Frankfurt customers.

## Decisions
- Use banker's rounding in the invoice service.

## Open questions
- Whether to notify finance before Thursday's deploy."""


def test_with_an_llm_the_summary_is_the_llms_and_a_failed_call_is_retried(app: SignetApp) -> None:
    from fakes.llm_server import FakeLLMServer, Reply, prompt_of
    from signet.providers.llm_registry import make_llm

    with FakeLLMServer() as server:
        server.push(Reply("", status=500), Reply(LLM_SUMMARY))
        llm = make_llm("ollama", model="m", base_url=server.url)
        worker = SummaryWorker(app.sessions.store, app.config.workspace, app.config.sessions,
                               app.config.pipeline, PreparedWrites(app), llm)
        app.import_transcript(harness="claude-code", content=claude_code(conversation(12), session_id="llm"))
        assert worker.tick(T)  # the 500: the job goes back to pending with its error
        job = app.store.reader().execute("SELECT status, error, attempts FROM summary_jobs").fetchone()
        assert (job["status"], job["attempts"]) == ("pending", 1) and "500" in job["error"]
        assert not worker.tick(T + timedelta(milliseconds=500))  # backing off for a second
        assert worker.tick(T + timedelta(seconds=2))
        assert "Frankfurt customers" in prompt_of(server.requests[-1].json)
    body = (app.config.workspace / "memory" / "sessions" / "2026-11-20-llm--summary.md").read_text("utf-8")
    artifact = parse("x", body)
    assert artifact.meta["method"] == "llm"
    assert artifact.meta["memory_sentence"] == "Fixing invoice rounding for Frankfurt customers."
    assert "<think>" not in artifact.body and "## Decisions\n- Use banker's rounding" in artifact.body


def test_an_llm_failing_on_every_attempt_leaves_the_extractive_summary(app: SignetApp) -> None:
    """The no-LLM path, not a dead session: the last attempt writes the extractive summary,
    and the job's result names the LLM's error."""
    from fakes.llm_server import FakeLLMServer, Reply
    from signet.providers.llm_registry import make_llm

    with FakeLLMServer() as server:
        server.push(*[Reply("", status=500)] * app.config.pipeline.max_attempts)
        llm = make_llm("ollama", model="m", base_url=server.url)
        worker = SummaryWorker(app.sessions.store, app.config.workspace, app.config.sessions,
                               app.config.pipeline, PreparedWrites(app), llm)
        app.import_transcript(harness="claude-code", content=claude_code(conversation(12), session_id="down"))
        for attempt in range(app.config.pipeline.max_attempts):
            assert worker.tick(T + timedelta(minutes=attempt))
        assert len(server.requests) == app.config.pipeline.max_attempts
    job = app.store.reader().execute("SELECT status, result FROM summary_jobs").fetchone()
    assert job["status"] == "completed" and '"method": "extractive"' in job["result"]
    assert "500" in job["result"]  # llm_error
    body = (app.config.workspace / "memory" / "sessions" / "2026-11-20-down--summary.md").read_text("utf-8")
    assert parse("x", body).meta["method"] == "extractive"


def test_the_extractive_summary_keeps_decisions_and_drops_a_question_answered_later() -> None:
    from signet.lineage.formats import Message
    from signet.lineage.summarize import extractive

    turns = [("user", "Should we move the deploy job to GitHub Actions?"),
             ("assistant", "It would work."),
             ("user", "Let's go with GitHub Actions for the deploy job."),
             ("assistant", "Done."),
             ("user", "Should we switch to weekly releases instead of daily?"),
             ("assistant", "Maybe.")]
    summary = extractive([Message(role, text) for role, text in turns])
    assert summary.sections["Decisions"] == ["Let's go with GitHub Actions for the deploy job."]
    assert summary.sections["Open questions"] == [
        "Should we switch to weekly releases instead of daily?"]
