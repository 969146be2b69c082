"""The connector routes: folders of notes kept in sync as documents (connectors/folder.py). Creating
one reads local files, so it needs an unscoped token; connectors imported from a bundle arrive
disabled and an admin enables them on this host. A scoped token sees only its slice's connectors.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from signet.daemon.auth import Principal, memory_scope, require
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import ErrorOut, _Body
from signet.errors import Forbidden

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 503)
}
router = APIRouter(prefix="/api/connectors", responses=ERRORS)
Connectors = Annotated[Principal, Depends(require("connectors"))]


class ConnectorBody(_Body):
    path: str = Field(max_length=4000, pattern=r"^[^\x00]*\S[^\x00]*$",
                      description="The folder to keep in sync.")
    name: str | None = Field(None, max_length=200)
    project: str | None = None


@router.get("")
def list_connectors(app: App, principal: Connectors) -> JSONResponse:
    return JSONResponse({"connectors": app.connectors.list(memory_scope(principal))})


@router.post("")
def add_connector(
    body: ConnectorBody, app: App, actor: CallerActor, principal: Connectors
) -> JSONResponse:
    if not principal.allows("admin"):  # the daemon reads the folder with its own rights
        raise Forbidden("connecting a local folder needs the admin permission")
    return JSONResponse(app.connectors.add(
        body.path, name=body.name, project=body.project, actor=actor,
        scope=memory_scope(principal),
    ))


@router.get("/{connector_id}")
def get_connector(connector_id: str, app: App, principal: Connectors) -> JSONResponse:
    return JSONResponse(app.connectors.get(connector_id, memory_scope(principal)))


@router.post("/{connector_id}/sync")
def sync_connector(
    connector_id: str, request: Request, app: App, principal: Connectors
) -> JSONResponse:
    report = app.connectors.sync(connector_id, memory_scope(principal))
    workers = getattr(request.app.state, "workers", None)
    if workers is not None:
        workers.nudge()  # index what the sync queued now, not after the idle wait
    return JSONResponse(report.to_dict())


@router.post("/{connector_id}/enable")
def enable_connector(connector_id: str, app: App, principal: Connectors) -> JSONResponse:
    if not principal.allows("admin"):  # the daemon will read the folder with its own rights
        raise Forbidden("enabling a folder connector needs the admin permission")
    return JSONResponse(app.connectors.enable(connector_id, memory_scope(principal)))


@router.delete("/{connector_id}")
def remove_connector(
    connector_id: str, app: App, actor: CallerActor, principal: Connectors
) -> JSONResponse:
    return JSONResponse(app.connectors.remove(connector_id, memory_scope(principal), actor))
