"""The read commands without a daemon (`list`, `get`, `history`, `status`) import only what
they use: not the embedding model's runtime, not networkx (the graph's communities), not httpx
(URL fetching, remote providers); `list`, `get` and `history` open the app `lazy`, so neither
recall, the workers, the documents nor the maintenance code is imported either. Start-up is
most of each one's time; the figures are in docs/benchmarks.md ("CLI commands without a
daemon"). Real subprocesses on a tmp workspace."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HEAVY = ("networkx", "httpx", "onnxruntime", "tokenizers", "fastapi", "uvicorn")
# What only other operations use (status reports the maintenance audit, so it wires them).
UNUSED = ("signet.recall.hybrid", "signet.maintenance", "signet.worker_list",
          "signet.documents.service", "signet.sessions.service", "signet.services.operations",
          "cryptography")
PROBE = """
import atexit, runpy, sys
atexit.register(lambda: print("loaded:", ",".join(m for m in {heavy!r} if m in sys.modules),
                              file=sys.stderr))
sys.argv = ["signet", *{argv!r}]
runpy.run_module("signet", run_name="__main__")
"""


def test_read_commands_without_a_daemon_leave_the_heavy_modules_unloaded(tmp_path: Path) -> None:
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path / "ws"), "HOME": str(tmp_path),
           "SIGNET_PORT": "9", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    made = subprocess.run([sys.executable, "-m", "signet", "remember", "The VPN needs MFA"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    short = re.search(r"[0-9a-f]{32}", made.stdout).group(0)[:8]  # type: ignore[union-attr]
    for argv in (["list"], ["get", short], ["history", short], ["status"]):
        unused = HEAVY if argv == ["status"] else HEAVY + UNUSED
        done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=unused, argv=argv)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (argv, done.stderr)
        loaded = re.search(r"^loaded: (.*)$", done.stderr, flags=re.M)
        assert loaded is not None and loaded.group(1) == "", (argv, done.stderr)
