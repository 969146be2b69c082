"""The MCP server: Signet's memory as tools an agent calls (memory_search, memory_store, ...).

One tool implementation (`tools.build_server`) talks to a backend object with the CLI client's
methods (`backends.Backend`), and two transports carry it:

- stdio (`signet mcp`): a harness spawns the command; it proxies to this workspace's daemon when
  one runs (`DaemonBackend`, HTTP) and otherwise opens the store in-process (`AppBackend`).
- streamable HTTP at `/mcp` inside the daemon (`http.mount_mcp`), with an in-process backend
  around the daemon's own SignetApp.

Either way each tool is a docstring plus one backend call, whose answer is the HTTP contract's
JSON, so an agent sees the same shapes the daemon's API returns. A `SignetError` becomes an MCP
tool error carrying its message.
"""

from signet.mcp.backends import AppBackend, Backend, DaemonBackend, connect_backend
from signet.mcp.http import mount_mcp
from signet.mcp.tools import build_server

__all__ = ["AppBackend", "Backend", "DaemonBackend", "build_server", "connect_backend", "mount_mcp"]
