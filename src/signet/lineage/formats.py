"""Harness transcripts in, the conversation out: the user's and the assistant's words, in order.

`parse(harness, text)` reads claude-code, codex, opencode, cursor or generic (JSONL, JSON, "User:"
text) and returns `Message`s and what the file says of the session; tool calls, thinking, meta
records and boilerplate are left out. A malformed record is refused (Unprocessable), except a
truncated last line, which the next longer import brings whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from signet.errors import InvalidInput, Unprocessable

__all__ = ["HARNESSES", "Message", "Parsed", "parse"]

HARNESSES: tuple[str, ...] = ("claude-code", "codex", "opencode", "cursor", "generic")

_USER = {"user", "human", "me"}
_ASSISTANT = {"assistant", "ai", "agent", "bot", "model", "gpt", "claude"}
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_CODEX_BOILERPLATE = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
_CLAUDE_BOILERPLATE = ("<local-command-stdout>", "<command-name>", "<command-message>", "Caveat:")
_ROLE_LINE = re.compile(
    r"^\s*\**(user|human|me|assistant|ai|agent|bot|model|system)\**\s*:\s?(.*)$", re.I
)


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # "user" or "assistant"
    text: str
    ts: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "text": self.text, "ts": self.ts}


@dataclass(slots=True)
class Parsed:
    messages: list[Message] = field(default_factory=list)
    session_id: str | None = None
    cwd: str | None = None
    started_at: str | None = None
    last_at: str | None = None
    records: int = 0

    def add(self, role: str | None, text: str, ts: Any = None) -> None:
        stamp = ts if isinstance(ts, str) and ts else None
        if stamp:
            self.started_at = self.started_at or stamp
            self.last_at = stamp
        text = _REMINDER.sub("", text).strip()
        if role in ("user", "assistant") and text:
            self.messages.append(Message(role, text, stamp))


def parse(harness: str, text: str) -> Parsed:
    """The conversation in `text`, written by `harness`; InvalidInput naming what is wrong."""
    if harness not in HARNESSES:
        raise InvalidInput(f"unknown harness {harness!r} (one of {', '.join(HARNESSES)})")
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise InvalidInput("the transcript is empty")
    parsed = Parsed()
    if harness == "claude-code":
        _claude(_records(text), parsed)
    elif harness == "codex":
        _codex(_records(text), parsed)
    elif harness == "opencode":
        _opencode(_whole_or_records(text), parsed)
    elif harness == "cursor" and text.lstrip().startswith("{"):
        _cursor(_records(text), parsed)
    else:
        _generic(text, parsed)
    if not parsed.messages:
        raise Unprocessable(f"no user or assistant messages found in this {harness} transcript")
    return parsed


def _records(text: str) -> Iterator[dict[str, Any]]:
    """JSON objects, one per non-empty line; a truncated last line is skipped."""
    lines = text.splitlines()
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if number - 1 == last and not text.endswith("\n"):
                return  # being written: the next import reads it whole
            raise Unprocessable(f"line {number} is not valid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise Unprocessable(f"line {number} is not a JSON object")
        yield record


def _whole_or_records(text: str) -> Iterable[Any]:
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return list(_records(text))
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        info = whole.get("info")
        return [{"__info__": info}, *whole["messages"]] if isinstance(info, dict) else whole["messages"]
    if isinstance(whole, list):
        return whole
    return [whole]


# -- claude code ---------------------------------------------------------------------------------


def _claude(records: Iterable[dict[str, Any]], parsed: Parsed) -> None:
    for record in records:
        parsed.records += 1
        parsed.session_id = parsed.session_id or _str(record.get("sessionId"))
        parsed.cwd = parsed.cwd or _str(record.get("cwd"))
        kind = record.get("type")
        if kind not in ("user", "assistant") or record.get("isSidechain") or record.get("isMeta"):
            if isinstance(record.get("timestamp"), str):
                parsed.add(None, "", record["timestamp"])
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        text = _blocks_text(content, ("text",))
        if kind == "user" and text.lstrip().startswith(_CLAUDE_BOILERPLATE):
            text = ""
        parsed.add(kind, text, record.get("timestamp"))


def _blocks_text(content: Any, kept: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"] for block in content
        if isinstance(block, dict) and block.get("type") in kept and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


# -- codex ---------------------------------------------------------------------------------------


def _codex(records: Iterable[dict[str, Any]], parsed: Parsed) -> None:
    for record in records:
        parsed.records += 1
        kind, payload = record.get("type"), record.get("payload")
        if kind == "session_meta" and isinstance(payload, dict):
            parsed.session_id = parsed.session_id or _str(payload.get("id"))
            parsed.cwd = parsed.cwd or _str(payload.get("cwd"))
        elif kind == "response_item" and isinstance(payload, dict):
            _codex_message(payload, record.get("timestamp"), parsed)
        elif kind == "message":  # the older direct form: the record is the message
            _codex_message(record, record.get("timestamp"), parsed)
        elif "payload" not in record and isinstance(record.get("id"), str) and parsed.records == 1:
            parsed.session_id = record["id"]  # the older form's first line: session metadata
            parsed.add(None, "", record.get("timestamp"))
        elif isinstance(record.get("timestamp"), str):
            parsed.add(None, "", record["timestamp"])


def _codex_message(item: dict[str, Any], ts: Any, parsed: Parsed) -> None:
    if item.get("type") != "message" or item.get("role") not in ("user", "assistant"):
        parsed.add(None, "", ts)
        return
    text = _blocks_text(item.get("content"), ("input_text", "output_text", "text"))
    if item["role"] == "user" and text.lstrip().startswith(_CODEX_BOILERPLATE):
        text = ""
    parsed.add(item["role"], text, ts)


# -- opencode ------------------------------------------------------------------------------------


def _opencode(records: Iterable[Any], parsed: Parsed) -> None:
    for index, record in enumerate(records, 1):
        if not isinstance(record, dict):
            raise Unprocessable(f"message {index} is not a JSON object")
        parsed.records += 1
        if "__info__" in record:
            info = record["__info__"]
            parsed.session_id = _str(info.get("id"))
            parsed.cwd = _str(info.get("directory"))
            continue
        nested = record.get("info")
        info = nested if isinstance(nested, dict) else record
        role = info.get("role")
        parsed.session_id = parsed.session_id or _str(info.get("sessionID"))
        parts = record.get("parts")
        texts = [
            p["text"] for p in parts or ()
            if isinstance(p, dict) and p.get("type") == "text" and not p.get("synthetic")
            and isinstance(p.get("text"), str)
        ] if isinstance(parts, list) else [_blocks_text(record.get("content"), ("text",))]
        parsed.add(role if isinstance(role, str) else None, "\n".join(texts), _opencode_ts(info))


def _opencode_ts(info: dict[str, Any]) -> str | None:
    created = info.get("time", {}).get("created") if isinstance(info.get("time"), dict) else None
    if isinstance(created, int | float) and not isinstance(created, bool):
        from datetime import UTC, datetime

        from signet.types import format_ts

        return format_ts(datetime.fromtimestamp(created / 1000, UTC))
    return None


# -- generic -------------------------------------------------------------------------------------


_USER_QUERY = re.compile(r"^\s*<user_query>\s*(.*?)\s*</user_query>\s*$", re.S)


def _cursor(records: Iterable[dict[str, Any]], parsed: Parsed) -> None:
    for record in records:
        parsed.records += 1
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else record.get("content")
        text = _blocks_text(content, ("text",))
        speaker = _role(record.get("role"))
        if speaker == "user" and (match := _USER_QUERY.match(text)):
            text = match.group(1)
        parsed.add(speaker, text, record.get("timestamp"))


def _generic(text: str, parsed: Parsed) -> None:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        for index, record in enumerate(_whole_or_records(text), 1):
            if not isinstance(record, dict):
                raise Unprocessable(f"message {index} is not a JSON object")
            parsed.records += 1
            speaker = _role(record.get("role") or record.get("speaker") or record.get("author"))
            body = record.get("content", record.get("text"))
            parsed.add(speaker, _blocks_text(body, ("text",)), record.get("timestamp") or record.get("ts"))
        return
    role: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        match = _ROLE_LINE.match(line)
        if match:
            parsed.add(role, "\n".join(lines))
            role, lines = _role(match.group(1)), [match.group(2)]
        else:
            lines.append(line)
    parsed.add(role, "\n".join(lines))
    parsed.records = len(parsed.messages)


def _role(value: Any) -> str | None:
    name = str(value or "").strip().lower()
    if name in _USER:
        return "user"
    if name in _ASSISTANT:
        return "assistant"
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
