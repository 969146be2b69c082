"""Batch forget and modify (at most 200 memories; forget previews, then executes with the preview's
token, signet/batch.py) and the review queue.

A scoped token batches only inside its scope (ids outside count as missing); the review queue spans
every agent, so scoped tokens are kept out. This router is included before routes_memory's so
`/api/memory/review-queue` is never taken for a memory id.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from signet.batch import MAX_BATCH
from signet.daemon.auth import Caller, memory_scope, require, unscoped
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import (
    NOT_BLANK,
    Changes,
    ErrorOut,
    Int,
    IsoTime,
    MemoryOut,
    _Body,
    _Out,
    config_bound,
    optional,
    split_commas,
)
from signet.errors import InvalidInput
from signet.types import MemoryFilters, parse_ts

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413, 429, 503)
}

router = APIRouter(prefix="/api/memory", responses=ERRORS)


# --- schemas ---------------------------------------------------------------------------------


ForgetTags = Annotated[
    Annotated[list[str], Field(min_length=1, json_schema_extra=config_bound("tags_list"))]
    | Annotated[str, Field(json_schema_extra=config_bound("tags_text"))],
    AfterValidator(split_commas),
]


class ForgetFiltersBody(_Body):
    """Filters that select what to forget: at least one, none null (a filter this route does
    not know is refused, naming it: the batch must never sweep wider than the caller asked)."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})
    type: str = optional()
    tags: ForgetTags = optional(description="A non-empty list, or one comma-separated string.")
    who: str = optional()
    project: str = optional()
    since: IsoTime = optional()
    until: IsoTime = optional()
    pinned: bool = optional()
    importance_min: float = optional()

    @model_validator(mode="after")
    def _some_filter(self) -> ForgetFiltersBody:
        if not self.model_fields_set:
            raise ValueError("give at least one filter, or leave filters out")
        return self


class ForgetBody(_Body):
    """ids, or a query, or filters alone (never ids and a query); `execute` needs the
    preview's confirm_token."""

    model_config = ConfigDict(json_schema_extra={
        "anyOf": [{"required": ["ids"]}, {"required": ["query"]}, {"required": ["filters"]}],
        "not": {"required": ["ids", "query"]},
        "if": {"properties": {"mode": {"const": "execute"}}, "required": ["mode"]},
        "then": {"required": ["confirm_token"]},
    })
    ids: list[str] = optional(min_length=1, max_length=MAX_BATCH, description="The memories, by id.")
    query: str = optional(pattern=NOT_BLANK, description="Or: memories holding these words.")
    filters: ForgetFiltersBody = optional(description="Narrow the query, or match by these alone.")
    mode: Literal["preview", "execute"] = "preview"
    confirm_token: str = optional(min_length=1, max_length=200, description="From the preview.")
    force: bool = Field(False, description="Forget pinned memories too.")
    reason: str | None = Field(None, max_length=1000)


class ModifyItem(_Body):
    id: str
    changes: Changes
    version: Int | None = Field(None, description="Expected current version.")
    reason: str | None = None


class ModifyBody(_Body):
    items: list[ModifyItem] = Field(min_length=1, max_length=MAX_BATCH)
    reason: str | None = Field(None, description="Default reason for every item.")


class ItemError(BaseModel):
    code: str
    message: str


class ItemResult(BaseModel):
    id: str
    ok: bool
    memory: MemoryOut | None = None  # type: ignore[valid-type]
    error: ItemError | None = None


class ForgetOut(_Out):
    mode: str
    count: int
    capped: bool | None = None
    memories: list[MemoryOut] | None = None  # type: ignore[valid-type]
    missing: list[str] | None = None
    pinned: list[str] | None = None
    confirm_token: str | None = None
    succeeded: int | None = None
    failed: int | None = None
    results: list[ItemResult] | None = None


class ModifyOut(BaseModel):
    mode: str
    count: int
    succeeded: int
    failed: int
    results: list[ItemResult]


class ReviewItemOut(_Out):
    id: str
    memory_id: str
    action: str
    status: str
    reason: str
    old_content: str
    new_content: str | None
    created_at: str
    resolved_at: str | None
    resolved_by: str | None
    target_version: int | None = None


class ReviewQueueOut(BaseModel):
    items: list[ReviewItemOut]


# --- routes ----------------------------------------------------------------------------------


@router.post("/forget", response_model=ForgetOut, dependencies=[Depends(require("forget"))])
def forget_batch(body: ForgetBody, app: App, actor: CallerActor, caller: Caller) -> JSONResponse:
    return JSONResponse(app.forget_batch(
        ids=body.ids, query=body.query, filters=_filters(body.filters), mode=body.mode,
        confirm_token=body.confirm_token, force=body.force, reason=body.reason, actor=actor,
        scope=memory_scope(caller),
    ))


@router.post("/modify", response_model=ModifyOut, dependencies=[Depends(require("modify"))])
def modify_batch(body: ModifyBody, app: App, actor: CallerActor, caller: Caller) -> JSONResponse:
    items = [_item(item) for item in body.items]
    return JSONResponse(app.modify_batch(
        items, reason=body.reason, actor=actor, scope=memory_scope(caller)
    ))


@router.get("/review-queue", response_model=ReviewQueueOut,
            dependencies=[Depends(require("recall")), Depends(unscoped)])
def review_queue(
    app: App,
    status: Literal["pending", "approved", "rejected", "all"] = "pending",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JSONResponse:
    items = app.review_queue(None if status == "all" else status, limit=limit)
    return JSONResponse({"items": [item.to_dict() for item in items]})


@router.post("/review-queue/{review_id}/approve", response_model=ReviewItemOut,
             dependencies=[Depends(require("modify")), Depends(unscoped)])
def approve(review_id: str, app: App, actor: CallerActor) -> JSONResponse:
    return JSONResponse(app.resolve_review(review_id, True, actor=actor).to_dict())


@router.post("/review-queue/{review_id}/reject", response_model=ReviewItemOut,
             dependencies=[Depends(require("modify")), Depends(unscoped)])
def reject(review_id: str, app: App, actor: CallerActor) -> JSONResponse:
    return JSONResponse(app.resolve_review(review_id, False, actor=actor).to_dict())


# --- helpers ---------------------------------------------------------------------------------


def _item(item: ModifyItem) -> dict[str, Any]:
    changes = item.changes.model_dump(exclude_unset=True)  # null refused by the schema
    return {"id": item.id, "changes": changes, "version": item.version, "reason": item.reason}


def _filters(body: ForgetFiltersBody | None) -> MemoryFilters:
    if body is None:
        return MemoryFilters()
    for name in ("since", "until"):
        value = getattr(body, name)
        if value is not None:
            try:
                parse_ts(value)
            except ValueError as exc:
                raise InvalidInput(f"filters.{name}: not an ISO-8601 date or date-time") from exc
    return MemoryFilters(
        type=body.type, tags=tuple(body.tags or ()), who=body.who, project=body.project,
        since=body.since, until=body.until, pinned=body.pinned,
        importance_min=body.importance_min,
    )
