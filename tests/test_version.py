"""One version: the package metadata (pyproject reads signet/version.py), `signet --version`
and the daemon's /health (tests/daemon/test_routes.py) all report `signet.__version__`."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import signet


def test_the_version_is_one_number_everywhere() -> None:
    assert version("signet-memory") == signet.__version__
    shown = subprocess.run([sys.executable, "-m", "signet", "--version"], capture_output=True,
                           text=True, check=True).stdout
    assert shown.strip() == f"signet, version {signet.__version__}"
