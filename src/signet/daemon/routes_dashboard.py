"""The dashboard's session: the one-time login link, who is logged in, and logout.

`GET /app/login?code=...` puts a one-day admin token in an HttpOnly, SameSite=Strict cookie; `GET
/api/dashboard/session` gives the page its CSRF token, which every state-changing call sends in
`X-Signet-CSRF`. The cookie carries the token itself, so signature, expiry and revocation apply as
for any client and there is no second session store.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse

from signet.daemon.auth import Caller, require
from signet.daemon.guards import SESSION_COOKIE
from signet.daemon.schemas import ErrorOut
from signet.daemon.tokens import DASHBOARD_TOKEN_TTL, TokenAuthority
from signet.errors import Conflict, Unauthorized

__all__ = ["router"]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 409)
}
HOME = "/app/memories"

router = APIRouter(responses=ERRORS)


@router.get("/app/login", include_in_schema=False)
def login(request: Request, code: str = Query("", max_length=200)) -> RedirectResponse:
    authority: TokenAuthority = request.app.state.tokens
    try:
        issued = authority.exchange(code)
    except Unauthorized:
        return RedirectResponse("/app/welcome?login=failed", status_code=303,
                                headers={"Cache-Control": "no-store"})
    reply = RedirectResponse(HOME, status_code=303, headers={"Cache-Control": "no-store"})
    reply.set_cookie(
        SESSION_COOKIE, issued.token, max_age=int(DASHBOARD_TOKEN_TTL.total_seconds()),
        path="/", httponly=True, samesite="strict",
    )
    return reply


@router.get("/api/dashboard/session", dependencies=[Depends(require("recall"))])
def session(request: Request, caller: Caller) -> JSONResponse:
    return JSONResponse({
        "token_id": caller.token_id, "name": caller.name, "role": caller.role,
        "permissions": sorted(caller.permissions), "scoped": caller.scoped,
        "csrf": getattr(request.state, "csrf", None),
    }, headers={"Cache-Control": "no-store"})


@router.post("/api/dashboard/logout", dependencies=[Depends(require("recall"))])
def logout(request: Request, caller: Caller) -> JSONResponse:
    """End the session: its token is revoked, so a copied cookie is worthless too. Only a
    cookie session logs out here (a bearer token is revoked with `signet token revoke`)."""
    if getattr(request.state, "csrf", None) is None:
        raise Conflict("only a dashboard session (cookie) logs out; revoke a token with"
                       " `signet token revoke`", code="not_a_session")
    authority: TokenAuthority = request.app.state.tokens
    authority.revoke(caller.token_id)
    reply = JSONResponse({"logged_out": True})
    reply.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return reply

