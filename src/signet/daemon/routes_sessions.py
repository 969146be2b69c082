"""The session routes: transcripts in (idempotent; a `path` on the daemon's host needs admin;
`ended` closes the session and queues its summary), sessions listed, searched, read and forgotten
within the caller's scope.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field

from signet.daemon.auth import Principal, memory_scope, require
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import MAX_SQL_INT, NOT_BLANK, ErrorOut, _Body, optional
from signet.errors import Forbidden

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 403, 404, 409, 413, 503)
}
router = APIRouter(prefix="/api/sessions", responses=ERRORS)
Remembers = Annotated[Principal, Depends(require("remember"))]
Recalls = Annotated[Principal, Depends(require("recall"))]
# A session id names a session: not blank, at most 200 characters (sessions/importer.py).
SessionId = Annotated[str, Path(max_length=200, pattern=NOT_BLANK)]


class TranscriptBody(_Body):
    """Exactly one of path or content."""

    model_config = ConfigDict(json_schema_extra={
        "oneOf": [{"required": ["path"]}, {"required": ["content"]}],
    })
    harness: Literal["claude-code", "codex", "opencode", "cursor", "generic"]
    path: str = optional(pattern=NOT_BLANK,
                         description="A transcript file the daemon reads (admin tokens only).")
    content: str = optional(pattern=NOT_BLANK, description="The transcript's text.")
    project: str = optional(max_length=500, pattern=NOT_BLANK)
    ended: bool = Field(True, description="The session has ended: close it and queue its summary.")


@router.post("/{session_id}/transcript")
def import_transcript(
    session_id: SessionId, body: TranscriptBody, app: App, actor: CallerActor, principal: Remembers
) -> JSONResponse:
    if body.path is not None and not principal.allows("admin"):
        # The daemon reads the file with its own rights: refused before anything is looked at.
        raise Forbidden("importing a transcript by path needs the admin permission; send the"
                        " content instead")
    result = app.import_transcript(
        scope=memory_scope(principal), actor=actor, session_id=session_id,
        **body.model_dump(exclude_none=True),
    )
    return JSONResponse(result, status_code=201 if result["status"] == "created" else 200)


@router.get("")
def sessions(
    app: App, principal: Recalls, project: str | None = None, harness: str | None = None,
    limit: int = Query(50, ge=1, le=1000), offset: int = Query(0, ge=0, le=MAX_SQL_INT),
) -> JSONResponse:
    return JSONResponse(app.session_list(
        scope=memory_scope(principal), project=project, harness=harness, limit=limit,
        offset=offset,
    ))


@router.get("/search")
def search(
    app: App, principal: Recalls, q: str = Query(min_length=1), project: str | None = None,
    limit: int = Query(10, ge=1, le=200),
) -> JSONResponse:
    return JSONResponse(
        app.session_search(q, scope=memory_scope(principal), project=project, limit=limit)
    )


@router.get("/{session_id}")
def session(
    session_id: str, app: App, principal: Recalls, project: str | None = None
) -> JSONResponse:
    return JSONResponse(app.session_show(session_id, scope=memory_scope(principal), project=project))


@router.delete("/{session_id}")
def forget(
    session_id: str, app: App, principal: Annotated[Principal, Depends(require("forget"))],
    project: str | None = None, reason: str | None = Query(None, max_length=500),
) -> JSONResponse:
    return JSONResponse(app.session_forget(
        session_id, scope=memory_scope(principal), project=project, reason=reason
    ))
