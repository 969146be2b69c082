"""Cursor: what `signet connect cursor` writes (hooks.json in Cursor's format, the MCP server),
and the commands it wrote run as Cursor runs them, with Cursor's payloads on stdin (the common
fields `conversation_id`, `generation_id`, `hook_event_name`, `workspace_roots`, plus
beforeSubmitPrompt's `prompt`/`attachments` and stop's `status`/`loop_count`/`transcript_path`)
and no SIGNET_* variable, against a real daemon: a "remember that ..." is stored, the transcript
Cursor wrote (agent-transcripts JSONL) becomes a session, each answer is what Cursor reads."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from daemon_process import NO_EMBEDDINGS, DaemonProcess, daemon_env, free_port

from signet.lineage.formats import parse
from signet.workspace import init_workspace

CONVERSATION = "0b7c5e1a-5d2f-4c1e-9a57-cursor000001"
# Two turns of a Cursor agent transcript, as `agent-transcripts/<id>.jsonl` holds them.
TRANSCRIPT = [
    {"role": "user", "message": {"content": [
        {"type": "text", "text": "<user_query>\nUse PostgreSQL for the billing ledger.\n</user_query>"}]}},
    {"role": "assistant", "message": {"content": [
        {"type": "text", "text": "Noted: PostgreSQL for the billing ledger."},
        {"type": "tool_use", "name": "Shell", "input": {"command": "ls"}}]}},
]


def common(event: str, project: Path) -> dict[str, Any]:
    return {"conversation_id": CONVERSATION, "generation_id": "gen-1", "hook_event_name": event,
            "workspace_roots": [str(project)], "model": "gpt-5", "cursor_version": "2.0.77",
            "user_email": None}


def run(command: str, payload: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shlex.split(command), input=json.dumps(payload), env=env,
                          capture_output=True, text=True, timeout=60)


def signet(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "signet", *args], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_cursor_transcripts_parse_without_the_query_tags() -> None:
    text = "".join(json.dumps(line) + "\n" for line in TRANSCRIPT)
    messages = [(m.role, m.text) for m in parse("cursor", text).messages]
    assert messages == [("user", "Use PostgreSQL for the billing ledger."),
                        ("assistant", "Noted: PostgreSQL for the billing ledger.")]
    older = "user:\n<user_query>\nhello\n</user_query>\n\nassistant:\nhi there\n"
    assert [m.role for m in parse("cursor", older).messages] == ["user", "assistant"]


def test_connect_cursor_wires_hooks_that_capture_with_cursors_payloads(tmp_path: Path) -> None:
    workspace = init_workspace(tmp_path / "ws").workspace
    (workspace / "agent.yaml").write_text(NO_EMBEDDINGS)
    port = free_port()
    home, project = tmp_path / "home", tmp_path / "billing"
    home.mkdir()
    project.mkdir()
    env = {**daemon_env(workspace, port), "HOME": str(home)}
    daemon = DaemonProcess(workspace, port)
    try:
        daemon.wait_serving(timeout_s=60)  # the first request is a hook's, on its budget
        signet("connect", "cursor", env=env)
        hooks = json.loads((home / ".cursor" / "hooks.json").read_text())
        assert hooks["version"] == 1 and set(hooks["hooks"]) == {"beforeSubmitPrompt", "stop"}
        prompt_cmd = hooks["hooks"]["beforeSubmitPrompt"][0]["command"]
        stop_cmd = hooks["hooks"]["stop"][0]["command"]
        assert prompt_cmd.endswith(f"--workspace {workspace} --port {port} hook user-prompt-submit --harness cursor")
        assert stop_cmd.endswith("hook pre-compaction --harness cursor")
        mcp = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["signet"]
        assert mcp["args"][-1] == "mcp" and str(workspace) in mcp["args"]
        again = signet("connect", "cursor", env=env).stdout
        assert again.count("unchanged") == 2

        # Cursor runs the command with its own environment: no SIGNET_* variable (PYTHONPATH
        # kept: a checkout's code under test, not the installed one).
        cursor_env = {"PATH": os.environ["PATH"], "HOME": str(home), "OMP_NUM_THREADS": "1",
                      "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        asked = run(prompt_cmd, {**common("beforeSubmitPrompt", project),
                                 "prompt": "Remember that the billing ledger is in eu-west-1.",
                                 "attachments": []}, cursor_env)
        assert (asked.returncode, json.loads(asked.stdout)) == (0, {"continue": True}), asked.stderr

        transcript = home / ".cursor" / "projects" / "billing" / "agent-transcripts" / f"{CONVERSATION}.jsonl"
        transcript.parent.mkdir(parents=True)
        transcript.write_text("".join(json.dumps(line) + "\n" for line in TRANSCRIPT))
        stopped = run(stop_cmd, {**common("stop", project), "status": "completed", "loop_count": 0,
                                 "transcript_path": str(transcript)}, cursor_env)
        assert (stopped.returncode, json.loads(stopped.stdout)) == (0, {}), stopped.stderr

        sessions = json.loads(signet("--json", "session", "list", env=env).stdout)["items"]
        assert [(s["harness"], s["project"]) for s in sessions] == [("cursor", "billing")]
        found = signet("--json", "recall", "billing ledger region", env=env).stdout
        assert "eu-west-1" in found
        assert not (workspace / ".daemon" / "logs" / "hooks.log").exists()
        checked = subprocess.run([sys.executable, "-m", "signet", "doctor", "--json", "--no-mcp"],
                                 env=env, capture_output=True, text=True, timeout=60)
        cursor = next(c for c in json.loads(checked.stdout)["checks"] if c["name"] == "hooks cursor")
        assert cursor["status"] == "ok", cursor

        signet("connect", "cursor", "--uninstall", env=env)
        assert not (home / ".cursor" / "hooks.json").exists()
        assert not (home / ".cursor" / "mcp.json").exists()
    finally:
        daemon.kill()
