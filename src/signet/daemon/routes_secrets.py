"""The secret store over HTTP: admin, unscoped tokens only, and no route ever returns a value.
`secret:NAME` config values are resolved at start, so a change takes effect at the next restart.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from signet.clock import stamp
from signet.daemon.auth import require, unscoped
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut, _Body
from signet.errors import NotFound
from signet.secret_store import MAX_VALUE_BYTES, NAME_PATTERN

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 422, 429)
}
router = APIRouter(
    prefix="/api/secrets", responses=ERRORS,
    dependencies=[Depends(unscoped), Depends(require("admin"))],
)
# The name is checked by the secret store (400 naming the rule); the schema states the rule.
SecretName = Annotated[str, Path(
    json_schema_extra={"pattern": NAME_PATTERN},
    description="Letters, digits, '_', '.', '-'; a letter or '_' first; at most 128.",
)]


class SecretBody(_Body):
    value: str = Field(min_length=1, max_length=MAX_VALUE_BYTES, description="Never echoed back.")


class SecretOut(BaseModel):
    name: str
    created_at: str
    updated_at: str


class SecretsOut(BaseModel):
    secrets: list[SecretOut]


class DeletedOut(BaseModel):
    deleted: str


@router.get("", response_model=SecretsOut)
def list_secrets(app: App) -> JSONResponse:
    return JSONResponse({"secrets": [i.to_dict() for i in app.secret_store().names()]})


@router.put("/{name}", response_model=SecretOut)
def put_secret(app: App, name: SecretName, body: SecretBody) -> JSONResponse:
    return JSONResponse(app.secret_store().set(name, body.value, stamp(app.clock)).to_dict())


@router.delete("/{name}", response_model=DeletedOut)
def delete_secret(app: App, name: SecretName) -> JSONResponse:
    if not app.secret_store().delete(name):
        raise NotFound(f"no secret named {name!r}")
    return JSONResponse({"deleted": name})
