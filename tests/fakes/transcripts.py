"""Harness transcripts as the harnesses write them, built from (role, text) turns.

`claude_code(...)` writes Claude Code's JSONL (queue-operation and file-history-snapshot records,
user/assistant records with uuid/parentUuid/sessionId/cwd/timestamp, assistant thinking and
tool_use blocks, user tool_result records), so the importer is tested against the real shape;
`codex(...)` writes a Codex rollout (session_meta, turn_context, response_item, event_msg).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _ts(i: int, start: datetime = T0) -> str:
    return (start + timedelta(seconds=30 * i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def claude_code(
    turns: list[tuple[str, str]], session_id: str = "0f3c9a52-claude", *, cwd: str = "/home/u/app",
    tools: bool = True, start: datetime = T0,
) -> str:
    lines: list[dict[str, Any]] = [
        {"type": "queue-operation", "operation": "dequeue", "timestamp": _ts(0, start),
         "sessionId": session_id},
        {"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}, "isSnapshotUpdate": False},
    ]
    parent = None
    for i, (role, text) in enumerate(turns):
        uuid = f"u{i:04d}"
        base = {"uuid": uuid, "parentUuid": parent, "sessionId": session_id, "cwd": cwd,
                "timestamp": _ts(i + 1, start), "version": "2.1.12", "gitBranch": "main",
                "isSidechain": False, "userType": "external"}
        if role == "user":
            lines.append({**base, "type": "user", "message": {"role": "user", "content": text}})
        else:
            content: list[dict[str, Any]] = [
                {"type": "thinking", "thinking": f"SECRET-THOUGHT {i}", "signature": "sig"},
                {"type": "text", "text": text},
            ]
            if tools:
                content.append({"type": "tool_use", "id": f"toolu_{i}", "name": "Bash",
                                "input": {"command": "ls"}})
            lines.append({**base, "type": "assistant", "requestId": f"req_{i}", "message": {
                "model": "claude-sonnet", "id": f"msg_{i}", "role": "assistant",
                "content": content, "stop_reason": "end_turn", "usage": {"input_tokens": 10}}})
            if tools:
                lines.append({**base, "uuid": uuid + "r", "type": "user", "message": {
                    "role": "user", "content": [{"tool_use_id": f"toolu_{i}", "type": "tool_result",
                                                 "content": f"TOOL-OUTPUT {i}"}]}})
        parent = uuid
    return "".join(json.dumps(line) + "\n" for line in lines)


def codex(turns: list[tuple[str, str]], session_id: str = "019a2d7a-codex") -> str:
    lines: list[dict[str, Any]] = [
        {"timestamp": _ts(0), "type": "session_meta", "payload": {
            "id": session_id, "cwd": "/home/u/app", "cli_version": "0.46.0", "source": "cli"}},
        {"timestamp": _ts(0), "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}},
        {"timestamp": _ts(0), "type": "turn_context", "payload": {"model": "gpt-5-codex"}},
    ]
    for i, (role, text) in enumerate(turns):
        kind = "input_text" if role == "user" else "output_text"
        lines.append({"timestamp": _ts(i + 1), "type": "response_item", "payload": {
            "type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
        if role == "assistant":
            lines.append({"timestamp": _ts(i + 1), "type": "response_item", "payload": {
                "type": "reasoning", "summary": [{"type": "summary_text", "text": "SECRET-THOUGHT"}]}})
            lines.append({"timestamp": _ts(i + 1), "type": "event_msg", "payload": {
                "type": "agent_message", "message": text}})
    return "".join(json.dumps(line) + "\n" for line in lines)


def opencode(turns: list[tuple[str, str]], session_id: str = "ses_opencode") -> str:
    messages = [
        {"info": {"id": f"msg_{i}", "sessionID": session_id, "role": role,
                  "time": {"created": 1763629200000 + i * 1000}},
         "parts": [{"type": "text", "text": text},
                   {"type": "reasoning", "text": "SECRET-THOUGHT"},
                   {"type": "tool", "tool": "bash", "state": {"output": "TOOL-OUTPUT"}}]}
        for i, (role, text) in enumerate(turns)
    ]
    return json.dumps({"info": {"id": session_id, "directory": "/home/u/app"}, "messages": messages})


def conversation(n_user: int, *, decision: bool = False, topic: str = "the billing service") -> list[tuple[str, str]]:
    """A plausible working session: `n_user` user turns, each answered."""
    asks = [
        f"I am rewriting {topic} and the invoices keep rounding wrong for Frankfurt customers.",
        "The totals come from the tax table that Maria maintains in the Postgres schema.",
        "Can you check whether the rounding happens before or after the currency conversion?",
        "We must never change historic invoices, the auditors require them frozen.",
        "I prefer integer cents everywhere instead of floating point amounts.",
        "The nightly export to the accounting system runs at two in the morning.",
        "What about the refunds module, does it share the same helper functions?",
        "Maria says the German VAT rules changed in July for digital goods.",
        "Let me know if the Stripe webhook handler also needs the new rounding.",
        "The staging database has a copy of last month's invoices for testing.",
        "I will write the migration script myself tomorrow morning.",
        "Should we notify the finance team before the deploy on Thursday?",
    ]
    turns: list[tuple[str, str]] = []
    for i in range(n_user):
        text = asks[i % len(asks)]
        if decision and i == 3:
            text = "We decided to use banker's rounding in the invoice service from now on."
        turns.append(("user", text))
        turns.append(("assistant", f"Understood. Step {i + 1}: I looked at that part of the code and noted it."))
    return turns
