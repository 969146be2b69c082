"""The JSON shapes of the HTTP API as pydantic models, so /openapi.json documents every route.

Bodies are strict and closed, so a generated client never meets a surprise; the meaning of values is
checked by the app, once for every adapter. Settings-bound fields carry a `CONFIG_BOUND` marker
(daemon/openapi.py). `MemoryOut` and `HistoryEventOut` are generated from the `signet.types`
dataclasses so they cannot drift from `to_dict()`.
"""

from __future__ import annotations

import dataclasses
import typing
from types import GenericAlias
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    create_model,
    field_validator,
    model_validator,
)

from signet.graph.apply import MAX_ITEMS, MAX_NAME, MAX_VALUE
from signet.types import MEMORY_TYPES, MODIFIABLE_FIELDS, Evidence, HistoryEvent, Memory

RecallMode = Literal["hybrid", "keyword", "vector", "full"]
MemoryType = Literal[MEMORY_TYPES]  # type: ignore[valid-type]
# A string holding something other than whitespace (the app strips, then refuses empty text).
# Spelled out, not `\S`: JSON Schema readers (ECMA-262), pydantic (Rust) and Python's
# str.strip() disagree about what `\s` holds (\x1c-\x1f, \x85); this is str.isspace() exactly.
NOT_BLANK = r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
# Where a bound comes from the configuration: daemon/openapi.py writes the configured value.
CONFIG_BOUND = "x-signet-config-bound"


class _Out(BaseModel):
    """An answer's model: it documents the keys a route promises, and the answer may hold more
    (open, where a request body, `_Body`, is closed)."""

    model_config = ConfigDict(extra="allow")


def config_bound(name: str) -> dict[str, Any]:
    """json_schema_extra marking a field whose bound is configured (see daemon/openapi.py)."""
    return {CONFIG_BOUND: name}


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
    return create_model(name, __base__=_Out, **fields)


def split_commas(value: Any) -> Any:
    return [t.strip() for t in value.split(",")] if isinstance(value, str) else value


# A list of strings, or one comma-separated string (what a shell or a query string sends). The
# most tags (memory.max_tags) counts the items as sent, blank ones too, so the schema's
# maxItems and pattern say the same as the app.
TagsValue = Annotated[
    Annotated[list[str], Field(json_schema_extra=config_bound("tags_list"))]
    | Annotated[str, Field(json_schema_extra=config_bound("tags_text"))],
    AfterValidator(split_commas),
]
Tags = TagsValue | None
def _integral(value: Any) -> Any:
    """JSON Schema calls 1.0 an integer: accept it as 1 (a strict int would not)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def integer(**constraints: Any) -> Any:
    """An integer as JSON Schema means it (1.0 included), never a boolean or a string. The
    constraints go inside the conversion, so the schema shows them as minimum/maximum."""
    return Annotated[int, Field(**constraints), BeforeValidator(_integral)]


Int: TypeAlias = Annotated[int, Field(), BeforeValidator(_integral)]  # integer(), spelt out
# SQLite's largest integer: an offset past it is no row, not an overflow.
MAX_SQL_INT = 2**63 - 1
# ISO-8601 as the app parses it (types.parse_ts): a date, or a date-time.
IsoTime = Annotated[
    str,
    WithJsonSchema({"type": "string", "anyOf": [{"format": "date"}, {"format": "date-time"}],
                    "description": "ISO-8601 date or date-time."}),
]
Unit = Annotated[float, Field(ge=0, le=1)]

MemoryOut = _model_of(Memory, "Memory")
HistoryEventOut = _model_of(HistoryEvent, "HistoryEvent")
EvidenceOut = _model_of(Evidence, "EvidenceOut")

# --- requests --------------------------------------------------------------------------------


NUL_REFUSED = "holds a NUL character (U+0000), which no text may contain"


class _Body(BaseModel):
    """A request body: strict (a JSON `0` is no boolean) and closed (an unknown field is a 400). A
    lone surrogate (SQLite cannot store it) or a NUL (PostgreSQL text cannot) is refused here,
    naming the field, on both backends alike."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @field_validator("*", mode="after")
    @classmethod
    def _valid_unicode(cls, value: Any) -> Any:
        for text in _strings(value):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("not valid Unicode text (holds a lone surrogate)") from None
            if "\x00" in text:
                raise ValueError(NUL_REFUSED)
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


def optional(**kwargs: Any) -> Any:
    """A field that may be left out but, when sent, holds a value (never null): its type has no
    None; its default (None) is not validated, and daemon/openapi.py leaves it unpublished."""
    return Field(None, **kwargs)


# --- the graph payload (graph/apply.py parses it; these say the same, at the edge) ----------

# A name: some letter or digit, at most 200 characters; a label or text: not blank.
GraphName = Annotated[str, Field(max_length=MAX_NAME, pattern=r"[^\W_]")]
GraphLabel = Annotated[str, Field(max_length=MAX_NAME, pattern=NOT_BLANK)]
GraphText = Annotated[str, Field(max_length=MAX_VALUE, pattern=NOT_BLANK)]


class GraphEntity(_Body):
    name: GraphName
    type: GraphLabel | None = Field(None, description="person, project, tool, ...")
    entity_type: GraphLabel | None = Field(None, description="The same as type (type wins).")
    description: GraphText | None = None
    aliases: list[GraphName] | None = None


class GraphAspect(_Body):
    model_config = ConfigDict(json_schema_extra={
        "anyOf": [{"required": ["aspect"]}, {"required": ["name"]}],
    })
    entity: GraphName
    aspect: GraphLabel = optional(description="The aspect's name (or `name`).")
    name: GraphLabel = optional()
    description: GraphText | None = None
    confidence: Unit = optional()


