"""`/health` (up, version, pid) and `/api/status` (the app's status plus pid, port and uptime). A
scoped token's status counts only its slice and leaves out whatever spans every scope (the
embeddings audit, maintenance problems, telemetry, the model's state, host paths).
"""

from __future__ import annotations

import os
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from signet.app import SignetApp
from signet.daemon.auth import require
from signet.daemon.dependencies import App
from signet.daemon.schemas import HealthOut, StatusOut
from signet.daemon.tokens import Principal
from signet.types import MemoryScope
from signet.version import __version__

router = APIRouter()


@router.get("/health", response_model=HealthOut)
async def health() -> JSONResponse:
    # async on purpose: answers at once even when every worker thread is busy.
    return JSONResponse({"status": "ok", "version": __version__, "pid": os.getpid()})


# What a scoped token's status keeps: the daemon's own state, nothing counted over every scope.
SCOPED_FIELDS = ("backend", "embedder", "degraded", "pipeline", "not_on_backend")


@router.get("/api/status", response_model=StatusOut)
def status(
    request: Request, app: App, principal: Annotated[Principal, Depends(require("diagnostics"))],
) -> JSONResponse:
    started: float = request.app.state.started_at
    body = _scoped_status(app, principal) if principal.scoped else app.status()
    body["daemon"] = {
        "pid": os.getpid(),
        "port": app.config.port,
        "started_at": request.app.state.started_at_iso,
        "uptime_s": round(time.time() - started, 3),
    }
    if not principal.scoped:
        body["telemetry"] = app.telemetry.summary()
    return JSONResponse(body)


def _scoped_status(app: SignetApp, principal: Principal) -> dict[str, Any]:
    scope = MemoryScope(agent_id=principal.scope_agent, project=principal.scope_project)
    whole = app.status()
    body = {name: whole[name] for name in SCOPED_FIELDS if name in whole}
    embedder = body.get("embedder")
    if isinstance(embedder, dict):
        # Whether the model is loaded says whether anyone, in any scope, embedded anything yet;
        # the breaker's failure count and last error count every caller's recalls. Its state
        # stays: the caller's own recalls run without the semantic channel while it is open.
        body["embedder"] = {k: v for k, v in embedder.items() if k not in ("loaded", "health")}
        health = embedder.get("health")
        if isinstance(health, dict):
            body["embedder"]["health"] = {k: v for k, v in health.items()
                                          if k not in ("consecutive_failures", "last_error")}
    body["memories"] = app.list(limit=1, scope=scope).total
    return body
