"""`/auth/login?code=...`: trade a one-time login code for a token (the dashboard's way in).

`signet token login-link` prints a link carrying a code that works once, for five minutes. The
route is public (the code is the credential; 256 random bits cannot be guessed), consumes the
code and answers `{"token", "token_id", "role", "expires_at"}`: a one-day admin token the page
keeps in memory and sends as `Authorization: Bearer`. No cookie is set, so no other site can
make a browser send it (docs/security.md).
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
