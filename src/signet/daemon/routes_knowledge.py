"""The knowledge-graph routes: entities, one entity in detail, pins, communities and their
detection, counts, and applying a graph payload. Each handler is one `app.graph` (or
`app.apply_graph`) call.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import Field

from signet.daemon.auth import require, unscoped
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import MAX_SQL_INT, ErrorOut, GraphBody, _Body

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (400, 404, 409, 503)}

# The graph is not partitioned by project, so scoped tokens are kept out (auth.unscoped).
router = APIRouter(prefix="/api/knowledge", responses=ERRORS, dependencies=[Depends(unscoped)])
READS = [Depends(require("recall"))]
WRITES = [Depends(require("modify"))]


class PinBody(_Body):
    suppress: bool = Field(False, description="Suppress (never focal) instead of pin.")
    weight: float | None = Field(None, gt=0, le=10, description="Weight of paths through it.")
    reason: str | None = Field(None, max_length=500)


class ApplyBody(_Body):
    graph: GraphBody = Field(description="entities, aspects, attributes, dependencies, relations.")
    memory_id: str | None = Field(None, description="The memory the payload describes.")


@router.get("/entities", dependencies=READS)
def entities(
    app: App, actor: CallerActor, q: str | None = None,
    limit: int = Query(50, ge=1, le=1000), offset: int = Query(0, ge=0, le=MAX_SQL_INT),
) -> JSONResponse:
    return JSONResponse(
        app.graph.entities(agent_id=actor.agent_id, search=q, limit=limit, offset=offset)
    )


@router.get("/entities/{ref}", dependencies=READS)
def entity(ref: str, app: App, actor: CallerActor) -> JSONResponse:
    return JSONResponse(app.graph.entity(app.graph.find(ref, actor.agent_id)))


@router.post("/entities/{ref}/pin", dependencies=WRITES)
def pin(ref: str, app: App, actor: CallerActor, body: PinBody | None = None) -> JSONResponse:
    body = body or PinBody()
    return JSONResponse(app.graph.pin(
        app.graph.find(ref, actor.agent_id), suppress=body.suppress, weight=body.weight,
        reason=body.reason, actor=actor,
    ))


@router.delete("/entities/{ref}/pin", dependencies=WRITES)
def unpin(ref: str, app: App, actor: CallerActor) -> JSONResponse:
    return JSONResponse(app.graph.unpin(app.graph.find(ref, actor.agent_id)))


@router.get("/communities", dependencies=READS)
def communities(
    app: App, actor: CallerActor,
    limit: int = Query(100, ge=1, le=1000, description="At most this many, largest first."),
) -> JSONResponse:
    return JSONResponse({"communities": app.graph.communities(actor.agent_id)[:limit]})


@router.post("/communities/detect", dependencies=WRITES)
def detect(app: App, actor: CallerActor) -> JSONResponse:
    return JSONResponse({"communities": app.graph.detect_communities(actor.agent_id)})


@router.get("/stats", dependencies=READS)
def stats(app: App, actor: CallerActor) -> JSONResponse:
    return JSONResponse(app.graph.stats(actor.agent_id))


@router.post("/apply", dependencies=[Depends(require("remember"))])
def apply(body: ApplyBody, app: App, actor: CallerActor) -> JSONResponse:
    return JSONResponse(app.apply_graph(body.graph.payload(), memory_id=body.memory_id, actor=actor))
