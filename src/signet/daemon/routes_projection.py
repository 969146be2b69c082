"""`GET /api/embeddings/projection?dimensions=2|3`: the cached projection of the caller's slice, or
202 with `Retry-After` while it is computed in the background (projection/service.py).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from signet.daemon.auth import Principal, memory_scope, require
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut
from signet.projection.service import Pending

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (400, 401, 403)}
router = APIRouter(prefix="/api/embeddings", responses=ERRORS)
Recalls = Annotated[Principal, Depends(require("recall"))]


@router.get("/projection", responses={202: {"description": "Computing; retry after the hint."}})
def projection(
    app: App, principal: Recalls, dimensions: int = Query(2, ge=2, le=3),
) -> JSONResponse:
    answer = app.projection.get(dimensions, memory_scope(principal))
    if isinstance(answer, Pending):
        return JSONResponse(
            {"status": "computing", "retry_after_ms": answer.retry_after_ms,
             "count": answer.embedding_count},
            status_code=202,
            headers={"Retry-After": str(max(1, math.ceil(answer.retry_after_ms / 1000)))},
        )
    return JSONResponse(answer)
