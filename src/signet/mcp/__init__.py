"""The MCP server: Signet's memory as tools an agent calls.

One tool implementation (`tools.build_server`) over a backend with the client's methods
(backends.py), carried by stdio (`signet mcp`, relayed to the daemon's `/mcp` by bridge.py when the
daemon runs, else in-process) or by streamable HTTP at `/mcp` in the daemon (`http.mount_mcp`).
Answers are the HTTP contract's JSON; a `SignetError` becomes a tool error carrying its message.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from signet.mcp.backends import AppBackend, Backend, DaemonBackend, connect_backend
    from signet.mcp.http import mount_mcp
    from signet.mcp.tools import build_server

__all__ = ["AppBackend", "Backend", "DaemonBackend", "build_server", "connect_backend", "mount_mcp"]

# Each name is imported on first use: `signet mcp` relaying to the daemon (bridge.py) must not
# pay for the MCP SDK, the web stack and the app that the tools need.
_HOME = {"AppBackend": "backends", "Backend": "backends", "DaemonBackend": "backends",
         "connect_backend": "backends", "mount_mcp": "http", "build_server": "tools"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(f"signet.mcp.{_HOME[name]}"), name)
    raise AttributeError(f"module 'signet.mcp' has no attribute {name!r}")
