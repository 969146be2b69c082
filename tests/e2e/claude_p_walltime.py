"""What `signet connect claude-code` costs a `claude -p` run: wall time from spawn to exit, with
and without connect, and the CPU of the run and the hooks it waited for.

    python tests/e2e/claude_p_walltime.py [--runs 5]

The pinned Claude Code (`.cache/claude-code`, installed by scripts/test) runs one prompt against
the tests' fake Anthropic Messages API (tests/fakes/anthropic_stream.py, answers at once), on a
temporary HOME without connect and on one after `signet connect claude-code --allow-tools`
(hooks and the MCP server), a real daemon holding one memory; one warm-up run each, then the
runs alternate. Not a test (no assertion on time): the figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "daemon")]

from daemon_process import NO_EMBEDDINGS, DaemonProcess, daemon_env, free_port  # noqa: E402

from fakes.anthropic_stream import FakeAnthropic  # noqa: E402
from signet.workspace import init_workspace  # noqa: E402

CLAUDE = ROOT / ".cache" / "claude-code" / "node_modules" / ".bin" / "claude"
PROMPT = "Do we use PostgreSQL for the billing ledger?"
DECISION = "We decided to use PostgreSQL for the billing service ledger, not MongoDB"


def run(home: Path, cwd: Path, fake: FakeAnthropic) -> tuple[float, float]:
    """(wall ms, CPU ms of the run and the children it waited for)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_BASE_URL": fake.url,
           "ANTHROPIC_API_KEY": "sk-ant-test-dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_AUTOUPDATER": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([str(CLAUDE), "-p", PROMPT], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=180)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="signet-claude-p-") as tmp:
        base = Path(tmp)
        workspace = init_workspace(base / "ws").workspace
        (workspace / "agent.yaml").write_text(NO_EMBEDDINGS)
        port = free_port()
        env = daemon_env(workspace, port)
        plain, connected, project = base / "plain", base / "connected", base / "billing"
        for folder in (plain, connected, project):
            folder.mkdir()
        daemon, fake = DaemonProcess(workspace, port), FakeAnthropic()
        try:
            daemon.wait_healthy(timeout_s=60)
            for argv, home in ((["remember", DECISION], base),
                               (["connect", "claude-code", "--allow-tools"], connected)):
                subprocess.run([sys.executable, "-m", "signet", *argv], env={**env, "HOME": str(home)},
                               check=True, capture_output=True, timeout=120)
            run(plain, project, fake)
            run(connected, project, fake)
            load_start = os.getloadavg()[0]
            without, with_connect = [], []
            for _ in range(runs):
                without.append(run(plain, project, fake))
                with_connect.append(run(connected, project, fake))
            load_end = os.getloadavg()[0]
        finally:
            fake.close()
            daemon.kill()

    def figures(samples: list[tuple[float, float]]) -> dict[str, object]:
        return {"wall_ms": [round(s[0]) for s in samples],
                "median_wall_ms": round(statistics.median(s[0] for s in samples)),
                "median_cpu_ms": round(statistics.median(s[1] for s in samples))}

    print(json.dumps({"runs": runs, "load": [round(load_start, 2), round(load_end, 2)],
                      "without_connect": figures(without), "with_connect": figures(with_connect)},
                     indent=2))


if __name__ == "__main__":
    main()