class GraphAttribute(_Body):
    entity: GraphName
    aspect: GraphLabel
    key: GraphLabel
    value: GraphText
    kind: Literal["attribute", "constraint"] = optional()
    confidence: Unit = optional()


class GraphDependency(_Body):
    source: GraphName
    target: GraphName
    type: GraphLabel = optional(description="Default related_to.")
    strength: Unit = optional()


class GraphRelation(_Body):
    source: GraphName
    target: GraphName
    type: GraphLabel = optional(description="Default related_to.")
    confidence: Unit = optional()


def _items(kind: Any) -> Any:
    return Annotated[list[kind] | None, Field(max_length=MAX_ITEMS)]


class GraphBody(_Body):
    """Entities (a name, or {name, type, description, aliases}), aspects of entities,
    attributes under aspects, dependencies and relations between entities."""

    entities: _items(GraphName | GraphEntity) = None  # type: ignore[valid-type]
    aspects: _items(GraphAspect) = None  # type: ignore[valid-type]
    attributes: _items(GraphAttribute) = None  # type: ignore[valid-type]
    dependencies: _items(GraphDependency) = None  # type: ignore[valid-type]
    relations: _items(GraphRelation) = None  # type: ignore[valid-type]

    def payload(self) -> dict[str, Any]:
        """The payload as graph/apply.py reads it (only what was sent)."""
        return self.model_dump(exclude_unset=True)


CHANGEABLE = MODIFIABLE_FIELDS  # at least one in a modify
Content = Annotated[
    str, Field(min_length=1, pattern=NOT_BLANK, json_schema_extra=config_bound("content"))
]


class RememberBody(_Body):
    content: Content = Field(description="The text to remember.")
    type: MemoryType | None = Field(None, description="Default fact.")
    category: str | None = None
    tags: Tags = Field(None, description="A list, or one comma-separated string.")
    importance: Unit | None = Field(None, description="0-1.")
    confidence: Unit | None = Field(None, description="0-1.")
    pinned: bool | None = None
    who: str | None = None
    why: str | None = None
    project: str | None = None
    source_id: str | None = None
    source_type: str | None = None
    event_at: IsoTime | None = Field(None, description="When it happened, ISO-8601.")
    idempotency_key: str | None = Field(
        None, min_length=1, max_length=200,
        description="A retry with the same key returns the first response without writing.",
    )
    graph: GraphBody | None = Field(None, description="Structured graph payload.")


class FiltersBody(_Body):
    type: str | None = None
    tags: Tags = None
    who: str | None = None
    project: str | None = None
    since: IsoTime | None = None
    until: IsoTime | None = None
    pinned: bool | None = None
    importance_min: float | None = None


class RecallFiltersBody(FiltersBody):
    """Recall's filters: the shared ones plus the community and the agent (GET /api/memories
    takes both as query parameters too)."""

    community: str | None = Field(
        None, pattern=NOT_BLANK,
        description="A community id or name: memories mentioning one of its entities.",
    )
    agent: str | None = Field(
        None, max_length=200, description="Only memories of this agent id (a scoped token: its own)."
    )


RecallLimit: TypeAlias = Annotated[  # integer(ge=1, ...), spelt out for the type checker
    int, Field(ge=1, json_schema_extra=config_bound("recall_limit")), BeforeValidator(_integral)
]


class RecallBody(_Body):
    query: str
    limit: RecallLimit | None = Field(None, description="Default: search.default_limit.")
    mode: RecallMode | None = Field(None, description="Default: search.default_mode (full).")
    filters: RecallFiltersBody | None = None
    min_score: float | None = None
    min_confidence: Unit | None = Field(
        None, description="Drop results whose confidence is below this (0-1)."
    )
    expand: bool = False


class Changes(_Body):
    """What a modify changes: only the fields sent, at least one. `who`, `why`, `project` and
    `category` may be null (cleared); the others, when sent, hold a value."""

    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": [name]} for name in CHANGEABLE
    ]})

    content: Content = optional()
    type: MemoryType = optional()
    tags: TagsValue = optional(description="A list, or one comma-separated string.")
    importance: Unit = optional(description="0-1.")
    pinned: bool = optional()
    category: str | None = None
    who: str | None = None
    why: str | None = None
    project: str | None = None

    @model_validator(mode="after")
    def _some_change(self) -> Changes:
        if not self.model_fields_set & set(CHANGEABLE):
            raise ValueError(f"no changes given (send at least one of {', '.join(CHANGEABLE)})")
        return self


class PatchBody(Changes):
    version: Int | None = Field(None, description="Expected current version; 409 if it differs.")
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


class StatusOut(_Out):
    daemon: DaemonInfo


class RememberOut(_Out):
    id: str
    deduped: bool
    embedded: bool
    memory: MemoryOut  # type: ignore[valid-type]


class RecallHitOut(MemoryOut):  # type: ignore[misc, valid-type]
    score: float
    evidence: EvidenceOut  # type: ignore[valid-type]
    adjustments: list[str]
    transcript: str | None = None


class RecallMeta(_Out):
    count: int
    timings: dict[str, float]
    degraded: list[str]


class RecallOut(_Out):
    results: list[RecallHitOut]
    query: str
    method: str
    meta: RecallMeta


class PageOut(_Out):
    items: list[MemoryOut]  # type: ignore[valid-type]
    total: int
    limit: int
    offset: int


class HistoryOut(_Out):
    history: list[HistoryEventOut]  # type: ignore[valid-type]
