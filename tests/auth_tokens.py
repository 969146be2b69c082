"""Tokens for tests that talk to a daemon (auth is on for every route but /health).

`install_token(cfg, app)` does what the daemon does at start: writes `.daemon/token` (0600)
with a valid admin token, which the CLI's client, hooks and `signet mcp` then read. `issue`
mints any other token (a role, fewer permissions, a scope). `auth(token)` is the header.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from signet.app import SignetApp
from signet.config import Config
from signet.daemon.tokens import TokenAuthority, ensure_install_token


def authority(app: SignetApp) -> TokenAuthority:
    return TokenAuthority.for_core(app.token_authority_store())


def install_token(cfg: Config, app: SignetApp) -> str:
    ensure_install_token(cfg, authority(app))
    return cfg.token_path.read_text("ascii").strip()


def issue(app: SignetApp, role: str = "admin", *, ttl_days: float | None = None, **kwargs: Any) -> str:
    ttl = timedelta(days=ttl_days) if ttl_days is not None else None
    return authority(app).issue(role=role, ttl=ttl, **kwargs).token


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def mcp_http(url: str, token: str) -> Any:
    """A streamable-HTTP MCP transport to `url` sending the token (for `mcp.Client(...)`)."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    return streamable_http_client(url, http_client=create_mcp_http_client(headers=auth(token)))
