"""The README's walk ("What you can do next") runs as written on a fresh workspace: after what
`bash scripts/start` does (`signet init`, `signet daemon start`), every command of its first
block, in order, exits 0. `<id>` is the billing memory's id, which its second `remember`
prints, as the README says. Real subprocesses, a real daemon on a free loopback port."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def walk() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("## What you can do next", 1)[1]
    block = re.search(r"```[a-z]*\n(.*?)```", section, flags=re.S)
    assert block is not None, "the README's walk has no code block"
    lines = [re.split(r"\s+#\s", line, maxsplit=1)[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_readme_walk_runs_as_written(tmp_path: Path) -> None:
    commands = walk()
    assert commands[0].startswith("signet remember") and commands[-1] == "signet daemon stop"
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path / "agents"), "HOME": str(tmp_path),
           "SIGNET_PORT": str(free_port()), "SIGNET_BIND": "127.0.0.1", "OMP_NUM_THREADS": "1",
           "HF_HUB_OFFLINE": "1", "BROWSER": "true"}  # `signet dashboard` opens `true`
    signet = [sys.executable, "-m", "signet"]

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(signet + argv, env=env, capture_output=True, text=True,
                              timeout=180, cwd=tmp_path)

    for setup in (["init"], ["daemon", "start"]):  # what scripts/start does
        done = run(setup)
        assert done.returncode == 0, (setup, done.stderr)
    ids: list[str] = []
    try:
        for command in commands:
            argv = shlex.split(command)
            assert argv[0] == "signet", command
            if "<id>" in argv:
                assert len(ids) >= 2, f"{command}: no memory id printed yet"
                argv = [ids[1] if arg == "<id>" else arg for arg in argv]
            done = run(argv[1:])
            assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
            ids += re.findall(r"^Remembered ([0-9a-f]{32})", done.stdout, flags=re.M)
    finally:
        run(["daemon", "stop"])
    assert len(ids) == 2
    # The walk's first memory is pinned (`critical:`): forgetting it names the flag it needs.
    refused = run(["forget", ids[0][:8]])
    assert refused.returncode == 1 and "is pinned; forget it with --force" in refused.stderr
