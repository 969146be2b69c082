"""The pipeline routes: its status, its jobs, and pausing, resuming or nudging its workers. A server
built by `create_app` alone (tests, tools) has no workers: the status says `running: false` and
the controls answer 409 `no_workers`.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from signet.daemon.auth import require, unscoped
from signet.daemon.background import BackgroundWorkers
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut, _Out
from signet.errors import Conflict
from signet.types import JOB_STATUSES, JOB_TYPES

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (401, 403, 409, 429)}

# The queue spans every agent and project: scoped tokens are kept out (auth.unscoped).
router = APIRouter(prefix="/api/pipeline", responses=ERRORS, dependencies=[Depends(unscoped)])


class WorkersOut(_Out):
    running: bool
    paused: bool
    concurrency: int
    workers: dict[str, dict[str, Any]]


class PipelineStatusOut(_Out):
    enabled: bool
    shadow_mode: bool
    mutations_frozen: bool
    llm: dict[str, Any] | None
    queue: dict[str, dict[str, int]]
    last_errors: list[dict[str, Any]]
    workers: WorkersOut


NOT_RUNNING: dict[str, Any] = {"running": False, "paused": False, "concurrency": 0, "workers": {}}


@router.get("/status", response_model=PipelineStatusOut,
            dependencies=[Depends(require("diagnostics"))])
def status(request: Request, app: App) -> JSONResponse:
    workers = _workers(request)
    state = workers.status() if workers else NOT_RUNNING
    return JSONResponse({**app.pipeline_status(), "workers": state})


@router.get("/jobs", dependencies=[Depends(require("diagnostics"))],
            responses={400: {"model": ErrorOut}})
def jobs(
    app: App, status: Literal[JOB_STATUSES] | None = None,  # type: ignore[valid-type]
    type: Literal[JOB_TYPES] | None = None,  # type: ignore[valid-type]
    limit: int = Query(50, ge=1, le=500), offset: int = Query(0, ge=0, le=10**9),
) -> JSONResponse:
    found = app.jobs(status=status, job_type=type, limit=limit, offset=offset)
    return JSONResponse({"items": [j.to_dict() for j in found], "limit": limit, "offset": offset,
                         "depths": app.job_depths()})


@router.get("/jobs/{job_id}", dependencies=[Depends(require("diagnostics"))],
            responses={404: {"model": ErrorOut}})
def job(job_id: str, app: App) -> JSONResponse:
    return JSONResponse(app.job(job_id).to_dict())


@router.post("/pause", response_model=WorkersOut, dependencies=[Depends(require("admin"))])
def pause(request: Request) -> JSONResponse:
    workers = _running(request)
    workers.pause()
    return JSONResponse(workers.status())


@router.post("/resume", response_model=WorkersOut, dependencies=[Depends(require("admin"))])
def resume(request: Request) -> JSONResponse:
    workers = _running(request)
    workers.resume()
    return JSONResponse(workers.status())


@router.post("/nudge", response_model=WorkersOut, dependencies=[Depends(require("admin"))])
def nudge(request: Request) -> JSONResponse:
    workers = _running(request)
    workers.nudge()
    return JSONResponse(workers.status())


def _workers(request: Request) -> BackgroundWorkers | None:
    workers = getattr(request.app.state, "workers", None)
    return workers if isinstance(workers, BackgroundWorkers) else None


def _running(request: Request) -> BackgroundWorkers:
    workers = _workers(request)
    if workers is None:
        raise Conflict("this server runs no pipeline workers", code="no_workers")
    return workers
