"""`signet status` reports the hooks: failures of the last 24 hours from hooks.log (older lines
left out) and the capture spool's backlog, through the real CLI with no daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from signet import spool


def test_status_counts_the_last_days_hook_failures_and_the_spool(tmp_path: Path) -> None:
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path / "ws"), "SIGNET_PORT": "9"}
    init = subprocess.run([sys.executable, "-m", "signet", "init"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert init.returncode == 0, init.stderr
    now = datetime.now(UTC)
    stamp = lambda ago: (now - ago).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    log = tmp_path / "ws" / ".daemon" / "logs" / "hooks.log"
    log.write_text(
        f"{stamp(timedelta(days=2))} session-end claude-code: old failure\n"
        f"{stamp(timedelta(hours=3))} user-prompt-submit claude-code: DaemonDown: refused\n"
        f"{stamp(timedelta(minutes=1))} session-end claude-code: gave up after its 2000 ms budget\n")
    spool.write(str(tmp_path / "ws"), "session-end", "claude-code", {"session_id": "s1"}, b"x")
    done = subprocess.run([sys.executable, "-m", "signet", "status", "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    hooks = json.loads(done.stdout)["hooks"]
    assert (hooks["failures_24h"], hooks["spool_backlog"], hooks["spool_failed"]) == (2, 1, 0)
    assert "gave up after its 2000 ms budget" in hooks["last_failure"]
    table = subprocess.run([sys.executable, "-m", "signet", "status"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert "2 failures in 24 h" in table.stdout and "spool: 1 waiting" in table.stdout
