"""The re-entry guard: with SIGNET_NO_HOOKS or SIGNET_BYPASS set (the `command` LLM provider
sets both for the harness CLI it runs), every `signet hook ...` does nothing: no output, exit
0, no connection to the daemon, no log line. Checked against a loopback server that answers
every hook with a context, so the same run without the guard prints it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from answering_server import CONTEXT, AnsweringServer
from daemon_process import daemon_env, make_workspace
from hook_process import run_hook

EVENTS = ("session-start", "user-prompt-submit", "pre-compaction", "session-end")
@pytest.fixture
def server() -> Iterator[AnsweringServer]:
    answering = AnsweringServer()
    yield answering
    answering.sock.close()


@pytest.mark.parametrize("guard", ["SIGNET_NO_HOOKS", "SIGNET_BYPASS"])
def test_the_guard_makes_every_hook_do_nothing(
    tmp_path: Path, server: AnsweringServer, guard: str
) -> None:
    workspace = make_workspace(tmp_path / "ws")
    env = daemon_env(workspace, server.port)
    payload = {"session_id": "s1", "prompt": "remember that we deploy on Fridays",
               "transcript": "user: hi", "cwd": str(tmp_path)}
    unguarded = run_hook("session-start", payload, env)
    assert CONTEXT in unguarded.context() and server.connections == 1

    for event in EVENTS:
        for harness in ("claude-code", "opencode"):
            done = run_hook(event, payload, {**env, guard: "1"}, harness=harness)
            assert (done.code, done.stdout, done.stderr) == (0, "", "")
    assert server.connections == 1
    assert not (workspace / ".daemon" / "logs" / "hooks.log").exists()
    assert not (workspace / "spool").exists()


def test_the_guard_holds_on_the_cli_path_too(tmp_path: Path, server: AnsweringServer) -> None:
    """An argv the fast path leaves to click (the option before the event) is guarded too."""
    workspace = make_workspace(tmp_path / "ws")
    env = {**daemon_env(workspace, server.port), "SIGNET_NO_HOOKS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "hook", "--harness", "claude-code", "session-start"],
        input=b'{"session_id": "s1"}', env=env, capture_output=True, timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert server.connections == 0
