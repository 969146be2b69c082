"""The pipeline's whole write path through the real, pinned `claude -p` (conftest.py) as
`llm.provider: claude-code`, against the recording fake Anthropic API: a session ends, its
summary and the extraction run through Claude Code, the Friday constraint becomes an atomic
fact citing the session, the session's new decision supersedes the older one, MEMORY.md lists
the decisions, and the next session's prompt about deploys gets the Friday fact injected.
Then the degraded harness: missing, slow, failing, answering garbage: the session is still summarised
(the no-LLM path), the status names the error, and the extraction job is dead-lettered after
its retries, not lost.

The app runs in-process on a manual clock (the retries' back-off passes without sleeping);
only `claude` is a subprocess, once per model call. Hints are off so that each `claude` start
(1-2 s) is one the scenario needs: 4 calls for the happy path (summary, extraction, a
decision per fact). The happy path has the bundled embedder (the default install), as the
prompt hook's judge is fitted on its cosines.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fakes.anthropic_stream import FakeAnthropic
from fakes.transcripts import claude_code
from signet.app import SignetApp
from signet.clock import ManualClock
from signet.config import Config
from signet.injection.prompt_submit import prompt_submit
from signet.injection.request import HookRequest
from signet.workspace import init_workspace

OLD_DECISION = "We use MongoDB for the billing ledger."
NEW_DECISION = "We now use PostgreSQL for the billing ledger."
FRIDAY = "The billing service must never be deployed on Fridays."
SESSION = [
    ("user", "The billing ledger migration finished last night, everything moved off MongoDB."),
    ("assistant", "Great, the ledger tables are all in PostgreSQL now."),
    ("user", "So from now on we use PostgreSQL for the billing ledger, please update the runbook."),
    ("assistant", "Updated the runbook."),
    ("user", "One more rule for everyone: the billing service must never be deployed on Fridays."),
    ("assistant", "Noted, I added it to the release checklist."),
]
SUMMARY = f"""Finished moving the billing ledger to PostgreSQL and set a deploy rule.

## Decisions
- {NEW_DECISION}

