"""`POST /api/memory/feedback`: an agent's verdict on a memory it used (MCP memory_feedback); the
values are checked by `MemoryService.feedback`, as for every adapter.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field

from signet.daemon.auth import Principal, memory_scope, require
from signet.daemon.dependencies import App, CallerActor
from signet.daemon.schemas import NOT_BLANK, ErrorOut, _Body, config_bound
from signet.types import FEEDBACK_TYPES

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (400, 404, 503)}

router = APIRouter(prefix="/api", responses=ERRORS)


class FeedbackBody(_Body):
    """A correction carries its correction_text (not blank); the others may."""

    model_config = ConfigDict(json_schema_extra={
        "if": {"properties": {"feedback": {"const": "correction"}}},
        "then": {"required": ["correction_text"],
                 "properties": {"correction_text": {"type": "string", "pattern": NOT_BLANK}}},
    })
    memory_id: str
    feedback: Literal[FEEDBACK_TYPES]  # type: ignore[valid-type]
    correction_text: str | None = Field(
        None, description="What is right; needed for a correction.",
        json_schema_extra=config_bound("content"),
    )
    session_id: str | None = Field(None, description="Default: the X-Signet-Session header.")


@router.post("/memory/feedback")
def feedback(
    body: FeedbackBody, app: App, actor: CallerActor,
    principal: Annotated[Principal, Depends(require("remember"))],
) -> JSONResponse:
    record = app.feedback(
        body.memory_id, body.feedback, actor=actor, correction_text=body.correction_text,
        session_id=body.session_id, scope=memory_scope(principal),
    )
    return JSONResponse(record.to_dict())
