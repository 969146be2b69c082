"""Routes about the daemon itself: `/health` (is it up, which version, which process) and
`/api/status` (the app's status plus the daemon's pid, port and uptime)."""

from __future__ import annotations

import os
import time

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

import signet
from signet.daemon.auth import require
from signet.daemon.dependencies import App
from signet.daemon.schemas import HealthOut, StatusOut

router = APIRouter()


@router.get("/health", response_model=HealthOut)
async def health() -> JSONResponse:
    # async on purpose: answers at once even when every worker thread is busy.
    return JSONResponse({"status": "ok", "version": signet.__version__, "pid": os.getpid()})


@router.get("/api/status", response_model=StatusOut, dependencies=[Depends(require("diagnostics"))])
def status(request: Request, app: App) -> JSONResponse:
    started: float = request.app.state.started_at
    body = app.status()
    body["daemon"] = {
        "pid": os.getpid(),
        "port": app.config.port,
        "started_at": request.app.state.started_at_iso,
        "uptime_s": round(time.time() - started, 3),
    }
    body["telemetry"] = app.telemetry.summary()
    return JSONResponse(body)
