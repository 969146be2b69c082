"""`signet bench mcp-start`: from spawning `signet mcp` to answered `initialize` and `tools/list`,
with the daemon running (the relay) and without (in-process), through the MCP SDK's stdio client.
Target p95 <= 300 ms to `initialize` with the daemon running.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from mcp import Client, StdioServerParameters
from signet.bench.cli_start import signet_command
from signet.bench.load import Daemon
from signet.bench.metrics import percentile
from signet.workspace import init_workspace

__all__ = ["TARGET_P95_MS", "format_mcp_start", "run_mcp_start"]

TARGET_P95_MS = 300.0


def run_mcp_start(
    runs: int = 20, *, workdir: Path | None = None, progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    if runs < 1:
        raise ValueError("runs must be positive")
    with tempfile.TemporaryDirectory(prefix="signet-mcp-", dir=workdir) as tmp:
        workspace = init_workspace(Path(tmp) / "ws").workspace
        (workspace / "agent.yaml").write_text("embedding:\n  provider: none\n")
        daemon = Daemon(workspace)
        env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "SIGNET_PORT": str(daemon.port),
               "SIGNET_AUTOSTART": "0"}
        server = StdioServerParameters(command=signet_command()[0],
                                       args=[*signet_command()[1:], "mcp"], env=env)
        try:
            daemon.wait_ready()
            _session(server)  # warm: caches the settings, pages in the interpreter
            if progress:
                progress(f"mcp-start: {runs} x `signet mcp` with the daemon running")
            relay = [_session(server) for _ in range(runs)]
        finally:
            daemon.stop()
        if progress:
            progress(f"mcp-start: {min(runs, 5)} x `signet mcp` without a daemon")
        alone = [_session(server) for _ in range(min(runs, 5))]
    return {
        "command": "signet mcp", "runs": runs, "client": "mcp SDK Client over stdio",
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "daemon_running": _figures(relay), "without_daemon": _figures(alone),
        "target_p95_ms": TARGET_P95_MS,
        "meets_target": percentile([s[0] for s in relay], 95) <= TARGET_P95_MS,
    }


def _session(server: StdioServerParameters) -> tuple[float, float]:
    """(ms to the initialize answer, ms to the tools/list answer), from spawning."""

    async def main() -> tuple[float, float]:
        started = time.perf_counter()
        async with Client(server) as client:
            initialized = time.perf_counter()
            tools = await client.list_tools()
            listed = time.perf_counter()
        if not tools.tools:
            raise RuntimeError("signet mcp listed no tools")
        return (initialized - started) * 1000, (listed - started) * 1000

    return anyio.run(main)


def _figures(samples: list[tuple[float, float]]) -> dict[str, float]:
    init, tools = [s[0] for s in samples], [s[1] for s in samples]
    return {"initialize_p50_ms": round(percentile(init, 50), 1),
            "initialize_p95_ms": round(percentile(init, 95), 1),
            "tools_p50_ms": round(percentile(tools, 50), 1),
            "tools_p95_ms": round(percentile(tools, 95), 1), "runs": len(samples)}


def format_mcp_start(result: dict[str, Any]) -> str:
    lines = [f"signet mcp start ({result['client']}), load {result['load_average']}"]
    for name in ("daemon_running", "without_daemon"):
        f = result[name]
        lines.append(
            f"  {name:15} initialize p50 {f['initialize_p50_ms']:7.1f} ms  p95 "
            f"{f['initialize_p95_ms']:7.1f} ms   tools/list p50 {f['tools_p50_ms']:7.1f} ms  "
            f"p95 {f['tools_p95_ms']:7.1f} ms  ({f['runs']} runs)")
    verdict = "meets" if result["meets_target"] else "misses"
    lines.append(f"  target: initialize p95 <= {result['target_p95_ms']:.0f} ms with the daemon"
                 f" running ({verdict} it)")
    return "\n".join(lines)
