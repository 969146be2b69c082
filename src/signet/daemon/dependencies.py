"""What every route receives (the opened SignetApp and the Actor the headers describe), and the
check that a query string names only parameters the route takes. Both are `async` so FastAPI
resolves them without a thread hop; the routes are plain `def`s, run in the thread pool, because
every SignetApp call blocks.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from signet.app import SignetApp
from signet.daemon.tokens import Principal
from signet.errors import InvalidInput
from signet.types import Actor

MAX_HEADER_VALUE = 200
# Names only the daemon itself writes history under (pipeline/writes.py, the workers).
INTERNAL_ACTORS = frozenset({
    "pipeline", "pipeline-shadow", "daemon", "system", "maintenance", "summary", "skills",
    "documents",
})


async def _signet_app(request: Request) -> SignetApp:
    app: SignetApp = request.app.state.signet
    return app


async def _actor(request: Request) -> Actor:
    """Who changes things, for history: always the verified token's id; the name from `X-Signet-
    Actor` only for an unscoped admin token (the install token the CLI, hooks and MCP send for a
    harness), else the token's own name, so no caller can pass for another. `X-Signet-Session`
    and the request id go on every row too."""
    session = _clean(request.headers.get("x-signet-session"))
    request_id = getattr(request.state, "request_id", None)
    principal = getattr(request.state, "principal", None)
    if not isinstance(principal, Principal):
        return Actor(session_id=session, request_id=request_id)
    stated = _clean(request.headers.get("x-signet-actor"))
    if stated is not None and stated.lower() in INTERNAL_ACTORS:
        raise InvalidInput(f"X-Signet-Actor may not name the daemon's own actor {stated!r}")
    trusted = principal.role == "admin" and not principal.scoped
    name = (stated if trusted else None) or ("operator" if trusted else principal.name)
    return Actor(
        name=name, session_id=session, request_id=request_id,
        agent_id=principal.scope_agent or "default", token_id=principal.token_id,
    )


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()[:MAX_HEADER_VALUE]
    return value or None


App = Annotated[SignetApp, Depends(_signet_app)]
CallerActor = Annotated[Actor, Depends(_actor)]


async def known_query_only(request: Request) -> None:
    """400 naming any query parameter the route does not take (`?limt=5` must not silently mean the
    default). Applies to the routes /openapi.json documents; pages and mounts (/mcp, the
    dashboard shell) keep their own query strings."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not route.include_in_schema:
        return
    unknown = sorted(set(request.query_params) - _query_names(route))
    if unknown:
        accepted = ", ".join(sorted(_query_names(route))) or "none"
        raise InvalidInput(
            f"unknown query parameter(s) {', '.join(map(repr, unknown))} (accepted: {accepted})",
            details={"unknown_parameters": unknown},
        )


def _query_names(route: APIRoute) -> frozenset[str]:
    """The query parameters of the route and of its dependencies (computed once, kept on it)."""
    names: frozenset[str] | None = getattr(route, "_signet_query_names", None)
    if names is None:
        names = frozenset(_declared(route.dependant))
        route._signet_query_names = names  # type: ignore[attr-defined]
    return names


def _declared(dependant: Dependant) -> set[str]:
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _declared(sub)
    return names
