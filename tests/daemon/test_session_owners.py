"""A session belongs to the token that holds it, over a real daemon (docs/security.md "MCP"):
another token can neither use nor close an MCP session (it gets the answer of an unknown
session), nor change what the hooks' injection ledger says a session was already given."""

from __future__ import annotations

from typing import Any

import httpx

from auth_tokens import auth, issue
from signet.config import AuthConfig

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def open_session(url: str, token: str) -> str:
    headers = {**auth(token), **ACCEPT}
    opened = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=headers, timeout=10)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    done = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                      headers={**headers, "Mcp-Session-Id": session}, timeout=10)
    assert done.status_code == 202, done.text
    return session


def in_session(url: str, token: str, session: str, method: str) -> httpx.Response:
    headers = {**auth(token), **ACCEPT, "Mcp-Session-Id": session}
    body = LIST_TOOLS if method == "POST" else None
    return httpx.request(method, f"{url}/mcp", json=body, headers=headers, timeout=10)


def seen(reply: httpx.Response) -> tuple[int, str, str]:
    return reply.status_code, reply.headers.get("content-type", ""), reply.text


def test_another_token_can_neither_use_nor_close_an_mcp_session(serve) -> None:
    s = serve()
    owner, other = issue(s.app, "agent"), issue(s.app, "agent")
    session = open_session(s.url, owner)
    unknown = in_session(s.url, owner, "0" * 32, "POST")
    assert unknown.status_code == 404
    for intruder in (other, s.token, issue(s.app, "readonly", project="p")):  # even an admin's
        for method in ("POST", "GET", "DELETE"):
            reply = in_session(s.url, intruder, session, method)
            assert seen(reply) == seen(unknown), (method, reply.text)
    # The owner's session is untouched, and its owner can still close it.
    listed = in_session(s.url, owner, session, "POST")
    assert listed.status_code == 200 and "memory_search" in listed.text
    assert in_session(s.url, owner, session, "DELETE").status_code in (200, 204)
    assert in_session(s.url, owner, session, "POST").status_code == 404


def hook(s: Any, token: str, event: str, **body: Any) -> dict[str, Any]:
    reply = httpx.post(f"{s.url}/api/hooks/{event}", json=body, headers=auth(token), timeout=30)
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_another_token_cannot_change_what_a_session_was_given(serve) -> None:
    s = serve()
    memory = s.app.remember("critical: we ship on tuesdays").id
    mine, theirs = issue(s.app, "agent"), issue(s.app, "agent")
    # Another token marking the session as served first takes nothing from it.
    assert memory in hook(s, theirs, "session-start", session_id="s1")["memories"]
    assert memory in hook(s, mine, "session-start", session_id="s1")["memories"]
    assert memory not in hook(s, mine, "session-start", session_id="s1", source="resume")["memories"]
    # Another token clearing the session's ledger makes nothing repeat in it.
    hook(s, theirs, "session-start", session_id="s1", source="clear")
    assert memory not in hook(s, mine, "session-start", session_id="s1", source="resume")["memories"]
    # The session's own clear starts its ledger over.
    assert memory in hook(s, mine, "session-start", session_id="s1", source="clear")["memories"]


def test_requests_before_initialize_take_no_session_slot(serve) -> None:
    """The SDK names a session in its 400 to a request without one that is not `initialize`
    (a newer client's `server/discover`); that session is nobody's and holds no slot."""
    s = serve(auth=AuthConfig(mcp_sessions_per_token=2))
    token = issue(s.app, "agent")
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    for _ in range(4):
        reply = httpx.post(f"{s.url}/mcp", json=discover, headers={**auth(token), **ACCEPT}, timeout=10)
        assert reply.status_code == 400, reply.text
    open_session(s.url, token)
    open_session(s.url, token)
