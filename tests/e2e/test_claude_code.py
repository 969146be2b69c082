"""A real Claude Code (the pinned npm package, conftest.py) with `signet connect claude-code
--allow-tools` on a temporary HOME, run as `claude -p` against a recording fake Anthropic
Messages API (tests/fakes/anthropic_stream.py) and a real daemon: the memories reach the model's
request, the signet MCP tools are offered in the first request and a scripted memory_search
round-trips, the transcript is a session after exit; then with the daemon stopped the run still
succeeds, a hook starts the daemon, and the spooled capture is imported. Claude Code's
environment names no SIGNET_* variable: what connect wrote is all it has."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from daemon_process import NO_EMBEDDINGS, DaemonProcess, daemon_env, free_port

from fakes.anthropic_stream import FakeAnthropic
from signet import spool
from signet.workspace import init_workspace

DECISION = "We decided to use PostgreSQL for the billing service ledger, not MongoDB"
SEARCH = "SEARCH-MEMORY Do we use PostgreSQL or MongoDB for the billing ledger?"
UNRELATED = "How do I reverse a linked list in Rust?"
REMEMBER = "Remember that deploys happen on Fridays only. Then say ok."


def script(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The model: after a tool result, "done"; asked to search, a memory_search call."""
    last = request["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return [{"type": "text", "text": "done"}]
    if "SEARCH-MEMORY" in json.dumps(request["messages"]):
        return [{"type": "tool_use", "name": "mcp__signet__memory_search",
                 "input": {"query": "billing ledger PostgreSQL"}}]
    return [{"type": "text", "text": "ok"}]


def claude(binary: Path, prompt: str, home: Path, cwd: Path, fake: FakeAnthropic, *options: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_BASE_URL": fake.url,
           "ANTHROPIC_API_KEY": "sk-ant-test-dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_AUTOUPDATER": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
           # The hooks connect wrote run `signet` of the venv, an editable install that may be
           # another checkout's: PYTHONPATH (when set) names the code under test.
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([str(binary), "-p", *options, prompt], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-2000:]
    return done.stdout


def hook_contexts(request: dict[str, Any], event: str) -> list[str]:
    """The texts Claude Code put in the request for `event`'s hook output."""
    texts = [b.get("text", "") for m in request["messages"] if isinstance(m["content"], list)
             for b in m["content"] if b.get("type") == "text"]
    return [t for t in texts if f"{event} hook additional context" in t]


def sessions(env: dict[str, str]) -> list[dict[str, Any]]:
    listed = subprocess.run([sys.executable, "-m", "signet", "--json", "session", "list"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout)["items"])


def wait_for(check: Any, what: str, timeout_s: float = 90) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def health_pid(port: int) -> int | None:
    try:
        reply = httpx.get(f"http://127.0.0.1:{port}/health", timeout=0.5)
        return int(reply.json()["pid"]) if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError, KeyError):
        return None


def test_claude_code_gets_the_memory_and_loses_nothing_when_the_daemon_is_down(
    tmp_path: Path, claude_bin: Path
) -> None:
    workspace = init_workspace(tmp_path / "ws").workspace
    (workspace / "agent.yaml").write_text(NO_EMBEDDINGS)
    port = free_port()
    env = daemon_env(workspace, port)
    home, project = tmp_path / "home", tmp_path / "billing"
    home.mkdir()
    project.mkdir()
    daemon = DaemonProcess(workspace, port)
    fake = FakeAnthropic(script)
    started_pid: int | None = None
    try:
        daemon.wait_healthy(timeout_s=60)
        stored = subprocess.run(
            [sys.executable, "-m", "signet", "remember", DECISION, "--type", "decision",
             "--project", "billing"], env=env, capture_output=True, text=True, timeout=60)
        assert stored.returncode == 0, stored.stderr
        connected = subprocess.run(
            [sys.executable, "-m", "signet", "connect", "claude-code", "--allow-tools"],
            env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=60)
        assert connected.returncode == 0, connected.stderr

        # 1. The memory reaches the model; the tools are offered; memory_search round-trips.
        assert claude(claude_bin, SEARCH, home, project, fake).strip() == "done"
        first = fake.messages()[0]
        assert DECISION in json.dumps(first)
        assert any(DECISION in text for text in hook_contexts(first, "SessionStart"))
        assert "mcp__signet__memory_search" in json.dumps(first)
        results = [b for r in fake.messages() for m in r["messages"] if isinstance(m["content"], list)
                   for b in m["content"] if b.get("type") == "tool_result"]
        assert results and DECISION in json.dumps(results[0]["content"])
        captured = wait_for(lambda: sessions(env), "the transcript as a session")
        assert (captured[0]["harness"], captured[0]["project"]) == ("claude-code", "billing")

        # 2. An unrelated prompt: the prompt hook injects nothing.
        fake.requests.clear()
        claude(claude_bin, UNRELATED, home, project, fake)
        assert not [t for t in hook_contexts(fake.messages()[0], "UserPromptSubmit") if DECISION in t]

        # 3. The daemon stopped: the run succeeds, a hook starts the daemon, the capture of that
        # run (its transcript, its "remember that ...") reaches the store through the spool.
        daemon.terminate()
        claude(claude_bin, REMEMBER, home, project, fake)
        started_pid = wait_for(lambda: health_pid(port), "a daemon started by a hook")
        wait_for(lambda: len(sessions(env)) == 3 and not spool.pending(str(workspace)),
                 "the spooled capture imported")
        found = subprocess.run(
            [sys.executable, "-m", "signet", "--json", "recall", "deploys Fridays"], env=env,
            capture_output=True, text=True, timeout=60)
        assert "Deploys happen on Fridays only." in found.stdout, found.stdout + found.stderr
        assert "started the daemon in the background" in (
            workspace / ".daemon" / "logs" / "hooks.log").read_text()
    finally:
        fake.close()
        daemon.kill()
        pid = started_pid or health_pid(port)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)  # the hook's child, not ours: stopped by its pid
            wait_for(lambda: health_pid(port) is None, "the started daemon to stop", 60)


