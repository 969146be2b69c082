"""`/api/hooks/*`: the harness hooks over HTTP, so a remote hook or an HTTP plugin (OpenCode's) gets
what `signet hook` prints locally.

The body is a `HookRequest` (injection/request.py). Hooks write (ledger, captures, queue), so they
need `remember`, and read across projects, so scoped tokens are refused. A `transcript_path` is read
with the daemon's rights: any path for an admin token, otherwise only inside the harness's
transcript folders. The injection ledger is kept per token.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field

from signet import injection
from signet.daemon.auth import Principal, require, unscoped
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut, _Body
from signet.injection import HookRequest

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 409, 413, 422, 429, 503)
}
Event = Literal["session-start", "user-prompt-submit", "pre-compaction", "session-end"]

router = APIRouter(prefix="/api/hooks", responses=ERRORS)


class HookBody(_Body):
    # A harness sends more than we read (hook_event_name, permission_mode, model, ...).
    model_config = ConfigDict(extra="ignore")

    harness: Literal["claude-code", "codex", "opencode", "cursor", "generic"] = "generic"
    session_id: str | None = Field(None, max_length=4096)
    cwd: str | None = Field(None, max_length=4096, description="The session's working directory.")
    project: str | None = Field(None, max_length=4096, description="Default: cwd's last folder.")
    prompt: str | None = Field(None, max_length=200_000)
    transcript_path: str | None = Field(None, max_length=4096)
    transcript: str | None = Field(None, max_length=5_000_000, description="Inline transcript.")
    source: str | None = Field(None, max_length=4096, description="startup, resume, clear, compact.")
    reason: str | None = Field(None, max_length=4096)


@router.post("/{event}", dependencies=[Depends(unscoped)])
def run_hook(
    event: Event, body: HookBody, app: App,
    principal: Annotated[Principal, Depends(require("remember"))],
) -> JSONResponse:
    request = HookRequest.parse(body.model_dump(exclude_none=True))
    result = injection.handle(app, event, request.for_caller(principal.token_id),
                              confined=not principal.allows("admin"))
    return JSONResponse(result.to_dict())
