"""The MCP tools: each a docstring for the agent plus one backend call.

The docstrings are what the agent reads to choose a tool, so they say when to use it and what it
returns. JSON types are checked by the SDK, meanings by the app; a `SignetError` becomes a tool
error whose text the agent can act on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from signet.errors import SignetError
from signet.mcp.backends import Backend
from signet.mcp.compact import compact_page, compact_search, compact_sessions
from signet.recall.confidence import AGENT_MIN_CONFIDENCE
from signet.version import __version__
from signet.workspace import IDENTITY_FILES

__all__ = ["INSTRUCTIONS", "WITHOUT_DAEMON", "build_server"]

JSON = dict[str, Any]
Mode = Literal["hybrid", "keyword", "vector", "full"]
FeedbackType = Literal["positive", "negative", "correction"]

INSTRUCTIONS = (
    "Signet is the user's long-term memory. Search it (memory_search) before answering "
    "questions about the user, their projects, preferences and past decisions; store durable "
    "facts, preferences and decisions you learn (memory_store); correct or remove memories that "
    "turn out wrong (memory_modify, memory_forget); and tell Signet which recalled memories "
    "helped (memory_feedback)."
)
WITHOUT_DAEMON = (
    "Signet's daemon is not running: this MCP server opened the memory store itself. Search and "
    "store work, but new memories are not embedded or distilled until the daemon runs, and the "
    "harness hooks inject nothing meanwhile. Tell the user to start it: `signet daemon start` "
    "(or `signet daemon install` to have it start at login)."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def build_server(backend: Backend, *, without_daemon: bool = False) -> MCPServer:
    """An MCP server whose tools call `backend`; the caller chooses the transport.
    `without_daemon`: the backend is a store `signet mcp` opened itself, and the instructions
    and every memory_search answer say so (WITHOUT_DAEMON)."""
    instructions = f"{INSTRUCTIONS}\n\n{WITHOUT_DAEMON}" if without_daemon else INSTRUCTIONS
    server: MCPServer = MCPServer(
        "signet", instructions=instructions, version=__version__,
        log_level="WARNING",
    )

    @server.tool(annotations=READ_ONLY)
    def memory_search(
        query: str, limit: int = 10, mode: Mode | None = None, type: str | None = None,
        tags: list[str] | None = None, project: str | None = None, community: str | None = None,
        expand: bool = False, verbose: bool = False,
        min_confidence: float = AGENT_MIN_CONFIDENCE,
    ) -> CallToolResult:
        """Search long-term memory for what answers `query` (a question or keywords).

        Returns {"results": [{"id", "content", "confidence", "type", "tags",
        "created_at", "source"}], "query", "method", "count"}, best first; `verbose`: every
        field of each memory plus "evidence" and "adjustments", and "meta" with timings. `mode`: "full" (keywords,
        meaning and the knowledge graph; the default unless configured otherwise), "hybrid"
        (keywords and meaning), "keyword" or "vector". Filters: `type` (fact, preference,
        decision, ...), `tags` (all must match), `project`, `community` (a community id or name
        from the knowledge graph: only memories about its entities). `expand`: each memory
        that came from a past session also carries "transcript", the conversation around it.
        Each result has a `confidence` (0-1: how likely it answers the query); results below
        `min_confidence` are left out, so an empty list means nothing stored is about the
        query. Pass 0 to see everything.
        """
        filters = _present(type=type, tags=tags, project=project, community=community)
        found = _answer(
            backend.recall, query, limit=limit, mode=mode, filters=filters, expand=expand,
            min_confidence=min_confidence,
        )
        answer = found if verbose else compact_search(found)
        return _out({**answer, "note": WITHOUT_DAEMON} if without_daemon else answer)

    @server.tool(annotations=READ_ONLY)
    def session_search(query: str, limit: int = 10, project: str | None = None) -> CallToolResult:
        """Find past sessions (whole conversations) whose words match `query`.

        Returns {"items": [session + {"snippet"}], "query"}, best first: use it to
        find when something was discussed; memory_search finds the facts themselves.
        """
        found = _answer(backend.session_search, query, limit=limit, project=project)
        return _out(compact_sessions(found))

    @server.tool(annotations=READ_ONLY)
    def memory_context(project: str | None = None, cwd: str | None = None) -> CallToolResult:
        """What Signet puts in front of an agent at the start of a session: the identity files,
        the head of MEMORY.md, pinned memories and the most important ones (the project's
        first), under the session-start token budget. Call it when your harness has no Signet
        hooks, at the start of a task. `project` (or `cwd`, whose last folder names it).

        Returns {"context": text, "memories": [ids in it], "tokens", "truncated", "project"}.
        """
        return _out(_answer(backend.context, project=project, cwd=cwd))

    for name in IDENTITY_FILES:
        _identity_resource(server, backend, name)

    @server.prompt(title="Signet memory context")
    def signet_context(project: str | None = None) -> str:
        """The session-start memory context (identity, MEMORY.md head, pinned and important
        memories) as a prompt to start a conversation with."""
        text = _answer(backend.context, project=project, cwd=None)["context"]
        return text or "Signet has no memories or identity notes for this session yet."

    @server.tool(annotations=WRITES)
    def memory_store(
        content: str, type: str = "fact", tags: list[str] | None = None,
        importance: float | None = None, pinned: bool = False, project: str | None = None,
    ) -> CallToolResult:
        """Store one memory: a self-contained statement worth recalling in a later session.

        `type`: fact, preference, decision, procedural, semantic, constraint, episodic, note.
        `importance` from 0 to 1 (default: the workspace's memory.defaultImportance, 0.5); `pinned` keeps it from being forgotten without
        force. Storing text that is already remembered returns the existing id with
        "deduped": true. Returns {"id", "deduped"}.
        """
        fields = _present(type=type, tags=tags, importance=importance, project=project)
        stored = _answer(backend.remember, content, {**fields, "pinned": pinned})
        return _out({"id": stored["id"], "deduped": stored["deduped"]})

    @server.tool(annotations=READ_ONLY)
    def memory_get(id: str) -> CallToolResult:
        """One memory by its id, with all its fields (content, type, tags, version, ...)."""
        return _out(_answer(backend.get, id))

    @server.tool(annotations=READ_ONLY)
    def memory_list(
        limit: int = 20, offset: int = 0, type: str | None = None, project: str | None = None,
        verbose: bool = False,
    ) -> CallToolResult:
        """Browse memories, newest first: {"items": [{"id", "content", "type", "tags",
        "created_at", "source"}], "total", "limit", "offset"}; `verbose`: every field.

        Use memory_search to find memories about something; this lists them page by page.
        """
        filters = _present(type=type, project=project)
        page = _answer(backend.list, limit=limit, offset=offset, filters=filters)
        return _out(page if verbose else compact_page(page))

    @server.tool(annotations=WRITES)
    def memory_modify(
        id: str, content: str | None = None, type: str | None = None,
        tags: list[str] | None = None, importance: float | None = None,
        pinned: bool | None = None, version: int | None = None, reason: str | None = None,
    ) -> CallToolResult:
        """Change a memory: only the fields given change; returns the updated memory.

        Pass the `version` you read (memory_get) to refuse the change when someone else changed
        the memory meanwhile. `reason` is kept in the memory's history.
        """
        changes = _present(
            content=content, type=type, tags=tags, importance=importance, pinned=pinned
        )
        return _out(_answer(backend.modify, id, changes, version=version, reason=reason))

    @server.tool(annotations=DELETES)
    def memory_forget(id: str, force: bool = False, reason: str | None = None) -> CallToolResult:
        """Forget a memory (soft delete: it stops being recalled and can be recovered for a
        while). A pinned memory needs `force`. Returns the memory, now with is_deleted true."""
        return _out(_answer(backend.forget, id, force=force, reason=reason))

    @server.tool(annotations=WRITES)
    def memory_feedback(
        memory_id: str, feedback: FeedbackType = "positive", correction_text: str | None = None,
        session_id: str | None = None,
    ) -> CallToolResult:
        """Say whether a recalled memory helped: "positive", "negative", or "correction" with
        `correction_text` saying what is right. The memory itself is not changed (use
        memory_modify for that). Returns the recorded feedback."""
        return _out(_answer(
            backend.feedback, memory_id, feedback, correction_text=correction_text,
            session_id=session_id,
        ))

    return server


def _identity_resource(server: MCPServer, backend: Backend, name: str) -> None:
    """`signet://identity/<NAME>`: one of the workspace's identity files, as markdown."""

    def read() -> str:
        return str(_answer(backend.identity, name)["content"])

    server.resource(
        f"signet://identity/{name}", name=name, mime_type="text/markdown",
        description=f"The workspace's {name} (identity and standing notes for the agent).",
    )(read)


def _answer(call: Callable[..., JSON], *args: Any, **kwargs: Any) -> JSON:
    """One backend call; a SignetError becomes a tool error the agent can read."""
    try:
        return call(*args, **kwargs)
    except SignetError as exc:
        raise ToolError(exc.message) from exc


def _out(data: JSON) -> CallToolResult:
    """A tool's answer as one line of JSON (no indentation: every character is the agent's
    context) and as structured content."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _present(**values: Any) -> JSON:
    return {name: value for name, value in values.items() if value is not None}
