"""`signet` and `python -m signet`: the CLI, with a fast path for the harness hooks.

`signet hook EVENT --harness NAME` runs on every prompt of an agent, so it skips the CLI's
imports (click's group, the client, httpx) when its argv is the plain form the harness configs
use (signet/hooks/fast.py); every other command goes to the click CLI.
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
    from signet.cli.main import main as cli_main

    cli_main(args)


if __name__ == "__main__":
    main()
