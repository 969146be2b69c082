"""A stand-in for an LLM CLI such as `claude -p`, for testing the `command` provider.

Reads the prompt from stdin, then prints a scripted reply. Run it as
`[sys.executable, fake_cli.py, *options]`:

  --reply TEXT     what to print (default: $FAKE_CLI_REPLY, else "fake cli reply")
  --echo           print the stdin it received instead of the reply
  --show-guard     print "SIGNET_NO_HOOKS=<value> SIGNET_BYPASS=<value>" ("unset" when absent)
  --exit CODE      exit with this status after printing (default 0)
  --stderr TEXT    write this to stderr
  --sleep SECONDS  sleep before answering (for timeouts)
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reply", default=os.environ.get("FAKE_CLI_REPLY", "fake cli reply"))
    parser.add_argument("--echo", action="store_true")
    parser.add_argument("--show-guard", action="store_true")
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--stderr", default="")
    parser.add_argument("--sleep", type=float, default=0.0)
    args = parser.parse_args()

    received = sys.stdin.read()
    time.sleep(args.sleep)
    if args.show_guard:
        guard = ("SIGNET_NO_HOOKS", "SIGNET_BYPASS")
        print(" ".join(f"{name}={os.environ.get(name, 'unset')}" for name in guard))
    else:
        print(received if args.echo else args.reply, end="")
    if args.stderr:
        print(args.stderr, file=sys.stderr)
    return args.exit


if __name__ == "__main__":
    sys.exit(main())
