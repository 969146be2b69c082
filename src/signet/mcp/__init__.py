"""The MCP server: Signet's memory as tools an agent calls (memory_search, memory_store, ...).

One tool implementation (`tools.build_server`) talks to a backend object with the CLI client's
methods (`backends.Backend`), and two transports carry it:

- stdio (`signet mcp`): a harness spawns the command; when this workspace's daemon runs it
  relays to the daemon's `/mcp` (bridge.py, without loading anything below), otherwise it opens
  the store in-process (`AppBackend`) and says so in its instructions and search answers.
- streamable HTTP at `/mcp` inside the daemon (`http.mount_mcp`), with an in-process backend
  around the daemon's own SignetApp.

Either way each tool is a docstring plus one backend call, whose answer is the HTTP contract's
JSON, so an agent sees the same shapes the daemon's API returns. A `SignetError` becomes an MCP
tool error carrying its message.
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
