"""The CLI's tests that need a real daemon process start it with tests/daemon/daemon_process.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))
