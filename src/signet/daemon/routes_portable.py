"""`POST /api/import`: a Signet export, a mem0 JSON export or a folder of markdown notes, read from
the daemon's own disk (admin tokens only). An import spans the whole store, so scoped tokens are
kept out.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import Field

from signet.daemon.auth import require, unscoped
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut, _Body
from signet.portable.imports import import_from

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 503)  # 404: no such path
}
router = APIRouter(prefix="/api", responses=ERRORS,
                   dependencies=[Depends(require("admin")), Depends(unscoped)])


class ImportBody(_Body):
    path: str = Field(max_length=4000, pattern=r"^[^\x00]*\S[^\x00]*$",
                      description="The export folder, mem0 JSON file or markdown folder.")
    source: Literal["signet", "mem0", "markdown"] = Field("signet", description="Its format.")
    project: str | None = Field(None, description="Project for memories from mem0 or markdown.")


@router.post("/import")
def import_(body: ImportBody, app: App) -> JSONResponse:
    return JSONResponse(import_from(app, body.path, body.source, project=body.project))
