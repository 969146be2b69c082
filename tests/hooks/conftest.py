"""The hooks tests drive the real CLI as subprocesses against a real daemon subprocess
(tests/daemon/daemon_process.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))
