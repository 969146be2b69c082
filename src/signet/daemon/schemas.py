"""The JSON shapes of the HTTP API, as pydantic models, so /openapi.json documents every route.

Request bodies are validated here (a wrong type becomes a 400 naming the field, see
`daemon/errors.py`); the meaning of each value (is the type known, is the content too long) is
checked once, by the app, for every adapter alike. Unknown request fields are ignored, so a
newer client can talk to an older daemon.

Response models mirror the value types in `signet.types`: `MemoryOut` and `HistoryEventOut` are
generated from the dataclasses themselves, so they cannot drift from `to_dict()`. They allow
extra fields for the same reason requests do: the routes return the `to_dict()` JSON as is.
"""

from __future__ import annotations

import dataclasses
import typing
from types import GenericAlias
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, field_validator

from signet.types import HistoryEvent, Memory

RecallMode = Literal["hybrid", "keyword", "vector", "full"]
_OUT = ConfigDict(extra="allow")


def _model_of(cls: type, name: str) -> type[BaseModel]:
    """A response model with the fields (and types) of the dataclass `cls`."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        # to_dict() turns tuples into lists; JSON Schema has arrays either way.
        if typing.get_origin(hint) is tuple:
            hint = GenericAlias(list, typing.get_args(hint)[:1])
        fields[f.name] = (hint, ...)
    return create_model(name, __config__=_OUT, **fields)


def _split_commas(value: Any) -> Any:
    return [t.strip() for t in value.split(",") if t.strip()] if isinstance(value, str) else value


# A list of strings, or one comma-separated string (what a shell or a query string sends).
Tags = Annotated[list[str] | None, BeforeValidator(_split_commas)]

MemoryOut = _model_of(Memory, "Memory")
HistoryEventOut = _model_of(HistoryEvent, "HistoryEvent")

# --- requests --------------------------------------------------------------------------------


class _Body(BaseModel):
    """A request body. JSON may spell a lone surrogate (`"\\ud800"`), which is no Unicode text
    and which SQLite cannot store: refuse it here, naming the field, instead of failing later."""

    @field_validator("*", mode="after")
    @classmethod
    def _valid_unicode(cls, value: Any) -> Any:
        for text in _strings(value):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("not valid Unicode text (holds a lone surrogate)") from None
        return value


def _strings(value: Any) -> list[str]:
    """Every string in `value`, dict keys and free-form payloads (the graph) included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    if isinstance(value, dict):
        return [text for k, v in value.items() for text in (*_strings(k), *_strings(v))]
    return []  # numbers, booleans, and nested bodies, which validate themselves


class RememberBody(_Body):
    content: str = Field(description="The text to remember.")
    type: str | None = Field(None, description="fact, preference, decision, ... (default fact).")
    category: str | None = None
    tags: Tags = Field(None, description="A list, or one comma-separated string.")
    importance: float | None = Field(None, description="0-1.")
    confidence: float | None = Field(None, description="0-1.")
    pinned: bool | None = None
    who: str | None = None
    why: str | None = None
    project: str | None = None
    source_id: str | None = None
    source_type: str | None = None
    event_at: str | None = Field(None, description="When it happened, ISO-8601.")
    idempotency_key: str | None = Field(
        None, min_length=1, max_length=200,
        description="A retry with the same key returns the first response without writing.",
    )
    graph: dict[str, Any] | None = Field(
        None,
        description="Structured graph payload: entities (name, type, description, aliases),"
        " aspects (entity, aspect), attributes (entity, aspect, key, value, kind),"
        " dependencies (source, target, type, strength), relations (source, target, type,"
        " confidence).",
    )


class FiltersBody(_Body):
    type: str | None = None
    tags: Tags = None
    who: str | None = None
    project: str | None = None
    since: str | None = Field(None, min_length=1, description="ISO-8601 date or date-time.")
    until: str | None = Field(None, min_length=1, description="ISO-8601 date or date-time.")
    pinned: bool | None = None
    importance_min: float | None = None


class RecallFiltersBody(FiltersBody):
    """Recall's filters: the shared ones plus the community and the agent (GET /api/memories
    takes both as query parameters too)."""

    community: str | None = Field(
        None, description="A community id or name: memories mentioning one of its entities."
    )
    agent: str | None = Field(
        None, max_length=200, description="Only memories of this agent id (a scoped token: its own)."
    )


class RecallBody(_Body):
    query: str
    limit: int | None = Field(None, description="Default: search.default_limit.")
    mode: RecallMode | None = Field(None, description="Default: search.default_mode (full).")
    filters: RecallFiltersBody | None = None
    min_score: float | None = None
    min_confidence: float | None = Field(
        None, ge=0, le=1, description="Drop results whose confidence is below this (0-1)."
    )
    expand: bool = False


class Changes(_Body):
    """What `modify` may change (types.MODIFIABLE_FIELDS); only the fields sent change, and
    those in types.NULLABLE_FIELDS (`who`, `why`, `project`, `category`) may be null."""

    content: str | None = None
    type: str | None = None
    tags: Tags = None
    importance: float | None = None
    pinned: bool | None = None
    category: str | None = None
    who: str | None = None
    why: str | None = None
    project: str | None = None


class PatchBody(Changes):
    """A PATCH of one memory: its changes, with the version expected and a reason."""

    version: int | None = Field(None, description="Expected current version; 409 if it differs.")
    reason: str | None = None


class RecoverBody(_Body):
    reason: str | None = None


# --- responses -------------------------------------------------------------------------------


class ErrorOut(BaseModel):
    error: str
    code: str


class HealthOut(BaseModel):
    status: Literal["ok"]
    version: str
    pid: int


class DaemonInfo(BaseModel):
    pid: int
    port: int
    started_at: str
    uptime_s: float


class StatusOut(BaseModel):
    model_config = _OUT
    daemon: DaemonInfo


class RememberOut(BaseModel):
    model_config = _OUT
    id: str
    deduped: bool
    embedded: bool
    memory: MemoryOut  # type: ignore[valid-type]


class EvidenceOut(BaseModel):
    model_config = _OUT
    lexical: float | None = None
    semantic: float | None = None
    hint: float | None = None
    traversal: float | None = None
    source: float | None = None
    source_semantic: float | None = None


class RecallHitOut(MemoryOut):  # type: ignore[misc, valid-type]
    score: float
    evidence: EvidenceOut
    adjustments: list[str]
    transcript: str | None = None


class RecallMeta(BaseModel):
    model_config = _OUT
    count: int
    timings: dict[str, float]
    degraded: list[str]


class RecallOut(BaseModel):
    model_config = _OUT
    results: list[RecallHitOut]
    query: str
    method: str
    meta: RecallMeta


class PageOut(BaseModel):
    model_config = _OUT
    items: list[MemoryOut]  # type: ignore[valid-type]
    total: int
    limit: int
    offset: int


class HistoryOut(BaseModel):
    model_config = _OUT
    history: list[HistoryEventOut]  # type: ignore[valid-type]
