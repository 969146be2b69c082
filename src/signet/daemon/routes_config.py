"""Configuration and identity routes: the effective configuration without secrets (`diagnostics`),
and reading (`recall`) or writing (`admin`) the identity files. MEMORY.md is for unscoped tokens
only, being rendered from every project; names outside the five identity files are refused before
any path is built.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from signet.daemon.auth import Principal, require, unscoped
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut, _Body, _Out
from signet.errors import Forbidden
from signet.identity import MAX_IDENTITY_BYTES

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 413, 429, 503)
}

IdentityName = Literal["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "MEMORY.md"]

router = APIRouter(prefix="/api", responses=ERRORS)


class ConfigOut(_Out):
    workspace: str
    port: int
    bind: str
    warnings: list[str]


class IdentityBody(_Body):
    content: str = Field(description=f"The whole file, at most {MAX_IDENTITY_BYTES} bytes of UTF-8.")


class IdentityOut(BaseModel):
    name: str
    content: str
    bytes: int
    updated_at: str


@router.get("/config", response_model=ConfigOut,
            dependencies=[Depends(require("diagnostics")), Depends(unscoped)])
def config(app: App) -> JSONResponse:
    return JSONResponse(app.effective_config())


@router.get("/identity/{name}", response_model=IdentityOut)
def read_identity(
    name: IdentityName, app: App, principal: Annotated[Principal, Depends(require("recall"))]
) -> JSONResponse:
    if name == "MEMORY.md" and principal.scoped:
        # The global head is rendered from the owner's memories of every project.
        raise Forbidden("MEMORY.md spans every project; a scoped token cannot read it")
    return JSONResponse(app.identity_file(name))


@router.put("/identity/{name}", response_model=IdentityOut,
            dependencies=[Depends(require("admin")), Depends(unscoped)])
def write_identity(name: IdentityName, body: IdentityBody, app: App) -> JSONResponse:
    return JSONResponse(app.write_identity_file(name, body.content))
