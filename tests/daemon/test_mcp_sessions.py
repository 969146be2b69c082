"""MCP sessions over a real daemon (/mcp): one token may hold only so many, and a session left
open is reaped after minutes of silence (here, a second), so never-closed sessions cannot pile
up in the daemon's memory."""

from __future__ import annotations

import time
from dataclasses import replace

import httpx

from auth_tokens import auth, issue
from signet.config import AuthConfig

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def open_session(url: str, token: str) -> httpx.Response:
    return httpx.post(f"{url}/mcp", json=INITIALIZE, headers={**auth(token), **ACCEPT}, timeout=10)


def test_a_token_holds_a_bounded_number_of_mcp_sessions(serve) -> None:
    s = serve(auth=replace(AuthConfig(), mcp_sessions_per_token=3))
    token, other = issue(s.app, "agent"), issue(s.app, "agent")
    opened = [open_session(s.url, token) for _ in range(3)]
    assert all(r.status_code == 200 and r.headers["mcp-session-id"] for r in opened)
    refused = open_session(s.url, token)
    assert refused.status_code == 429 and refused.headers["retry-after"]
    assert "mcp_sessions_per_token" in refused.json()["error"]
    assert open_session(s.url, other).status_code == 200  # another token is not affected
    closed = httpx.delete(f"{s.url}/mcp", headers={
        **auth(token), **ACCEPT, "Mcp-Session-Id": opened[0].headers["mcp-session-id"],
        "Mcp-Protocol-Version": "2025-06-18"})
    assert closed.status_code in (200, 204), closed.text
    deadline = time.monotonic() + 5
    while (reply := open_session(s.url, token)).status_code == 429 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert reply.status_code == 200  # closing one made room


def test_an_idle_mcp_session_is_reaped(serve) -> None:
    s = serve(auth=replace(AuthConfig(), mcp_session_idle_s=1, mcp_sessions_per_token=1))
    token = issue(s.app, "agent")
    first = open_session(s.url, token)
    assert first.status_code == 200 and open_session(s.url, token).status_code == 429
    deadline = time.monotonic() + 10
    while (reply := open_session(s.url, token)).status_code == 429 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert reply.status_code == 200  # the silent session was closed for it
    stale = httpx.post(f"{s.url}/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                       headers={**auth(token), **ACCEPT,
                                "Mcp-Session-Id": first.headers["mcp-session-id"],
                                "Mcp-Protocol-Version": "2025-06-18"})
    assert stale.status_code == 404
