"""MEMORY.md, the global head: rendered from the database within its token budget, unpinned
importance decaying with time since last access (recall resets it), pinned memories exempt, the
user's hand edits kept, the previous file backed up; and the inactivity timeout."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from fakes.transcripts import claude_code, conversation
from signet.app import SignetApp
from signet.config import Config
from signet.lineage.synthesis import KEEP_CLOSE, KEEP_OPEN, count_tokens
from signet.providers.hash_embedder import HashEmbedder
from signet.types import RecallQuery, format_ts

NOW = datetime.now(UTC)


def age(app: SignetApp, memory_id: str, days: int) -> None:
    """Make a memory `days` old and never accessed since (what time would do)."""
    stamp = format_ts(NOW - timedelta(days=days))
    with app.store.write_tx() as conn:
        conn.execute("UPDATE memories SET created_at = ?, updated_at = ?, last_accessed = NULL"
                     " WHERE id = ?", (stamp, stamp, memory_id))


def test_memory_md_decays_unpinned_items_keeps_pinned_ones_and_access_resets(app: SignetApp) -> None:
    app.remember("The user drives a blue Ford Mustang", importance=0.8)
    stale = app.remember("The user once liked kite surfing in Tarifa", importance=0.8).id
    pinned = app.remember("Never deploy on Fridays", importance=0.8, pinned=True, type="constraint").id
    for memory_id in (stale, pinned):
        age(app, memory_id, 60)  # 0.8 * 0.95^60 = 0.04: below the head's floor
    app.synthesize_memory_md(now=NOW)
    text = (app.config.workspace / "MEMORY.md").read_text("utf-8")
    assert "## Constraints\n- Never deploy on Fridays" in text
    assert "blue Ford Mustang" in text and "kite surfing" not in text
    app.feedback(stale, "positive")  # an access resets the decay clock
    hits = app.recall(RecallQuery("kite surfing Tarifa", mode="keyword", touch=True))
    assert stale in [h.memory.id for h in hits.hits]
    app.synthesize_memory_md(now=NOW)
    assert "kite surfing in Tarifa" in (app.config.workspace / "MEMORY.md").read_text("utf-8")


def test_memory_md_stays_within_its_token_budget_and_keeps_hand_edits(config: Config) -> None:
    small = dataclasses.replace(config.sessions, memory_md_budget_tokens=200)
    with SignetApp.open(config.replace(sessions=small), embedder=HashEmbedder(64), llm=None) as app:
        for i in range(60):
            app.remember(f"Fact number {i}: the warehouse in district {i} stores spare parts for model {i}",
                         importance=0.5 + i / 200)
        path = app.config.workspace / "MEMORY.md"
        template = path.read_text("utf-8") if path.exists() else ""
        path.write_text(f"# Memory\n\n{KEEP_OPEN}\nCall me Sam. My timezone is CET.\n{KEEP_CLOSE}\n", "utf-8")
        report = app.synthesize_memory_md(now=NOW)
        text = path.read_text("utf-8")
        assert count_tokens(text) <= 200 and report["tokens"] <= 200
        assert f"{KEEP_OPEN}\nCall me Sam. My timezone is CET.\n{KEEP_CLOSE}" in text
        assert 0 < report["items"] < 60 and report["dropped"] > 0
        assert "Fact number 59" in text  # the most important first
        backups = list((app.config.workspace / "memory" / "backups").glob("MEMORY-*.md"))
        assert len(backups) == 1 and "Call me Sam" in backups[0].read_text("utf-8")
        assert template != text


def test_active_projects_and_open_questions_come_from_the_session_summaries(app: SignetApp) -> None:
    turns = conversation(12, decision=True)
    app.import_transcript(harness="claude-code", content=claude_code(turns, session_id="b1"),
                          project="billing")
    app.run_pipeline_until_idle(only=("summary",))
    app.synthesize_memory_md(now=NOW)
    text = (app.config.workspace / "MEMORY.md").read_text("utf-8")
    assert "## Active projects\n- **billing** (1 session, " in text
    assert "Open: Should we notify the finance team before the deploy on Thursday?" in text


def test_synthesis_runs_after_an_idle_gap_only(app: SignetApp) -> None:
    worker = next(w for w in app.workers() if w.name == "synthesis")
    app.remember("The user keeps bees on the roof", importance=0.9)
    assert not worker.tick(datetime.now(UTC))  # memory just changed: not idle yet
    later = datetime.now(UTC) + timedelta(minutes=11)
    worker.last_run = None
    assert worker.tick(later)
    assert "keeps bees" in (app.config.workspace / "MEMORY.md").read_text("utf-8")
    worker.last_run = None
    assert not worker.tick(later + timedelta(minutes=5))  # nothing changed since


def test_a_session_without_an_end_event_is_closed_and_summarised_after_the_timeout(app: SignetApp) -> None:
    start = datetime.now(UTC) - timedelta(hours=2)
    text = claude_code(conversation(6, decision=True), session_id="open", start=start)
    app.import_transcript(harness="claude-code", content=text, ended=False)
    assert app.session_show("open")["ended_at"] is None
    assert app.store.reader().execute("SELECT COUNT(*) FROM summary_jobs").fetchone()[0] == 0
    timeout = next(w for w in app.workers() if w.name == "session-timeout")
    assert timeout.tick(datetime.now(UTC))
    session = app.session_show("open")
    assert session["ended_at"] == session["last_event_at"]
    app.run_pipeline_until_idle(only=("summary",))
    assert app.session_show("open")["summary_status"] == "summarized"
    timeout.last_run = None
    assert not timeout.tick(datetime.now(UTC))  # closed once


# The session of the no-LLM walk-through: a constraint, an owner, a question the session answers
# with a decision, and a second decision.
DEPLOYS = [
    ("user", "The billing service must never be deployed on Fridays."),
    ("assistant", "Understood, deploys of the billing service stay Monday to Thursday."),
    ("user", "Alice owns the billing service and Bob is on call this week."),
    ("assistant", "Noted."),
    ("user", "Should we move the deploy job to GitHub Actions?"),
    ("assistant", "GitHub Actions would work; Jenkins is what you run today."),
    ("user", "Let's go with GitHub Actions for the deploy job."),
    ("assistant", "I will port the pipeline."),
    ("user", "We decided to keep Jenkins for the nightly builds only."),
    ("assistant", "Agreed."),
    ("user", "Do we need a separate staging cluster at all?"),
    ("assistant", "That depends on the load tests."),
]


def test_without_an_llm_memory_md_shows_the_sessions_decisions_and_no_answered_question(
    app: SignetApp,
) -> None:
    app.import_transcript(harness="claude-code", content=claude_code(DEPLOYS, session_id="d1"),
                          project="billing")
    app.run_pipeline_until_idle()
    app.synthesize_memory_md(now=NOW)
    text = (app.config.workspace / "MEMORY.md").read_text("utf-8")
    head = text.split("## Key people and tools")[0]
    assert "- The billing service must never be deployed on Fridays." in head
    assert "- Decided: Let's go with GitHub Actions for the deploy job." in head
    assert "- Decided: We decided to keep Jenkins for the nightly builds only." in head
    assert "Should we move the deploy job" not in text
    assert "Open: Do we need a separate staging cluster at all?" in text
    people = text.split("## Key people and tools")[1].split("\n## ")[0]
    for noise in ("Constraints", "Decisions", "Facts", "Open", "Should", "Entities"):
        assert f"- {noise}\n" not in people + "\n"
    assert "- Alice" in people and "- GitHub Actions" in people
