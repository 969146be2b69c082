"""The CLI's tests that need a real daemon process start it with tests/daemon/daemon_process.py;
those that only need something answering the hooks use tests/hooks/answering_server.py."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
