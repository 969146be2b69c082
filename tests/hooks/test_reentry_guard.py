"""The re-entry guard: with SIGNET_NO_HOOKS or SIGNET_BYPASS set (the `command` LLM provider
sets both for the harness CLI it runs), every `signet hook ...` does nothing: no output, exit
0, no connection to the daemon, no log line. Checked against a loopback server that answers
every hook with a context, so the same run without the guard prints it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_process import daemon_env, make_workspace
from hook_process import run_hook

EVENTS = ("session-start", "user-prompt-submit", "pre-compaction", "session-end")
CONTEXT = "# Agent\nremembered line"


class AnsweringServer:
    """Accepts connections, counts them, answers each with a hook result holding CONTEXT."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                while len(body) < length:
                    body += conn.recv(65536)
                reply = json.dumps({"context": CONTEXT, "memories": []}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: " + str(len(reply)).encode() + b"\r\n\r\n" + reply)


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
