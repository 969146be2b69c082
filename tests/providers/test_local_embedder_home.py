"""The bundled embedder writes nothing outside the workspace: onnxruntime's telemetry client
(which, enabled, writes a device id and an event database under ~/.cache/Microsoft) stays off.

A real subprocess with a fresh HOME remembers and recalls through the real local model, and
HOME must then hold the workspace and nothing else; the onnxruntime version is the bounded one
pyproject.toml names."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_local_model_leaves_home_untouched_but_for_the_workspace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ORT_"))}
    env.update(HOME=str(home), SIGNET_PORT="1", OMP_NUM_THREADS="1")  # no daemon: in-process
    env.pop("SIGNET_WORKSPACE", None)  # the default, ~/.agents
    for args in (["init"], ["remember", "The billing service is written in Go"],
                 ["recall", "billing language", "--mode", "hybrid"]):
        done = subprocess.run([sys.executable, "-m", "signet", *args], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    assert "billing service" in done.stdout
    assert sorted(p.name for p in home.iterdir()) == [".agents"]


def test_onnxruntime_is_bounded_and_the_installed_one_is_within_the_bound() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    bound = re.search(r'"onnxruntime>=([\d.]+),<([\d.]+)"', pyproject)
    assert bound, "onnxruntime needs an upper bound in pyproject.toml"
    installed = tuple(int(x) for x in version("onnxruntime").split(".")[:2])
    low, high = (tuple(int(x) for x in v.split(".")[:2]) for v in bound.groups())
    assert low <= installed < high
