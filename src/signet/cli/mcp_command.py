"""`signet mcp`: the MCP server over stdin/stdout, for harnesses that spawn their MCP servers.

With this workspace's daemon running, the plain form is relayed by signet/__main__.py
(mcp/bridge.py) and never reaches here. This command proxies to a daemon that answers, else opens
the store in-process and says so, chosen once at start. Only MCP may appear on stdout.
"""

from __future__ import annotations

import os

import click

from signet.cli.state import CliState

__all__ = ["mcp"]


@click.command()
@click.pass_obj
def mcp(state: CliState) -> None:
    """Serve the memory tools (memory_search, memory_store, ...) to an MCP client on stdio."""
    # Imported here: the MCP SDK and the store are heavy, and the other commands never need them.
    from signet.mcp import build_server, connect_backend

    # The same single-threaded numeric defaults as the daemon, for in-process embedding.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    backend, app = connect_backend(state.config())
    try:
        build_server(backend, without_daemon=app is not None).run("stdio")
    finally:
        backend.close()
        if app is not None:
            app.close()
