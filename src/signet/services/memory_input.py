"""What a caller's fields become before anything is written: prefixes, validation, columns.

Pure functions, no store and no provider: `new_memory` turns `remember`'s content and keyword
fields into a validated `NewMemory` (a `critical:` prefix pins it, a `[a,b]:` prefix tags it),
`changed_columns` turns `modify`'s changes into the columns to update. Every refusal is an
`InvalidInput` naming the field, raised before a transaction opens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from signet.config import MemoryConfig
from signet.errors import InvalidInput
from signet.normalize import NormalizedContent, normalize_content
from signet.types import MEMORY_TYPES, MODIFIABLE_FIELDS, Actor, Memory, NewMemory, dumps, parse_ts

__all__ = [
    "MODIFIABLE", "changed_columns", "check_modifiable", "check_text", "check_ts", "new_memory", "optional_str",
    "validated",
]

_CRITICAL = re.compile(r"^\s*critical:\s*", re.IGNORECASE)
_TAG_PREFIX = re.compile(r"^\s*\[([^\]\n]{1,500})\]:\s*")
MODIFIABLE = MODIFIABLE_FIELDS


def new_memory(
    content: Any, actor: Actor, fields: dict[str, Any], limits: MemoryConfig, *,
    prefixes: bool = True,
) -> NewMemory:
    """The memory `remember` writes, validated; `prefixes=False` keeps content verbatim."""
    if not isinstance(content, str):
        raise InvalidInput("content must be a string")
    unknown = set(fields) - set(NewMemory.__dataclass_fields__)
    if unknown:
        raise InvalidInput(f"unknown field(s): {', '.join(sorted(unknown))}")
    content, prefix_fields = _apply_prefixes(content) if prefixes else (content, {})
    merged = {**prefix_fields, **{k: v for k, v in fields.items() if v is not None}}
    if "tags" in prefix_fields and "tags" in fields and fields["tags"]:
        merged["tags"] = tuple(dict.fromkeys([*prefix_fields["tags"], *fields["tags"]]))
    memory = NewMemory(content=content, agent_id=actor.agent_id, session_id=actor.session_id,
                       importance=limits.default_importance)
    return validated(replace(memory, **merged), limits)


def validated(memory: NewMemory, limits: MemoryConfig) -> NewMemory:
    """`memory` checked (content, type, scores, tags, event_at) with its tags cleaned."""
    if not memory.content.strip():
        raise InvalidInput("content is empty")
    limit = limits.max_content_chars
    if len(memory.content) > limit:
        raise InvalidInput(f"content is {len(memory.content)} characters; the maximum is {limit}")
    if memory.type not in MEMORY_TYPES:
        raise InvalidInput(f"invalid type {memory.type!r} (one of {', '.join(MEMORY_TYPES)})")
    for name in ("importance", "confidence"):
        value = getattr(memory, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise InvalidInput(f"{name} must be a number between 0 and 1")
    tags = _clean_tags(memory.tags, limits.max_tags)
    if memory.event_at is not None:
        check_ts(memory.event_at, "event_at")
    return replace(memory, tags=tags, importance=float(memory.importance))


def check_modifiable(changes: dict[str, Any]) -> None:
    """Refuses an empty change or one naming a field `modify` may not set."""
    unknown = set(changes) - set(MODIFIABLE)
    if unknown:
        raise InvalidInput(f"cannot modify field(s): {', '.join(sorted(unknown))}")
    if not changes:
        raise InvalidInput("no changes given")


def changed_columns(
    current: Memory, changes: dict[str, Any], limits: MemoryConfig
) -> tuple[dict[str, Any], NormalizedContent | None]:
    """The columns `changes` sets on `current`, validated as a new memory would be, and the
    normalised new content when the content changes."""
    if "tags" in changes and not isinstance(changes["tags"], list | tuple):
        raise InvalidInput("tags must be a list of strings")
    proposed = NewMemory(
        content=changes.get("content", current.content),
        type=changes.get("type", current.type),
        importance=changes.get("importance", current.importance),
        tags=tuple(changes["tags"]) if "tags" in changes else current.tags,
        pinned=bool(changes.get("pinned", current.pinned)),
    )
    valid = validated(proposed, limits)
    columns: dict[str, Any] = {}
    norm = None
    for name in changes:
        if name == "content":
            norm = normalize_content(valid.content)
            columns.update(
                content=norm.storage, normalized_content=norm.normalized,
                content_hash=norm.content_hash,
            )
        elif name == "tags":
            columns["tags"] = dumps(list(valid.tags))
        elif name == "pinned":
            columns["pinned"] = int(bool(changes["pinned"]))
        elif name in ("type", "importance"):
            columns[name] = getattr(valid, name)
        else:
            columns[name] = optional_str(changes[name], name)
    return columns, norm


def _apply_prefixes(content: str) -> tuple[str, dict[str, Any]]:
    """`critical:` pins with importance 1; `[a,b]:` sets tags. Either order, once each."""
    fields: dict[str, Any] = {}
    for _ in range(2):
        if "pinned" not in fields and _CRITICAL.match(content):
            content = _CRITICAL.sub("", content, count=1)
            fields.update(pinned=True, importance=1.0)
        match = _TAG_PREFIX.match(content)
        if "tags" not in fields and match:
            fields["tags"] = tuple(t.strip() for t in match.group(1).split(",") if t.strip())
            content = content[match.end():]
    return content, fields


def _clean_tags(tags: Sequence[Any], max_tags: int) -> tuple[str, ...]:
    if isinstance(tags, str):
        tags = [t for t in tags.split(",")]
    if not isinstance(tags, list | tuple):
        raise InvalidInput("tags must be a list of strings")
    if len(tags) > max_tags:  # counted as sent (blank and repeated ones too): the API says so
        raise InvalidInput(f"at most {max_tags} tags")
    cleaned: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInput("tags must be a list of strings")
        tag = tag.strip()
        if tag and tag not in cleaned:
            cleaned.append(tag[:100])
    return tuple(cleaned)


def check_text(value: Any, name: str = "") -> None:
    """InvalidInput naming the field when any string in `value` is not valid Unicode (a lone
    surrogate, which JSON can spell and SQLite cannot store) or holds a NUL character (which
    PostgreSQL text cannot hold; refused on both backends alike): refused before anything is
    written, whatever the adapter."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(
                f"{name or 'a field'} is not valid Unicode text (holds a lone surrogate)"
            ) from None
        if "\x00" in value:
            raise InvalidInput(
                f"{name or 'a field'} holds a NUL character (U+0000), which no text may contain"
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, name or str(key))
            check_text(item, name or str(key))
    elif isinstance(value, list | tuple):
        for item in value:
            check_text(item, name)


def optional_str(value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInput(f"{name} must be a string")


def check_ts(value: Any, name: str) -> None:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be an ISO-8601 date or date-time string")
    try:
        parse_ts(value)
    except ValueError as exc:
        raise InvalidInput(f"{name} is not an ISO-8601 date or date-time: {value!r}") from exc
