"""What every route receives: the opened SignetApp and the Actor the headers describe.

Both are `async` so FastAPI resolves them on the event loop instead of paying a thread hop;
the routes themselves are plain `def`s, which FastAPI runs in its thread pool because every
SignetApp call blocks (SQLite, embedding).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from signet.app import SignetApp
from signet.daemon.tokens import Principal
from signet.types import Actor

MAX_HEADER_VALUE = 200


async def _signet_app(request: Request) -> SignetApp:
    app: SignetApp = request.app.state.signet
    return app


async def _actor(request: Request) -> Actor:
    """`X-Signet-Actor` names who changes things (history's changed_by); `X-Signet-Session` and
    the request id (see middleware.AccessLog) go on every history row too. A token scoped to
    an agent acts as that agent (daemon/auth.py)."""
    name = _clean(request.headers.get("x-signet-actor")) or "operator"
    session = _clean(request.headers.get("x-signet-session"))
    request_id = getattr(request.state, "request_id", None)
    principal = getattr(request.state, "principal", None)
    agent = principal.scope_agent if isinstance(principal, Principal) else None
    return Actor(name=name, session_id=session, request_id=request_id, agent_id=agent or "default")


def _clean(value: str | None) -> str | None:
    value = (value or "").strip()[:MAX_HEADER_VALUE]
    return value or None


App = Annotated[SignetApp, Depends(_signet_app)]
CallerActor = Annotated[Actor, Depends(_actor)]
