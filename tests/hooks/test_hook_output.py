"""What reaches the harness's stdout when the daemon's answer is awkward to print: the hook's
output is UTF-8 JSON or nothing, never a traceback, whatever the locale's encoding."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
from daemon_process import daemon_env, make_workspace
from hook_process import run_hook

GENEROUS = "hooks:\n  prompt_submit_timeout_ms: 10000\n"


def answering(body: bytes) -> int:
    """A loopback server answering every request with HTTP 200 and this body; its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)

    threading.Thread(target=serve, daemon=True).start()
    return int(listener.getsockname()[1])


@pytest.mark.parametrize(("reply", "encoding", "expected"), [
    ('{"context": "caf\u00e9 \u2603 \u4e2d"}'.encode(), "latin-1", "caf\u00e9 \u2603 \u4e2d"),
    ('{"context": "caf\u00e9 \u2603 \u4e2d"}'.encode(), "cp1252", "caf\u00e9 \u2603 \u4e2d"),
    (b'{"context": "half \\ud800 a pair"}', "utf-8", "half ? a pair"),
])
@pytest.mark.parametrize("harness", ["claude-code", "opencode"])
def test_a_context_the_locale_cannot_encode_is_printed_as_utf8_json(
    tmp_path: Path, reply: bytes, encoding: str, expected: str, harness: str
) -> None:
    """A stdout in latin-1 or cp1252 (a Windows pipe, an old locale) cannot encode most
    memories, and no encoding takes a lone surrogate a daemon sent escaped: the hook still
    prints the harness's JSON, in UTF-8, and exits 0."""
    workspace = make_workspace(tmp_path / "ws", GENEROUS)
    env = {**daemon_env(workspace, answering(reply)), "PYTHONIOENCODING": encoding,
           "SIGNET_AUTOSTART": "0"}
    ran = run_hook("user-prompt-submit", {"session_id": "s", "prompt": "hello"}, env, harness=harness)
    assert (ran.code, ran.stderr) == (0, "")
    printed = json.loads(ran.stdout)
    context = ran.context() if harness == "claude-code" else printed["context"]
    assert context == expected
