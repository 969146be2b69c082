"""Telemetry routes: latency histograms, usage counters and recent errors (no content,
`diagnostics`), and the recall QA ledger (query text and results: the analytics permission, only
when `memory.pipelineV2.telemetry.memorySearchQaEnabled` is on, within the token's scope). The
first three count every scope, so scoped tokens get 403.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from signet.clock import stamp
from signet.daemon.auth import Caller, require, unscoped
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut, _Out

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 429)
}
DIAGNOSTICS = [Depends(require("diagnostics")), Depends(unscoped)]
ANALYTICS = [Depends(require("analytics"))]
EXPORT_LIMIT = 10_000

router = APIRouter(prefix="/api/telemetry", responses=ERRORS)


class LatencyStats(BaseModel):
    count: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    max_ms: float


class LatencyOut(BaseModel):
    since: str
    operations: dict[str, LatencyStats]


class UsageOut(BaseModel):
    since: str
    counters: dict[str, int]


class ErrorEventOut(BaseModel):
    at: str
    operation: str
    status: int
    code: str
    request_id: str | None


class ErrorsOut(BaseModel):
    errors: list[ErrorEventOut]


class SearchRowOut(_Out):
    id: str
    created_at: str
    route: str
    agent_id: str | None = Field(None, description="The asking token's agent scope; null otherwise.")
    query: str
    method: str | None
    result_count: int
    top_score: float | None
    no_hits: bool
    duration_ms: float | None


class SearchPageOut(_Out):
    items: list[SearchRowOut]
    total: int
    limit: int
    offset: int


class SearchExportOut(_Out):
    exported_at: str
    count: int
    total: int
    rows: list[SearchRowOut]


@router.get("/latency", response_model=LatencyOut, dependencies=DIAGNOSTICS)
def latency(app: App) -> JSONResponse:
    return JSONResponse({"since": app.telemetry.summary()["since"],
                         "operations": app.telemetry.latency()})


@router.get("/usage", response_model=UsageOut, dependencies=DIAGNOSTICS)
def usage(app: App) -> JSONResponse:
    return JSONResponse({"since": app.telemetry.summary()["since"],
                         "counters": app.telemetry.usage()})


@router.get("/errors", response_model=ErrorsOut, dependencies=DIAGNOSTICS)
def errors(app: App, limit: Annotated[int, Query(ge=1, le=10_000)] = 100) -> JSONResponse:
    return JSONResponse({"errors": app.telemetry.errors(limit)})


@router.get("/search", response_model=SearchPageOut, dependencies=ANALYTICS)
def search_ledger(
    app: App,
    caller: Caller,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    since: str | None = None,
    no_hits: bool | None = None,
) -> JSONResponse:
    return JSONResponse(app.search_ledger(
        agent_id=caller.scope_agent, project=caller.scope_project, since=since,
        no_hits=no_hits, limit=limit, offset=offset,
    ))


@router.get("/search/export", response_model=SearchExportOut, dependencies=ANALYTICS)
def search_export(app: App, caller: Caller, since: str | None = None) -> JSONResponse:
    page = app.search_ledger(
        agent_id=caller.scope_agent, project=caller.scope_project, since=since,
        limit=EXPORT_LIMIT,
    )
    body = {"exported_at": stamp(app.clock), "count": len(page["items"]), "total": page["total"],
            "rows": page["items"]}
    headers = {"Content-Disposition": 'attachment; filename="memory-search-telemetry.json"'}
    return JSONResponse(body, headers=headers)
