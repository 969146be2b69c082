"""Wires authentication, permissions and the guards into the daemon's FastAPI app. `install(api,
app)` (after every router and /mcp) builds the `TokenAuthority`, the rate limiter, `/auth/login`
and the guards; `prepare(config, api)` at start refuses a non-loopback bind without team/hybrid
auth and makes sure `.daemon/token` holds a valid admin token.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from signet.app import SignetApp
from signet.config import Config
from signet.daemon import routes_auth
from signet.daemon.auth import RateLimiter
from signet.daemon.guards import LOGIN_PATHS, PUBLIC_PATHS, Authenticate, Cors, HostGuard
from signet.daemon.network import own_hosts
from signet.daemon.openapi import amend_openapi
from signet.daemon.tokens import TokenAuthority, ensure_install_token

__all__ = ["install", "prepare"]


def install(api: FastAPI, app: SignetApp) -> TokenAuthority:
    config = app.config
    authority = TokenAuthority.for_core(app.token_authority_store(), app.clock)
    api.state.tokens = authority
    api.state.rate_limiter = RateLimiter(config.auth.rate_limit_per_minute)
    api.include_router(routes_auth.router)
    _document_refusals(api)
    # Added first = innermost: Host, then Origin, then the token.
    api.add_middleware(
        Authenticate, authority=authority,
        refusals=RateLimiter(config.auth.unauthenticated_per_minute),
    )
    api.add_middleware(Cors, port=config.port, origins=config.network.cors_origins)
    api.add_middleware(HostGuard, port=config.port, allowed_hosts=own_hosts(config))
    return authority


def prepare(config: Config, api: FastAPI) -> None:
    """At daemon start: the install token exists and is valid (written 0600 when not)."""
    ensure_install_token(config, api.state.tokens)


REFUSALS: dict[str, str] = {
    "401": "No valid token (missing, malformed, expired or revoked).",
    "403": "The token lacks the route's permission, or its scope does not allow the call.",
    "421": "The Host header is not one of this daemon's names (DNS rebinding protection).",
    "429": "The token's rate limit for mutating calls is reached.",
}
# What the middleware and the shared dependencies answer for any operation, before or around
# its handler: an unknown query parameter (dependencies.known_query_only), a body too large or
# too slow (middleware.BodyLimit, only where there is a body), the unauthenticated rate limit
# (spent by the login paths), the store unavailable or frozen (any operation but /health).
ANY_OPERATION: dict[str, str] = {
    "400": "A query parameter the operation does not take, or a request it cannot accept.",
}
WITH_BODY: dict[str, str] = {
    "408": "The request body did not arrive in time.",
    "413": "The request body is larger than the daemon accepts.",
}
LOGIN: dict[str, str] = {"429": "Too many unauthenticated requests from this address."}
STORE: dict[str, str] = {"503": "The store is unavailable, or mutations are frozen."}
ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _document_refusals(api: FastAPI) -> None:
    """/openapi.json says, for every operation, the answers the guards may give instead of it,
    and that a bearer token is required (every path but the public ones)."""

    def amend(schema: dict[str, Any]) -> None:
        schema.setdefault("components", {}).setdefault("securitySchemes", {})["bearer"] = {
            "type": "http", "scheme": "bearer",
            "description": "A Signet token (sgt1...); local clients read .daemon/token.",
        }
        for path, operations in schema.get("paths", {}).items():
            public = path in PUBLIC_PATHS
            for method, operation in operations.items():
                if method not in METHODS:
                    continue
                if not public:
                    operation.setdefault("security", [{"bearer": []}])
                answers = {code: REFUSALS[code] for code in (
                    ("401", "421") if public else tuple(REFUSALS))}
                answers |= _middleware_answers(path, operation)
                for code, description in answers.items():
                    operation.setdefault("responses", {}).setdefault(
                        code, {"description": description, "content": ERROR_CONTENT}
                    )

    amend_openapi(api, amend)


def _middleware_answers(path: str, operation: dict[str, Any]) -> dict[str, str]:
    answers = dict(ANY_OPERATION)
    if "requestBody" in operation:
        answers |= WITH_BODY
    if path in LOGIN_PATHS:
        answers |= LOGIN
    if path != "/health":
        answers |= STORE
    return answers
