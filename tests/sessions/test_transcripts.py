"""Lossless transcript import: parsing each harness, idempotent re-import, appending a longer
version, keeping a diverged history, the original kept byte for byte, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.transcripts import claude_code, codex, conversation, opencode
from signet.app import SignetApp
from signet.errors import Forbidden, InvalidInput, NotFound
from signet.lineage.formats import parse
from signet.types import MemoryScope

TURNS = [("user", "My cat Miso only eats salmon pate."), ("assistant", "Noted, salmon pate for Miso.")]


def imported(app: SignetApp, text: str, harness: str = "claude-code", **kw: object) -> dict:
    return app.import_transcript(harness=harness, content=text, **kw)


def test_a_claude_code_transcript_imported_twice_is_stored_once(app: SignetApp) -> None:
    text = claude_code(conversation(3))
    first = imported(app, text)
    second = imported(app, text)
    assert (first["status"], second["status"]) == ("created", "unchanged")
    assert first["session"]["session_id"] == "0f3c9a52-claude"  # the file's own sessionId
    assert first["session"]["message_count"] == 6
    assert app.session_list()["total"] == 1
    assert second["summary_job"] is None  # queued once, by the first import
    rows = app.store.reader().execute("SELECT COUNT(*) FROM summary_jobs").fetchone()[0]
    assert rows == 1


def test_tool_output_and_thinking_stay_in_the_original_not_in_the_cleaned_text(app: SignetApp) -> None:
    text = claude_code(conversation(2))
    session = imported(app, text)["session"]
    cleaned = (app.config.workspace / session["path"]).read_text("utf-8")
    raw = (app.config.workspace / session["raw_path"]).read_text("utf-8")
    assert raw == text
    assert "TOOL-OUTPUT" not in cleaned and "SECRET-THOUGHT" not in cleaned
    assert "TOOL-OUTPUT 1" in raw and "SECRET-THOUGHT 1" in raw
    lines = [json.loads(line) for line in cleaned.splitlines()]
    assert [m["role"] for m in lines] == ["user", "assistant"] * 2
    assert session["path"].startswith("memory/transcripts/claude-code/")
    shown = app.session_show("0f3c9a52-claude")
    assert shown["messages"][0]["text"].startswith("I am rewriting the billing service")


def test_a_longer_version_appends_and_an_older_one_changes_nothing(app: SignetApp) -> None:
    turns = conversation(6)
    imported(app, claude_code(turns[:4]), ended=False)
    longer = imported(app, claude_code(turns))
    assert (longer["status"], longer["added"]) == ("appended", 8)
    assert longer["session"]["message_count"] == 12
    older = imported(app, claude_code(turns[:6]))
    assert older["status"] == "unchanged"
    messages = app.session_show("0f3c9a52-claude")["messages"]
    assert [m["text"] for m in messages] == [t for _, t in turns]


def test_a_rewritten_history_keeps_every_stored_message_and_the_previous_original(app: SignetApp) -> None:
    turns = conversation(3)
    first = imported(app, claude_code(turns))
    rewritten = [*turns[:2], ("user", "Actually, forget the refunds; look at payouts."), ("assistant", "Payouts it is.")]
    again = imported(app, claude_code(rewritten))
    assert again["status"] == "diverged"
    texts = [m["text"] for m in app.session_show("0f3c9a52-claude")["messages"]]
    assert texts == [t for _, t in turns] + ["Actually, forget the refunds; look at payouts.", "Payouts it is."]
    raw_dir = (app.config.workspace / first["session"]["raw_path"]).parent
    assert len(list(raw_dir.glob("*.orig"))) == 2  # the new original and the one it replaced


@pytest.mark.parametrize(
    ("harness", "text", "session_id"),
    [
        ("codex", codex(TURNS), "019a2d7a-codex"),
        ("opencode", opencode(TURNS), "ses_opencode"),
        ("generic", "\n".join(json.dumps({"role": r, "content": t}) for r, t in TURNS), None),
        ("generic", "User: My cat Miso only eats salmon pate.\nAssistant: Noted, salmon pate for Miso.", None),
    ],
)
def test_every_harness_format_gives_the_same_conversation(harness: str, text: str, session_id: str | None) -> None:
    parsed = parse(harness, text)
    assert [(m.role, m.text) for m in parsed.messages] == TURNS
    assert parsed.session_id == session_id


def test_a_truncated_last_line_is_left_for_the_next_import() -> None:
    text = claude_code(TURNS)
    parsed = parse("claude-code", text + '{"type": "user", "message": {"role": "us')
    assert len(parsed.messages) == 2


@pytest.mark.parametrize(
    ("harness", "text", "problem"),
    [
        ("claude-code", '{"type": "user"}\nnot json\n{"type": "user"}\n', "line 2 is not valid JSON"),
        ("claude-code", '[1, 2]\n', "line 1 is not a JSON object"),
        ("codex", "", "empty"),
        ("generic", "just some words with no speakers", "no user or assistant messages"),
        ("emacs", "User: hi", "unknown harness"),
    ],
)
def test_a_bad_transcript_is_refused_naming_the_problem_and_nothing_is_stored(
    app: SignetApp, harness: str, text: str, problem: str
) -> None:
    with pytest.raises(InvalidInput, match=problem):
        app.import_transcript(harness=harness, content=text, session_id="s1")
    assert app.session_list()["total"] == 0
    assert not (app.config.workspace / "memory" / "transcripts").exists()


def test_a_path_import_reads_the_file_and_refuses_what_is_not_there(app: SignetApp, tmp_path: Path) -> None:
    file = tmp_path / "abc.jsonl"
    file.write_text(claude_code(TURNS), "utf-8")
    result = app.import_transcript(harness="claude-code", path=str(file))
    assert result["session"]["message_count"] == 2
    with pytest.raises(NotFound, match="no such file"):
        app.import_transcript(harness="claude-code", path=str(tmp_path / "missing.jsonl"))
    with pytest.raises(InvalidInput, match="exactly one of path or content"):
        app.import_transcript(harness="claude-code", path=str(file), content="x")


def test_sessions_of_another_scope_do_not_exist_for_a_scoped_caller(app: SignetApp) -> None:
    mine = MemoryScope(agent_id="agent-a", project="alpha")
    other = MemoryScope(agent_id="agent-b")
    imported(app, claude_code(TURNS, session_id="same-id"), scope=mine)
    imported(app, claude_code(conversation(2), session_id="same-id"), scope=other)
    assert app.session_list(scope=mine)["total"] == 1
    assert app.session_show("same-id", scope=mine)["messages"][0]["text"].startswith("My cat")
    assert app.session_show("same-id", scope=other)["messages"][0]["text"].startswith("I am rewriting")
    assert app.session_search("salmon", scope=other)["items"] == []
    assert len(app.session_search("salmon", scope=mine)["items"]) == 1
    with pytest.raises(NotFound):
        app.session_show("same-id", scope=MemoryScope(agent_id="agent-c"))
    with pytest.raises(Forbidden):
        app.import_transcript(harness="claude-code", path="/etc/passwd", scope=mine)
    with pytest.raises(Forbidden):
        imported(app, claude_code(TURNS), scope=mine, project="beta")


def test_no_two_scopes_can_spell_one_session_key(app: SignetApp) -> None:
    """The key hashes agent, project and id joined by U+001F: a part holding it is refused, or
    agent "a" with project "b<US>c" and agent "a<US>b" with project "c" would share a session."""
    for agent, project, sid in (("a", "b\x1fc", "s1"), ("a\x1fb", "c", "s1"),
                                ("a", "b", "c\x1fs1")):
        with pytest.raises(InvalidInput, match="unit separator"):
            imported(app, claude_code(TURNS, session_id=sid), scope=MemoryScope(agent_id=agent),
                     project=project)
    assert app.session_list()["total"] == 0
    assert not (app.config.workspace / "memory" / "transcripts").exists()


def test_session_search_finds_sessions_by_their_words(app: SignetApp) -> None:
    imported(app, claude_code(TURNS, session_id="cat"))
    imported(app, claude_code(conversation(4), session_id="billing"))
    found = app.session_search("invoices rounding")["items"]
    assert [s["session_id"] for s in found] == ["billing"]
    assert "[" in found[0]["snippet"]


def test_the_same_conversation_with_other_tool_output_keeps_both_originals(app: SignetApp) -> None:
    first = imported(app, claude_code(TURNS))
    again = imported(app, claude_code(TURNS).replace("TOOL-OUTPUT 1", "TOOL-OUTPUT one"))
    assert again["status"] == "unchanged"
    raws = sorted((app.config.workspace / first["session"]["raw_path"]).parent.glob("*.orig"))
    assert len(raws) == 2
    texts = {p.read_text("utf-8").count("TOOL-OUTPUT one") for p in raws}
    assert texts == {0, 1}


def test_the_hot_session_queries_use_their_indexes(app: SignetApp) -> None:
    conn = app.store.reader()

    def plan(sql: str, *args: object) -> str:
        return " ".join(str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", args))

    lease = plan("SELECT id FROM summary_jobs WHERE status = 'pending' ORDER BY created_at, id LIMIT 1")
    assert "idx_summary_jobs_status" in lease
    idle = plan("SELECT session_key FROM session_transcripts WHERE ended_at IS NULL"
                " AND last_event_at < ? ORDER BY last_event_at LIMIT 100", "2026")
    assert "idx_session_transcripts_open" in idle
    by_id = plan("SELECT session_key FROM session_transcripts WHERE session_id = ? AND agent_id = ?",
                 "s", "a")
    assert "idx_session_transcripts_agent_session" in by_id
    from_session = plan("SELECT id FROM memories WHERE agent_id = ? AND is_deleted = 0"
                        " AND (session_id = ? OR source_id = ?)", "a", "s", "s")
    assert "idx_memories_agent_session" in from_session or "idx_memories_source_id" in from_session
