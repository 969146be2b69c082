"""`signet embed audit|backfill` through a real subprocess: vectors written while the embedder
was off are found missing, then filled by backfill."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def signet(workspace: Path, *args: str) -> dict:
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "OMP_NUM_THREADS": "1",
           "SIGNET_PORT": "1"}
    done = subprocess.run([sys.executable, "-m", "signet", *args, "--json"], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def test_backfill_embeds_what_was_written_without_an_embedder(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = workspace / "agent.yaml"
    config.write_text("embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n")
    for text in ("The backup runs at 2am", "Invoices go out on the first", "Use tabs, not spaces"):
        signet(workspace, "remember", text)
    config.write_text("memory:\n  pipelineV2:\n    enabled: false\n")  # the local model now
    before = signet(workspace, "embed", "audit")
    assert before["provider"] == "local"
    assert before["audit"]["memories"] == 3 and before["audit"]["missing"] == 3
    after = signet(workspace, "embed", "backfill")
    assert after["audit"]["missing"] == 0 and after["audit"]["embedded"] == 3
    assert signet(workspace, "embed", "audit")["audit"]["embedded"] == 3
