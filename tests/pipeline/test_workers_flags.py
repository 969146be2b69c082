"""Every combination of the controlled-write flags, on a proposal to update an existing memory:
enabled, shadowMode, mutationsFrozen, autonomous.allowUpdateDelete. Plus deletes (pinned ones
never), the cold archive before any change, and the review queue for contradictions."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from worker_support import Script, http_llm, open_app, pipeline_config, proposals, query, rows

from fakes.llm_server import FakeLLMServer
from signet.app import SignetApp
from signet.errors import Conflict
from signet.store import cold as cold_sql
from signet.types import Actor, RecallQuery

OLD = "The backend service runs Python 3.10 in production"
NEW = "The backend service now runs Python 3.12 in production"
SOURCE = "Upgrade done: the backend is on Python 3.12 now."


def update_script(target: dict[str, str], action: str = "update", fact: str = NEW) -> Script:
    return Script(
        facts={"Upgrade done": [{"content": fact, "type": "fact", "confidence": 0.9}]},
        decide=lambda prompt: {"action": action, "targetId": target["id"], "confidence": 0.9,
                               "reason": "newer version"},
    )


def seed_target(app: SignetApp, content: str = OLD, **fields: Any) -> str:
    """A memory that exists before the pipeline looks (its own extraction yields nothing)."""
    memory_id = app.remember(content, **fields).id
    app.run_pipeline_until_idle()
    return memory_id


FLAGS = list(itertools.product([True, False], repeat=4))


@pytest.mark.parametrize(("enabled", "shadow", "frozen", "allow"), FLAGS)
def test_every_flag_combination(
    tmp_path: Path, enabled: bool, shadow: bool, frozen: bool, allow: bool
) -> None:
    target: dict[str, str] = {}
    script = update_script(target)
    root = tmp_path / "ws"
    with FakeLLMServer(responder=script) as server:
        # Memories are written with mutations open; then the app reopens with the flags.
        with open_app(pipeline_config(root, enabled=enabled), http_llm(server)) as app:
            target["id"] = seed_target(app)
            source = app.remember(SOURCE).id
        config = pipeline_config(root, enabled=enabled, shadow=shadow, frozen=frozen,
                                 allow_update_delete=allow)
        with open_app(config, http_llm(server)) as app:
            did = app.run_pipeline_until_idle()
            recorded = proposals(app, source)
            memory = app.get(target["id"])
            cold = cold_sql.for_memory(app.store.reader(), target["id"])
            pending = app.jobs(status="pending", job_type="extract")

    if not enabled:
        assert did == 0 and recorded == [] and pending == []  # nothing was ever enqueued
        assert app_state(memory, cold) == ("unchanged", 0)
    elif frozen:
        assert did == 0 and recorded == [] and len(pending) == 1  # quiet: the job waits
        assert app_state(memory, cold) == ("unchanged", 0)
    elif shadow:
        assert [(p["outcome"], p["actor"]) for p in recorded] == [("shadow", "pipeline-shadow")]
        assert recorded[0]["proposal"]["targetId"] == target["id"]
        assert app_state(memory, cold) == ("unchanged", 0)
    elif not allow:
        assert [p["outcome"] for p in recorded] == ["not_allowed"]
        assert app_state(memory, cold) == ("unchanged", 0)
    else:
        assert [p["outcome"] for p in recorded] == ["update"]
        assert app_state(memory, cold) == ("updated", 1)
        assert cold[0].content == OLD and cold[0].snapshot["version"] == 1


def app_state(memory: Any, cold: list[Any]) -> tuple[str, int]:
    state = {OLD: "unchanged", NEW: "updated"}.get(memory.content, memory.content)
    return state, len(cold)


def test_shadow_mode_writes_nothing_but_history(tmp_path: Path) -> None:
    script = Script(
        facts={"Berlin": [{"content": "The user lives in Berlin now", "confidence": 0.95}]},
        entities={"Berlin": [{"source": "user", "relationship": "lives_in", "target": "Berlin"}]},
    )
    with FakeLLMServer(responder=script) as server:
        config = pipeline_config(tmp_path / "ws", shadow=True)
        with open_app(config, http_llm(server)) as app:
            source = app.remember("I moved to Berlin.").id
            conn = app.store.reader()
            before = table_counts(conn)
            app.run_pipeline_until_idle()
            after = table_counts(conn)
            changed = {t for t in before if before[t] != after[t]}
            assert changed == {"memory_history"}
            assert after["memory_history"] - before["memory_history"] == 1
            assert [p["actor"] for p in proposals(app, source)] == ["pipeline-shadow"]
            assert app.get(source).hints == ""  # hints computed, not stored, in shadow mode
            hints_job = app.jobs(job_type="hints")[0]
            assert hints_job.result and hints_job.result["stored"] is False


def table_counts(conn: Any) -> dict[str, int]:
    tables = ["memories", "memory_history", "memories_cold", "entities", "relations",
              "memory_entity_mentions", "embeddings", "memory_review_queue"]
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_delete_archives_first_and_never_touches_a_pinned_memory(
    tmp_path: Path, store_url: str | None
) -> None:
    target: dict[str, str] = {}
    script = update_script(target, action="delete")
    config = pipeline_config(tmp_path / "ws", allow_update_delete=True, store_url=store_url)
    with FakeLLMServer(responder=script) as server, open_app(config, http_llm(server)) as app:
        target["id"] = seed_target(app, pinned=True)
        pinned_source = app.remember(SOURCE).id
        app.run_pipeline_until_idle()
        assert [p["outcome"] for p in proposals(app, pinned_source)] == ["pinned"]
        assert not app.get(target["id"]).is_deleted

        app.modify(target["id"], {"pinned": False})
        source = app.remember(SOURCE + " Really.").id
        app.run_pipeline_until_idle()
        assert [p["outcome"] for p in proposals(app, source)] == ["delete"]
        gone = app.get(target["id"])
        assert gone.is_deleted
        cold = query(app, "SELECT id, content, snapshot FROM memories_cold WHERE memory_id = ?",
                     target["id"])
        assert [c[1] for c in cold] == [OLD] and json.loads(cold[0][2])["is_deleted"] is False
        deleted = [e for e in app.history(target["id"]) if e.event == "deleted"]
        assert deleted[0].changed_by == "pipeline"
        assert deleted[0].metadata and deleted[0].metadata["coldId"] == cold[0][0]


def test_a_hallucinated_target_id_is_rejected_and_changes_nothing(tmp_path: Path) -> None:
    script = Script(
        facts={"Upgrade done": [{"content": NEW, "confidence": 0.9}]},
        decide=lambda prompt: {"action": "update", "targetId": "mem-that-does-not-exist",
                               "confidence": 0.99},
    )
    config = pipeline_config(tmp_path / "ws", allow_update_delete=True)
    with FakeLLMServer(responder=script) as server, open_app(config, http_llm(server)) as app:
        target = seed_target(app)
        source = app.remember(SOURCE).id
        app.run_pipeline_until_idle()
        recorded = proposals(app, source)
        assert [p["outcome"] for p in recorded] == ["rejected"]
        assert "unknown target" in recorded[0]["outcomeReason"]
        assert app.get(target).content == OLD
        assert app.list().total == 2
        assert app.jobs(job_type="extract", status="completed")


def test_a_contradiction_blocks_the_update_into_the_review_queue(
    tmp_path: Path, store_url: str | None
) -> None:
    target: dict[str, str] = {}
    script = update_script(target, fact="Light mode is the default theme of the editor")
    config = pipeline_config(tmp_path / "ws", allow_update_delete=True, store_url=store_url)
    with FakeLLMServer(responder=script) as server, open_app(config, http_llm(server)) as app:
        target["id"] = seed_target(app, "Dark mode is the default theme of the editor")
        source = app.remember(SOURCE).id
        app.run_pipeline_until_idle()
        assert [p["outcome"] for p in proposals(app, source)] == ["review"]
        assert app.get(target["id"]).content == "Dark mode is the default theme of the editor"
        [item] = app.review_queue()
        assert (item.memory_id, item.source_memory_id, item.status) == (target["id"], source, "pending")
        assert item.verdict and item.verdict["contradicts"] and not item.verdict["usedLlm"]
        assert "contradiction" not in script.calls  # the fast path decided

        operator = Actor(name="alice")
        approved = app.resolve_review(item.id, approve=True, actor=operator)
        assert (approved.status, approved.resolved_by) == ("approved", "alice")
        assert app.get(target["id"]).content == "Light mode is the default theme of the editor"
        cold = query(app, "SELECT content FROM memories_cold WHERE memory_id = ?", target["id"])
        assert cold == [("Dark mode is the default theme of the editor",)]
        assert app.history(target["id"])[-1].changed_by == "alice"
        assert app.review_queue() == []
        with pytest.raises(Conflict):
            app.resolve_review(item.id, approve=False, actor=operator)


def test_approving_a_review_made_for_an_older_version_is_a_conflict_keeping_the_newer_text(
    tmp_path: Path,
) -> None:
    target: dict[str, str] = {}
    script = update_script(target, fact="Light mode is the default theme of the editor")
    config = pipeline_config(tmp_path / "ws", allow_update_delete=True)
    with FakeLLMServer(responder=script) as server, open_app(config, http_llm(server)) as app:
        target["id"] = seed_target(app, "Dark mode is the default theme of the editor")
        app.remember(SOURCE)
        app.run_pipeline_until_idle()
        [item] = app.review_queue()
        assert item.target_version == 1
        newer = "The editor now follows the system theme by default"
        app.modify(target["id"], {"content": newer})
        with pytest.raises(Conflict) as raised:
            app.resolve_review(item.id, approve=True, actor=Actor(name="alice"))
        error = raised.value
        assert error.code == "review_stale"
        assert newer in error.message and "Light mode is the default theme" in error.message
        assert error.details["current_content"] == newer
        assert error.details["review_new_content"] == item.new_content
        assert (error.details["review_version"], error.details["current_version"]) == (1, 2)
        assert app.get(target["id"]).content == newer  # nothing overwritten
        assert [i.id for i in app.review_queue()] == [item.id]  # still pending: reject it
        assert app.resolve_review(item.id, approve=False).status == "rejected"


def test_the_llm_slow_path_can_block_and_a_rejected_review_changes_nothing(tmp_path: Path) -> None:
    target: dict[str, str] = {}
    script = update_script(target, fact="The weekly team meeting happens on Thursday mornings")
    script.contradiction = {"contradicts": True, "confidence": 0.9, "reason": "different day"}
    config = pipeline_config(tmp_path / "ws", allow_update_delete=True)
    with FakeLLMServer(responder=script) as server, open_app(config, http_llm(server)) as app:
        old = "The weekly team meeting happens on Tuesday mornings"
        target["id"] = seed_target(app, old)
        app.remember(SOURCE)
        app.run_pipeline_until_idle()
        assert "contradiction" in script.calls
        [item] = app.review_queue()
        assert item.verdict and item.verdict["usedLlm"]
        rejected = app.resolve_review(item.id, approve=False, actor=Actor(name="bob"))
        assert rejected.status == "rejected"
        assert app.get(target["id"]).content == old
        assert cold_sql.for_memory(app.store.reader(), target["id"]) == []
        assert [i.status for i in app.review_queue(status=None)] == ["rejected"]


def test_a_temporal_marker_lets_the_newer_fact_supersede(tmp_path: Path) -> None:
    target: dict[str, str] = {}
    script = update_script(target, fact="Light mode is now the default theme of the editor")
    config = pipeline_config(tmp_path / "ws", allow_update_delete=True)
    with FakeLLMServer(responder=script) as server, open_app(config, http_llm(server)) as app:
        target["id"] = seed_target(app, "Dark mode is the default theme of the editor")
        source = app.remember(SOURCE).id
        app.run_pipeline_until_idle()
        recorded = proposals(app, source)
        assert [p["outcome"] for p in recorded] == ["update"]
        assert recorded[0]["contradiction"]["contradicts"] is True
        assert app.review_queue() == []
        assert rows(app.store.reader(), "SELECT count(*) FROM memories_cold") == [(1,)]
        # The updated memory is searchable by its new words at once.
        hits = recall_ids(app, "light mode default")
        assert target["id"] in hits
def recall_ids(app: SignetApp, text: str) -> list[str]:
    query = RecallQuery(text, mode="keyword", touch=False)
    return [hit.memory.id for hit in app.recall(query).hits]


def test_an_added_fact_that_states_the_current_value_supersedes_the_older_memory(
    tmp_path: Path,
) -> None:
    """A decision distilled from a session ("we now use X") is added as a fact (updates are
    off by default) and replaces the older decision it contradicts: `superseded_by` names the
    new fact, so MEMORY.md and injection drop the old one."""
    script = Script(facts={"ledger discussion": [
        {"content": "We now use PostgreSQL for the billing ledger.", "type": "decision",
         "confidence": 0.9},
        {"content": "The billing service must never be deployed on Fridays.",
         "type": "constraint", "confidence": 0.9}]})
    config = pipeline_config(tmp_path / "ws")
    with FakeLLMServer(responder=script) as server, open_app(config, http_llm(server)) as app:
        old = seed_target(app, "We use MongoDB for the billing ledger.", type="decision")
        source = app.remember("Notes of the ledger discussion with the billing team.").id
        app.run_pipeline_until_idle()
        added = {p["proposal"]["fact"]["content"]: p["memoryId"] for p in proposals(app, source)
                 if p["outcome"] == "add"}
        new = added["We now use PostgreSQL for the billing ledger."]
        assert app.get(old).superseded_by == new
        assert app.get(added["The billing service must never be deployed on Fridays."]
                       ).superseded_by is None
        [job] = [j for j in app.jobs(job_type="extract") if j.memory_id == source]
        assert (job.result or {})["superseded"] == [old]
