"""`signet session import|list|show|search` as real subprocesses on a tmp workspace (no daemon:
the CLI opens the store in-process)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from fakes.transcripts import claude_code, codex

QUIET = "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n"


def run(workspace: Path, *args: str) -> Any:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "SIGNET_PORT": str(port),
           "HOME": str(workspace.parent), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "signet", *args], env=env, capture_output=True,
                          text=True, timeout=120)
    return done


def test_session_import_list_show_and_search_from_the_shell(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agent.yaml").write_text(QUIET, "utf-8")
    file = tmp_path / "rollout.jsonl"
    file.write_text(codex([("user", "Our robot is named Tobor."), ("assistant", "Hello Tobor.")]), "utf-8")
    first = run(ws, "--json", "session", "import", str(file), "--harness", "codex", "--project", "lab")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["status"] == "created"
    again = run(ws, "session", "import", str(file), "--harness", "codex", "--project", "lab")
    assert again.returncode == 0 and again.stdout.startswith("unchanged: session 019a2d7a-codex")
    listed = json.loads(run(ws, "session", "list", "--json").stdout)
    assert [s["session_id"] for s in listed["items"]] == ["019a2d7a-codex"]
    shown = json.loads(run(ws, "session", "show", "019a2d7a-codex", "--json").stdout)
    assert [m["text"] for m in shown["messages"]] == ["Our robot is named Tobor.", "Hello Tobor."]
    found = json.loads(run(ws, "session", "search", "Tobor", "--json").stdout)
    assert found["items"][0]["project"] == "lab"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(claude_code([("user", "x")]).replace("{", "[", 1), "utf-8")
    refused = run(ws, "session", "import", str(bad), "--harness", "claude-code", "--session-id", "b")
    assert refused.returncode == 1 and "line 1 is not valid JSON" in refused.stderr


def test_threads_lineage_reindex_and_synthesize_from_the_shell(tmp_path: Path) -> None:
    from fakes.transcripts import conversation

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agent.yaml").write_text("embedding:\n  provider: none\n", "utf-8")
    file = tmp_path / "s.jsonl"
    file.write_text(claude_code(conversation(6, decision=True), session_id="cli-1"), "utf-8")
    assert run(ws, "session", "import", str(file), "--harness", "claude-code", "--project", "ops").returncode == 0
    worked = run(ws, "--json", "pipeline", "run", "--until-idle", "--only", "summary")
    assert worked.returncode == 0, worked.stderr
    threads = json.loads(run(ws, "threads", "list", "--json").stdout)
    assert threads["items"][0]["thread"] == "project:ops"
    head = run(ws, "threads", "show", "project:ops")
    assert "banker's rounding" in head.stdout
    up = json.loads(run(ws, "lineage", "cli-1", "--json").stdout)["up"]
    assert [u["kind"] for u in up] == ["summary"]
    assert json.loads(run(ws, "artifacts", "reindex", "--json").stdout)["indexed"] == 1
    made = json.loads(run(ws, "memory", "synthesize", "--json").stdout)
    assert made["tokens"] <= made["budget"] and (ws / "MEMORY.md").read_text("utf-8").startswith("# Memory")
    gone = run(ws, "session", "forget", "cli-1")
    assert gone.returncode == 0 and "removed session cli-1" in gone.stdout


def test_an_imported_transcript_belongs_to_the_project_it_ran_in(tmp_path: Path) -> None:
    # As the session-end hook files it: the transcript's cwd names the project, and so the thread.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agent.yaml").write_text("embedding:\n  provider: none\n", "utf-8")
    file = tmp_path / "s.jsonl"
    file.write_text(claude_code([("user", "The invoices service retries three times."),
                                 ("assistant", "Noted.")], session_id="cwd-1",
                                cwd="/home/u/invoices"), "utf-8")
    done = run(ws, "--json", "session", "import", str(file), "--harness", "claude-code")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["session"]["project"] == "invoices"
    named = run(ws, "--json", "session", "import", str(file), "--harness", "claude-code",
                "--session-id", "cwd-2", "--project", "billing")
    assert json.loads(named.stdout)["session"]["project"] == "billing"  # a named project wins


def test_lineage_takes_the_short_id_the_tables_show(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agent.yaml").write_text(QUIET, "utf-8")
    made = run(ws, "--json", "remember", "The deploy window is Tuesday morning")
    assert made.returncode == 0, made.stderr
    memory_id = json.loads(made.stdout)["id"]
    shown = run(ws, "--json", "lineage", memory_id[:8])
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["node"] == {
        "kind": "memory", "id": memory_id, "content": "The deploy window is Tuesday morning"}
    unknown = run(ws, "lineage", "ffffffff")
    assert unknown.returncode == 1 and "ffffffff is no memory, session or artifact" in unknown.stderr
