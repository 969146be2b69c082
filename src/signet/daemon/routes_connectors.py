"""The connector routes: folders of notes kept in sync as documents (connectors/folder.py).

- `GET /api/connectors` -> {connectors: [{id, provider, display_name, config, status,
  last_sync_at, last_error, files, documents: {status: count}, ...}]}: each one's health;
- `POST /api/connectors` body {path, name?, project?} -> the new folder connector (unscoped
  tokens only: it reads local files);
- `GET /api/connectors/{id}`; `POST /api/connectors/{id}/sync` -> what the sync added,
  changed, removed and skipped (the document worker indexes them next);
- `POST /api/connectors/{id}/enable` -> a connector imported from a bundle (they arrive
  disabled, `enabled: false`) enabled on this host (admin tokens only);
- `DELETE /api/connectors/{id}` -> removes it and its documents (chunks forgotten).
A scoped token sees, syncs and removes only the connectors of its own slice.
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
