"""`signet mcp`: the MCP server over stdin/stdout, for harnesses that spawn their MCP servers.

With this workspace's daemon running, the plain `signet [--workspace W] [--port N] mcp` never
reaches this command: signet/__main__.py relays it to the daemon's `/mcp` (mcp/bridge.py).
Here it proxies to the daemon when one answers (another argv form) and otherwise opens the
store in-process, saying so in its instructions and in memory_search's answers; the choice is
made once, at start. Only the MCP protocol may appear on stdout: warnings and logs go to
stderr.
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
