"""The session routes: transcripts in, sessions out (signet/sessions).

- `POST /api/sessions/{session_id}/transcript` body {harness, path | content, project?, ended?}:
  import a harness transcript (claude-code, codex, opencode, generic); idempotent, a longer
  version appends. `ended` (default true) closes the session and queues its summary.
- `GET /api/sessions?project=&harness=&limit=&offset=` -> {items, total, limit, offset}
- `GET /api/sessions/search?q=&project=&limit=` -> {items: [session + score, snippet], query}
- `GET /api/sessions/{session_id}?project=` -> the session with its cleaned messages
- `DELETE /api/sessions/{session_id}?project=&reason=`: remove it for privacy (tombstoned)
Each handler makes one app call with the caller's scope; errors map in daemon/errors.py.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import Field

from signet.daemon.auth import Principal, memory_scope, require
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import ErrorOut, _Body

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 403, 404, 409, 413, 503)
}
router = APIRouter(prefix="/api/sessions", responses=ERRORS)
Remembers = Annotated[Principal, Depends(require("remember"))]
Recalls = Annotated[Principal, Depends(require("recall"))]


class TranscriptBody(_Body):
    harness: str = Field(description="claude-code, codex, opencode or generic.")
    path: str | None = Field(None, description="A transcript file the daemon reads (unscoped tokens).")
    content: str | None = Field(None, description="The transcript's text.")
    project: str | None = Field(None, max_length=500)
    ended: bool = Field(True, description="The session has ended: close it and queue its summary.")


@router.post("/{session_id}/transcript")
def import_transcript(
    session_id: str, body: TranscriptBody, app: App, actor: CallerActor, principal: Remembers
) -> JSONResponse:
    result = app.import_transcript(
        scope=memory_scope(principal), actor=actor, session_id=session_id,
        **body.model_dump(exclude_none=True),
    )
    return JSONResponse(result, status_code=201 if result["status"] == "created" else 200)


@router.get("")
def sessions(
    app: App, principal: Recalls, project: str | None = None, harness: str | None = None,
    limit: int = Query(50, ge=1, le=1000), offset: int = Query(0, ge=0),
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
