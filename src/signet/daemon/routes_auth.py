"""`/auth/login?code=...`: trade a one-time login code (`signet token login-link`, five minutes) for
a one-day admin token. Public, as the code is the credential; no cookie is set, so no other site
can make a browser send it (docs/security.md).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from signet.daemon.schemas import ErrorOut, _Body
from signet.daemon.tokens import TokenAuthority

__all__ = ["router"]

# 429: each request spends the unauthenticated rate limit (guards.Authenticate).
router = APIRouter(responses={code: {"model": ErrorOut} for code in (400, 401, 429, 503)})


@router.get("/auth/login")
def login(request: Request, code: str) -> JSONResponse:
    return _exchange(request, code)


class LoginBody(_Body):
    code: str = Field(max_length=200, description="The code from `signet token login-link`.")


@router.post("/auth/login")
def login_post(request: Request, body: LoginBody) -> JSONResponse:
    """The same exchange, with the code in a JSON body `{"code": ...}` (kept out of URLs and
    their logs; GET takes it in the query for the link)."""
    return _exchange(request, body.code)


def _exchange(request: Request, code: str) -> JSONResponse:
    authority: TokenAuthority = request.app.state.tokens
    issued = authority.exchange(code)
    return JSONResponse(
        {"token": issued.token, "token_id": issued.row.id, "role": issued.row.role,
         "expires_at": issued.row.expires_at},
        headers={"Cache-Control": "no-store"},
    )
