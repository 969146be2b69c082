"""`signet` and `python -m signet`: the CLI, with fast paths that skip its imports: the plain
`signet hook EVENT --harness NAME` form the harness configs use (signet/hooks/fast.py), run on
every prompt, and `signet mcp` relayed to a running daemon (signet/mcp/bridge.py).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if "hook" in args[:5]:
        from signet.hooks.fast import parse, run_fast

        parsed = parse(args)
        if parsed is not None:
            sys.exit(run_fast(*parsed))
    if "mcp" in args[:5] and _relay_mcp(args):
        sys.exit(0)
    from signet.cli.main import main as cli_main

    cli_main(args)


def _relay_mcp(args: list[str]) -> bool:
    """`signet [--workspace DIR] [--port N] mcp` with the workspace's daemon answering: relay
    stdio to its /mcp (signet/mcp/bridge.py) and return True. False (anything else, no daemon,
    a configuration to report): the click CLI's `signet mcp` serves in-process."""
    import os

    from signet.hooks.fast import global_options
    from signet.hooks.settings import load_settings
    from signet.hooks.transport import host_of
    from signet.mcp.bridge import Bridge, daemon_answers

    found = global_options(args)
    if found is None or found[2] != ["mcp"]:
        return False
    workspace, port, _rest = found
    env = os.environ if port is None else {**os.environ, "SIGNET_PORT": port}
    try:
        cfg = load_settings(workspace, env)
    except Exception:  # the CLI reports a broken configuration properly
        return False
    host = host_of(cfg.bind)
    if not daemon_answers(host, cfg.port, os.path.join(cfg.daemon_dir, "pid"), timeout_s=2.0):
        return False
    try:
        with open(cfg.token_path, encoding="utf-8") as handle:
            token: str | None = handle.read().strip() or None
    except OSError:
        token = None
    Bridge(host, cfg.port, token, sys.stdout.buffer).run(sys.stdin.buffer)
    return True


if __name__ == "__main__":
    main()
