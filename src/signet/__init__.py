"""Signet: local-first long-term memory for AI agents.

One SQLite database the user owns; a daemon that remembers conversations, distils them into
facts, links them into a graph and recalls the right context. The map: docs/architecture.md.

`signet.Client` talks to a running daemon (docs/python.md), `signet.AsyncClient` the same,
awaited. Each is imported on first use, so `import signet` stays free for the processes that
need neither (a harness hook).
"""

from __future__ import annotations

from signet.version import __version__

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process milliseconds
if TYPE_CHECKING:
    from typing import Any

    from signet.client import Client
    from signet.client.aio import AsyncClient

__all__ = ["AsyncClient", "Client", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Client":
        from signet.client import Client

        return Client
    if name == "AsyncClient":
        from signet.client.aio import AsyncClient

        return AsyncClient
    raise AttributeError(f"module 'signet' has no attribute {name!r}")