def test_a_compaction_in_claude_code_imports_the_transcript_so_far(
    tmp_path: Path, claude_bin: Path
) -> None:
    """`/compact` in a continued `claude -p` runs the PreCompact hook, which imports the
    transcript and leaves the session open. SessionEnd is taken out of the settings, so the
    compaction's hook is the only one that can have imported it."""
    workspace = init_workspace(tmp_path / "ws").workspace
    (workspace / "agent.yaml").write_text(NO_EMBEDDINGS)
    port = free_port()
    env = daemon_env(workspace, port)
    home, project = tmp_path / "home", tmp_path / "billing"
    home.mkdir()
    project.mkdir()
    daemon = DaemonProcess(workspace, port)
    fake = FakeAnthropic()
    try:
        daemon.wait_healthy(timeout_s=60)
        connected = subprocess.run([sys.executable, "-m", "signet", "connect", "claude-code"],
                                   env={**env, "HOME": str(home)}, capture_output=True, text=True,
                                   timeout=60)
        assert connected.returncode == 0, connected.stderr
        settings = home / ".claude" / "settings.json"
        data = json.loads(settings.read_text())
        del data["hooks"]["SessionEnd"]
        settings.write_text(json.dumps(data))

        claude(claude_bin, "We ship the billing service on Tuesdays. Say ok.", home, project, fake)
        assert sessions(env) == []
        claude(claude_bin, "/compact", home, project, fake, "--continue")
        captured = wait_for(lambda: sessions(env), "the compacted transcript as a session", 60)
        assert (captured[0]["harness"], captured[0]["project"]) == ("claude-code", "billing")
        assert captured[0]["ended_at"] is None  # pre-compaction leaves the session open
        shown = subprocess.run([sys.executable, "-m", "signet", "--json", "session", "search",
                                "Tuesdays"], env=env, capture_output=True, text=True, timeout=60)
        assert "Tuesdays" in shown.stdout, shown.stdout + shown.stderr
        assert not (workspace / ".daemon" / "logs" / "hooks.log").exists()
    finally:
        fake.close()
        daemon.kill()
