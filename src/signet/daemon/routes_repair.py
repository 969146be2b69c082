"""Repair actions, maintenance runs, retention, and the embeddings' state. Reading needs
`diagnostics`, changing anything `admin`; the work is in signet/maintenance.py.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from signet.app import SignetApp
from signet.daemon.auth import require, unscoped
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut, _Body, _Out, integer

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 409, 429, 503)
}
ADMIN = [Depends(require("admin"))]
DIAGNOSTICS = [Depends(require("diagnostics"))]

# Repair acts on the whole store: scoped tokens are kept out (auth.unscoped).
router = APIRouter(prefix="/api", responses=ERRORS, dependencies=[Depends(unscoped)])


def _answer(method: str, path: str, model: type[BaseModel], needs: list[Any], name: str) -> None:
    """A route answering with the app's method `name`, called with nothing from the request; the
    route (and its OpenAPI operation) is named after the method."""
    if not callable(getattr(SignetApp, name, None)):  # a misspelt name fails at import
        raise AttributeError(f"SignetApp has no method {name!r}")

    def endpoint(app: App) -> JSONResponse:
        return JSONResponse(getattr(app, name)())

    router.add_api_route(path, endpoint, methods=[method], response_model=model,
                         dependencies=needs, name=name)


class RequeueBody(_Body):
    job_ids: list[str] | None = Field(None, max_length=10_000, description="Default: every dead job.")


class ReleaseBody(_Body):
    older_than_ms: integer(ge=0, le=10**12) | None = Field(  # type: ignore[valid-type]
        None, description="Lease age; default the configured lease timeout."
    )


class RequeueOut(BaseModel):
    requeued: int


class ReleaseOut(BaseModel):
    released: int
    older_than_ms: int


class FtsCheckOut(_Out):
    ok: bool
    integrity: bool
    rows: dict[str, int]


class FtsRebuildOut(_Out):
    rebuilt: list[str]
    ms: float
    check: FtsCheckOut


class ReEmbedOut(BaseModel):
    missing: int
    enqueued: int
    already_queued: int
    model: str


class EmbeddingsStatusOut(_Out):
    provider: str
    model: str | None
    dimensions: int | None
    audit: dict[str, int] | None
    jobs: dict[str, int]


class EmbeddingsHealthOut(_Out):
    ok: bool
    provider: str
    model: str | None
    latency_ms: float | None
    detail: str | None = None
    error: str | None = None
    dimensions: int | None = None


@router.post("/repair/requeue-dead", response_model=RequeueOut, dependencies=ADMIN)
def requeue_dead(app: App, body: Annotated[RequeueBody | None, Body()] = None) -> JSONResponse:
    job_ids = body.job_ids if body else None
    return JSONResponse({"requeued": app.requeue_dead_jobs(job_ids)})


@router.post("/repair/release-stale-leases", response_model=ReleaseOut, dependencies=ADMIN)
def release_stale_leases(
    app: App, body: Annotated[ReleaseBody | None, Body()] = None
) -> JSONResponse:
    return JSONResponse(app.release_stale_leases(body.older_than_ms if body else None))


_answer("GET", "/repair/fts-check", FtsCheckOut, DIAGNOSTICS, "fts_check")
_answer("POST", "/repair/fts-rebuild", FtsRebuildOut, ADMIN, "fts_rebuild")
_answer("POST", "/repair/re-embed", ReEmbedOut, ADMIN, "re_embed")


class MaintenanceRunBody(_Body):
    execute: bool = Field(False, description="Repair what the checks find (default: only report).")


class _MaintenanceChecks(_Out):
    """What a maintenance report and a run both answer: the checks and what they found."""

    mode: str
    frozen: bool
    ok: bool
    problems: list[str]
    checks: dict[str, dict[str, Any]]


class MaintenanceReportOut(_MaintenanceChecks):
    enabled: bool
    runs: list[dict[str, Any]]
    recent_actions: list[dict[str, Any]]


class MaintenanceRunOut(_MaintenanceChecks):
    id: str | None = Field(description="The recorded run; null when mutationsFrozen (not stored).")
    actions: list[dict[str, Any]]
    skipped: list[str]


_answer("GET", "/repair/report", MaintenanceReportOut, DIAGNOSTICS, "maintenance_report")


@router.post("/repair/run", response_model=MaintenanceRunOut, dependencies=ADMIN)
def maintenance_run(
    app: App, body: Annotated[MaintenanceRunBody | None, Body()] = None
) -> JSONResponse:
    return JSONResponse(app.run_maintenance(execute=body.execute if body else False))


class RetentionRunBody(_Body):
    dry_run: bool = Field(False, description="Count what a sweep would purge; change nothing.")


@router.post("/retention/run", dependencies=ADMIN)
def retention_run(
    app: App, body: Annotated[RetentionRunBody | None, Body()] = None
) -> JSONResponse:
    return JSONResponse(app.run_retention(dry_run=body.dry_run if body else False).to_dict())


_answer("GET", "/embeddings/status", EmbeddingsStatusOut, DIAGNOSTICS, "embeddings_status")
_answer("GET", "/embeddings/health", EmbeddingsHealthOut, DIAGNOSTICS, "embeddings_health")
