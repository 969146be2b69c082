"""The lineage routes: thread heads, a record's lineage, re-indexing artifacts and rendering
MEMORY.md, each one app call within the caller's scope.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from signet.daemon.auth import Principal, memory_scope, require, unscoped
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import ErrorOut

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (400, 403, 404, 503)}
router = APIRouter(prefix="/api", responses=ERRORS)
Recalls = Annotated[Principal, Depends(require("recall"))]


@router.get("/threads")
def threads(app: App, principal: Recalls) -> JSONResponse:
    return JSONResponse(app.threads(scope=memory_scope(principal)))


@router.get("/threads/{thread}")
def thread(thread: str, app: App, actor: CallerActor, principal: Recalls) -> JSONResponse:
    return JSONResponse(app.thread(thread, scope=memory_scope(principal), actor=actor))


@router.get("/lineage/{ref}")
def lineage(ref: str, app: App, principal: Recalls) -> JSONResponse:
    return JSONResponse(app.lineage(ref, scope=memory_scope(principal)))


@router.post("/artifacts/reindex", dependencies=[Depends(require("admin")), Depends(unscoped)])
def reindex(app: App) -> JSONResponse:
    return JSONResponse(app.reindex_artifacts())


@router.post("/memory/synthesize", dependencies=[Depends(require("admin")), Depends(unscoped)])
def synthesize(app: App) -> JSONResponse:
    return JSONResponse(app.synthesize_memory_md())
