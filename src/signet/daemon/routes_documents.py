"""The document routes: add (text, a URL fetched by the worker when documents.url_fetch_enabled, or
a local path for admin tokens), list, get with its chunks, delete. Everything is within the
token's scope; another scope's document is 404.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field

from signet.daemon.auth import Principal, memory_scope, require
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import MAX_SQL_INT, NOT_BLANK, ErrorOut, _Body, optional
from signet.documents.service import STATUSES
from signet.errors import Forbidden, InvalidInput

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413, 503)
}
router = APIRouter(prefix="/api/documents", responses=ERRORS)
Documents = Annotated[Principal, Depends(require("documents"))]


class DocumentBody(_Body):
    """Exactly one of content, url or path."""

    model_config = ConfigDict(json_schema_extra={
        "oneOf": [{"required": ["content"]}, {"required": ["url"]}, {"required": ["path"]}],
    })
    content: str = optional(pattern=NOT_BLANK, description="The document's text (markdown or plain).")
    # Not blank, and no more: the fetcher's own checks name the problem (403 for a scheme
    # other than http(s), 400 for a URL that does not parse), and 403 while
    # documents.url_fetch_enabled is off, whatever the URL.
    url: str = optional(max_length=4000, pattern=NOT_BLANK, description="An http(s) URL to fetch.")
    path: str = optional(max_length=4000, pattern=r"^[^\x00]*\S[^\x00]*$",
                         description="A local file (unscoped tokens).")
    title: str | None = Field(None, max_length=500)
    project: str | None = None


@router.post("", status_code=202)
def ingest(
    body: DocumentBody, request: Request, app: App, actor: CallerActor, principal: Documents
) -> JSONResponse:
    given = [name for name in ("content", "url", "path") if getattr(body, name) is not None]
    if len(given) != 1:
        raise InvalidInput("send exactly one of content, url or path")
    scope = memory_scope(principal)
    docs, title, project = app.documents, body.title, body.project
    if body.content is not None:
        registered = docs.ingest_text(
            body.content, title=title, actor=actor, project=project, scope=scope
        )
    elif body.url is not None:
        registered = docs.ingest_url(body.url, title=title, actor=actor, project=project, scope=scope)
    else:
        _local_files_allowed(principal)
        registered = docs.ingest_file(body.path, title=title, actor=actor, project=project, scope=scope)
    workers = getattr(request.app.state, "workers", None)
    if workers is not None and registered.outcome != "unchanged":
        workers.nudge()  # start extracting now, not after the workers' idle wait
    return JSONResponse(registered.to_dict(),
                        status_code=200 if registered.outcome == "unchanged" else 202)


def _local_files_allowed(principal: Principal) -> None:
    """The daemon reads a named file with its own rights: only an admin token may ask."""
    if not principal.allows("admin"):
        raise Forbidden("ingesting a local file by path needs the admin permission; send the"
                        " content instead")


@router.get("")
def list_documents(
    app: App, principal: Documents, status: Literal[STATUSES] | None = None,  # type: ignore[valid-type]
    limit: int = Query(50, ge=1, le=1000), offset: int = Query(0, ge=0, le=MAX_SQL_INT),
) -> JSONResponse:
    return JSONResponse(app.documents.list(memory_scope(principal), status=status, limit=limit,
                                           offset=offset))


@router.get("/{document_id}")
def get_document(document_id: str, app: App, principal: Documents) -> JSONResponse:
    return JSONResponse(app.documents.get(document_id, memory_scope(principal)))


@router.delete("/{document_id}")
def delete_document(
    document_id: str, app: App, actor: CallerActor, principal: Documents
) -> JSONResponse:
    return JSONResponse(app.documents.delete(document_id, actor=actor,
                                             scope=memory_scope(principal)))
