"""The lineage routes: thread heads, the lineage DAG, re-indexing artifacts.

- `GET /api/threads` -> {items: [{thread, project, summaries, arcs, epochs, last}]}
- `GET /api/threads/{thread}` -> the thread's head (newest epoch, arcs and summaries after it)
- `GET /api/lineage/{id}` -> a memory, session or artifact with its lineage up and down
- `POST /api/artifacts/reindex` -> rebuild memory_artifacts from the markdown files
- `POST /api/memory/synthesize` -> render MEMORY.md (the global head) now
Each handler makes one app call with the caller's scope; errors map in daemon/errors.py.
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
