"""The skill routes: list (the folders reconciled first, so a hand edit is seen at once), get,
install a local folder or archive (read with the daemon's rights: admin only), delete. Skills are
the workspace's, so scoped tokens are kept out.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import Field

from signet.daemon.auth import require, unscoped
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut, _Body

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 503)
}
router = APIRouter(prefix="/api/skills", responses=ERRORS, dependencies=[Depends(unscoped)])
READS = [Depends(require("recall"))]
ADMIN = [Depends(require("admin"))]


class InstallBody(_Body):
    path: str = Field(max_length=4000, pattern=r"^[^\x00]*\S[^\x00]*$",
                      description="A local skill folder, or a .zip/.tar.gz of one.")
    force: bool = Field(False, description="Replace an installed skill of the same name.")


@router.get("", dependencies=READS)
def list_skills(app: App) -> JSONResponse:
    report = app.reconcile_skills()
    return JSONResponse({"skills": app.list_skills(), "errors": report["errors"]})


@router.get("/{name}", dependencies=READS)
def show_skill(name: str, app: App) -> JSONResponse:
    app.reconcile_skills()
    return JSONResponse(app.show_skill(name))


@router.post("", dependencies=ADMIN)
def install_skill(body: InstallBody, app: App) -> JSONResponse:
    return JSONResponse(app.install_skill(body.path, force=body.force))


@router.delete("/{name}", dependencies=ADMIN)
def remove_skill(name: str, app: App) -> JSONResponse:
    return JSONResponse(app.remove_skill(name))
