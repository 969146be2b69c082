"""The memory routes: remember, recall/search, list, get, modify, forget, history, recover.

Handlers are plain `def`s (FastAPI's thread pool) because SignetApp blocks. `/api/memory/search` is
declared before `/api/memory/{memory_id}` so "search" is never taken for an id.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query
from fastapi.responses import JSONResponse

from signet.app import SignetApp
from signet.daemon.auth import Principal, memory_scope, require
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import (
    MAX_SQL_INT,
    NOT_BLANK,
    ErrorOut,
    FiltersBody,
    HistoryOut,
    IsoTime,
    MemoryOut,
    PageOut,
    PatchBody,
    RecallBody,
    RecallFiltersBody,
    RecallLimit,
    RecallMode,
    RecallOut,
    RecoverBody,
    RememberBody,
    RememberOut,
    Unit,
)
from signet.errors import InvalidInput
from signet.types import Actor, MemoryFilters, RecallQuery, parse_ts

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 404, 409, 413, 500, 502, 503)
}
router = APIRouter(prefix="/api", responses=ERRORS)

# The caller, admitted only with the named permission (daemon/auth.py); its scope goes to the app.
Remembers = Annotated[Principal, Depends(require("remember"))]
Recalls = Annotated[Principal, Depends(require("recall"))]
Modifies = Annotated[Principal, Depends(require("modify"))]
Forgets = Annotated[Principal, Depends(require("forget"))]
Recovers = Annotated[Principal, Depends(require("recover"))]


@router.post("/memory/remember", response_model=RememberOut)
def remember(
    body: RememberBody, app: App, actor: CallerActor, principal: Remembers
) -> JSONResponse:
    fields = body.model_dump(exclude={"content", "idempotency_key", "graph"}, exclude_none=True)
    result = app.remember(
        body.content, actor=actor, idempotency_key=body.idempotency_key,
        graph=body.graph.payload() if body.graph is not None else None,
        scope=memory_scope(principal), **fields,
    )
    return JSONResponse({
        "id": result.id, "deduped": result.deduped, "embedded": result.embedded,
        "memory": result.memory.to_dict(),
    })


@router.post("/memory/recall", response_model=RecallOut)
def recall(body: RecallBody, app: App, principal: Recalls, actor: CallerActor) -> JSONResponse:
    return _recall(body, app, principal, actor, "POST /api/memory/recall")


def _recall(
    body: RecallBody, app: SignetApp, principal: Principal, actor: Actor, route: str
) -> JSONResponse:
    query = RecallQuery(
        query=body.query,
        limit=body.limit if body.limit is not None else app.config.search.default_limit,
        filters=_recall_filters(body.filters or RecallFiltersBody()),
        mode=body.mode or app.config.search.default_mode,
        min_score=body.min_score,
        min_confidence=body.min_confidence,
        expand=body.expand,
    )
    # actor and route label the recall QA ledger's row (when memorySearchQaEnabled is on).
    response = app.recall(query, scope=memory_scope(principal), actor=actor, route=route)
    return JSONResponse(response.to_dict())


def _filter_query(
    type: str | None = None,
    tags: str | None = Query(None, description="Comma-separated."),
    who: str | None = None,
    project: str | None = None,
    since: IsoTime | None = None,
    until: IsoTime | None = None,
    pinned: bool | None = None,
    community: str | None = Query(None, pattern=NOT_BLANK, description="A community id or name."),
    agent: str | None = Query(None, max_length=200, description="An agent id."),
) -> RecallFiltersBody:
    """The filters GET /api/memory/search and GET /api/memories take as query parameters."""
    return RecallFiltersBody(type=type, tags=tags, who=who, project=project, since=since,
                             until=until, pinned=pinned, community=community, agent=agent)


FilterQuery = Annotated[RecallFiltersBody, Depends(_filter_query)]


@router.get("/memory/search", response_model=RecallOut)
def search(
    app: App,
    principal: Recalls,
    actor: CallerActor,
    q: str,
    filters: FilterQuery,
    limit: Annotated[RecallLimit | None, Query(description="Default: search.default_limit.")] = None,
    mode: RecallMode | None = Query(None, description="Default: search.default_mode (full)."),
    importance_min: float | None = None,
    min_confidence: Annotated[
        Unit | None, Query(description="Drop results whose confidence is below this (0-1).")
    ] = None,
) -> JSONResponse:
    filters = filters.model_copy(update={"importance_min": importance_min})
    body = RecallBody(
        query=q, limit=limit, mode=mode, filters=filters, min_confidence=min_confidence
    )
    return _recall(body, app, principal, actor, "GET /api/memory/search")


@router.get("/memories", response_model=PageOut)
def list_memories(
    app: App,
    principal: Recalls,
    filters: FilterQuery,
    limit: int = Query(50, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=MAX_SQL_INT),
    include_deleted: bool = False,
) -> JSONResponse:
    page = app.list(_recall_filters(filters, include_deleted=include_deleted), limit=limit,
                    offset=offset, scope=memory_scope(principal))
    return JSONResponse({
        "items": [m.to_dict() for m in page.items], "total": page.total,
        "limit": page.limit, "offset": page.offset,
    })


INCLUDE_DELETED = Query(False, description="Also read a forgotten (soft-deleted) memory;"
                        " without it a forgotten memory is a 404, as if deleted.")


@router.get("/memory/{memory_id}", response_model=MemoryOut)
def get_memory(
    memory_id: str, app: App, principal: Recalls, include_deleted: bool = INCLUDE_DELETED
) -> JSONResponse:
    # A caller's read is an access (recorded off the read path, written by the one writer).
    memory = app.get(memory_id, scope=memory_scope(principal), access=True,
                     include_deleted=include_deleted)
    return JSONResponse(memory.to_dict())


@router.patch("/memory/{memory_id}", response_model=MemoryOut)
def modify(
    memory_id: str, body: PatchBody, app: App, actor: CallerActor, principal: Modifies
) -> JSONResponse:
    # Only what was sent; the schema has already refused null where a value is needed.
    changes = body.model_dump(exclude_unset=True, exclude={"version", "reason"})
    memory = app.modify(
        memory_id, changes, actor=actor, expected_version=body.version, reason=body.reason,
        scope=memory_scope(principal),
    )
    return JSONResponse(memory.to_dict())


@router.delete("/memory/{memory_id}", response_model=MemoryOut)
def forget(
    memory_id: str, app: App, actor: CallerActor, principal: Forgets, force: bool = False,
    reason: str | None = None,
) -> JSONResponse:
    forgotten = app.forget(
        memory_id, actor=actor, force=force, reason=reason, scope=memory_scope(principal)
    )
    return JSONResponse(forgotten.to_dict())


@router.get("/memory/{memory_id}/history", response_model=HistoryOut)
def history(
    memory_id: str, app: App, principal: Recalls, include_deleted: bool = INCLUDE_DELETED
) -> JSONResponse:
    if not include_deleted:
        app.get(memory_id, scope=memory_scope(principal), include_deleted=False)
    events = app.history(memory_id, scope=memory_scope(principal))
    return JSONResponse({"history": [e.to_dict() for e in events]})


@router.post("/memory/{memory_id}/recover", response_model=MemoryOut)
def recover(
    memory_id: str,
    app: App,
    actor: CallerActor,
    principal: Recovers,
    body: Annotated[RecoverBody | None, Body()] = None,
) -> JSONResponse:
    reason = body.reason if body else None
    recovered = app.recover(memory_id, actor=actor, reason=reason, scope=memory_scope(principal))
    return JSONResponse(recovered.to_dict())


def _filters(body: FiltersBody, *, include_deleted: bool = False) -> MemoryFilters:
    for name in ("since", "until"):
        value = getattr(body, name)
        if value is not None:
            _check_ts(value, name)
    return MemoryFilters(
        type=body.type, tags=tuple(body.tags or ()), who=body.who, project=body.project,
        since=body.since, until=body.until, pinned=body.pinned,
        importance_min=body.importance_min, include_deleted=include_deleted,
    )


def _recall_filters(body: RecallFiltersBody, *, include_deleted: bool = False) -> MemoryFilters:
    return replace(_filters(body, include_deleted=include_deleted), community=body.community,
                   agent_id=body.agent)


def _check_ts(value: str, name: str) -> None:
    try:
        parse_ts(value)
    except ValueError as exc:
        raise InvalidInput(f"{name}: not an ISO-8601 date or date-time") from exc