## Constraints
- {FRIDAY}"""
EXTRACTION = {"facts": [
    {"content": FRIDAY, "type": "constraint", "confidence": 0.95},
    {"content": NEW_DECISION, "type": "decision", "confidence": 0.9}],
    "entities": [{"source": "billing service", "relationship": "uses", "target": "PostgreSQL",
                  "confidence": 0.9}]}
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def kind(request: dict[str, Any]) -> str:
    text = json.dumps(request.get("messages"))
    for mark, name in (("Summarise this conversation", "summary"),
                       ("Extract the facts worth remembering", "extraction"),
                       ("New fact (", "decision")):
        if mark in text:
            return name
    return "other"


def happy(request: dict[str, Any]) -> list[dict[str, Any]]:
    answers = {"summary": SUMMARY, "extraction": json.dumps(EXTRACTION),
               "decision": json.dumps({"action": "add", "confidence": 0.9, "reason": "new"})}
    return [{"type": "text", "text": answers.get(kind(request), "ok")}]


@pytest.fixture
def claude_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The environment `claude` inherits from the pipeline: a fresh HOME, the fake API."""
    fake = FakeAnthropic(happy)
    home = tmp_path / "home"
    home.mkdir()
    for name, value in {"HOME": str(home), "ANTHROPIC_BASE_URL": fake.url,
                        "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
                        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                        "DISABLE_AUTOUPDATER": "1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    yield fake
    fake.close()


def workspace(root: Path, command: str, *, timeout_ms: int = 60_000, attempts: int = 3,
              vectors: bool = False) -> Config:
    ws = init_workspace(root).workspace
    (ws / "agent.yaml").write_text(
        ("" if vectors else "embedding:\n  provider: none\n")
        + f"llm:\n  provider: claude-code\n  command: [{json.dumps(command)}]\n"
        f"  timeout_ms: {timeout_ms}\n"
        f"memory:\n  pipelineV2:\n    maxAttempts: {attempts}\n    hints:\n      enabled: false\n")
    return Config.load(ws, {})


def settle(app: SignetApp, clock: ManualClock) -> None:
    """Run the workers until the queues are empty, letting each back-off pass."""
    for _ in range(20):
        app.run_pipeline_until_idle()
        depths = app.pipeline_status()
        waiting = sum(c.get("pending", 0) + c.get("leased", 0) for c in depths["queue"].values())
        waiting += depths["summary_queue"].get("pending", 0)
        if not waiting:
            return
        clock.advance(minutes=1)
    raise AssertionError(f"the queues never emptied: {app.pipeline_status()}")


def test_a_session_becomes_the_friday_fact_through_the_real_claude_p(
    tmp_path: Path, claude_bin: Path, claude_env: FakeAnthropic,
) -> None:
    config = workspace(tmp_path / "ws", str(claude_bin), vectors=True)
    clock = ManualClock(T0)
    # An older decision, stored before the harness was the model (no call for it).
    with SignetApp.open(config, llm=None, clock=clock) as app:
        old = app.remember(OLD_DECISION, type="decision", project="app").id  # the cwd's
        settle(app, clock)
    clock.advance(days=1)
    with SignetApp.open(config, clock=clock) as app:
        app.import_transcript(harness="claude-code", session_id="deploy-rules",
                              content=claude_code(SESSION, session_id="deploy-rules",
                                                  start=T0 + timedelta(days=1)))
        settle(app, clock)

        calls = [kind(r) for r in claude_env.messages()]
        assert calls == ["summary", "extraction", "decision", "decision"]
        assert all("haiku" in r["model"] and not r.get("tools") for r in claude_env.messages())
        memories = app.list(limit=50).items
        facts = {m.content: m for m in memories if m.source_type == "pipeline"}
        assert set(facts) == {FRIDAY, NEW_DECISION}
        assert facts[FRIDAY].source_id == "deploy-rules"  # the fact cites the session
        assert app.get(old).superseded_by == facts[NEW_DECISION].id
        [summary] = [m for m in memories if m.type == "summary"]
        assert summary.content.startswith("Finished moving the billing ledger")  # the model's
        assert summary_jobs(app) == [("completed", "llm", None)]

        head = app.sessions.synthesize()
        text = Path(head["path"]).read_text()
        assert NEW_DECISION in text and FRIDAY in text and OLD_DECISION not in text

        # The next session: a prompt about deploys gets the Friday fact.
        injected = prompt_submit(app, HookRequest(
            harness="claude-code", session_id="next", prompt="Can I deploy the billing service this Friday afternoon?"))
        assert injected.context and FRIDAY in injected.context
        status = app.status()["llm"]
        assert (status["provider"], status["last_error"]) == ("claude-code", None)


def test_a_missing_claude_degrades_to_the_no_llm_path_and_loses_no_job(tmp_path: Path) -> None:
    config = workspace(tmp_path / "ws", str(tmp_path / "no-such" / "claude"), attempts=2)
    clock = ManualClock(T0)
    with SignetApp.open(config, clock=clock) as app:
        app.import_transcript(harness="claude-code", session_id="s1",
                              content=claude_code(SESSION, session_id="s1", start=T0))
        settle(app, clock)
        degraded(app, "cannot run", "cannot run")


def test_a_slow_failing_or_garbling_claude_degrades_and_loses_no_job(
    tmp_path: Path, claude_bin: Path, claude_env: FakeAnthropic,
) -> None:
    """The summary's first call hangs past llm.timeout_ms (the run is killed), its second gets
    an API error (claude -p reports it and exits 1); the extraction gets prose instead of
    JSON on each attempt."""
    release = threading.Event()
    summaries = []

    def trouble(request: dict[str, Any]) -> list[dict[str, Any]]:
        if kind(request) == "summary":
            summaries.append(request)
            if len(summaries) == 1:
                release.wait(60)
            else:
                return [{"type": "http_error", "status": 400, "error_type": "invalid_request_error",
                         "message": "a scripted bad request"}]
        return [{"type": "text", "text": "Sure! Here are some thoughts about billing."}]

    claude_env.script = trouble
    config = workspace(tmp_path / "ws", str(claude_bin), timeout_ms=8_000, attempts=2)
    clock = ManualClock(T0)
    try:
        with SignetApp.open(config, clock=clock) as app:
            app.import_transcript(harness="claude-code", session_id="s1",
                                  content=claude_code(SESSION, session_id="s1", start=T0))
            settle(app, clock)
            calls = [kind(r) for r in claude_env.messages()]
            # Two summary attempts (Claude Code may send a failed request again itself), then
            # the extraction's two.
            assert calls == ["summary"] * (len(calls) - 2) + ["extraction"] * 2
            assert len(summaries) >= 2
            degraded(app, "JSON", "reported an error")
    finally:
        release.set()


def summary_jobs(app: SignetApp) -> list[tuple[str, str, str | None]]:
    rows = app.store.reader().execute("SELECT status, result FROM summary_jobs").fetchall()
    results = [(row["status"], json.loads(row["result"] or "{}")) for row in rows]
    return [(status, r.get("method"), r.get("llm_error")) for status, r in results]


def degraded(app: SignetApp, error: str, summary_error: str) -> None:
    """The session summarised without the LLM (`summary_error` in the job's result, and the
    provider's last error in the status), the extraction dead-lettered after its retries with
    `error`, and requeue-able for when the harness works again."""
    [(status, method, llm_error)] = summary_jobs(app)
    assert (status, method) == ("completed", "extractive") and summary_error in (llm_error or "")
    memories = app.list(limit=50).items
    [summary] = [m for m in memories if m.type == "summary"]
    assert "billing service must never be deployed on Fridays" in summary.content
    assert not [m for m in memories if m.source_type == "pipeline"]
    dead = [j for j in app.jobs(status="dead") if j.memory_id == summary.id]
    assert [j.job_type for j in dead] == ["extract"] and error in (dead[0].error or "")
    status = app.status()["llm"]  # the provider's own last failure
    assert status["provider"] == "claude-code" and summary_error in (status["last_error"] or "")
    assert app.requeue_dead_jobs([dead[0].id])
