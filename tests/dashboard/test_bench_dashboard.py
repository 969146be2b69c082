"""`signet bench dashboard` end to end on a tiny run: a real daemon subprocess (the bundled
model for the map's memories), headless Chromium, the documented JSON shape with figures that
could only come from a real load."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from chromium import CHROMIUM


def test_bench_dashboard_reports_first_load_and_map_frames(tmp_path: Path) -> None:
    # A short TMPDIR: chromium puts its singleton socket in a temporary folder, and a Unix
    # socket path is limited to 107 bytes (pytest's tmp_path can be longer than that).
    short = Path(tempfile.mkdtemp(prefix="sgbd-"))
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(short), "OMP_NUM_THREADS": "1"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "signet", "bench", "dashboard", "--json", "--memories", "3",
             "--points", "2000", "--runs", "1", "--map-memories", "40", "--chromium", CHROMIUM],
            env=env, capture_output=True, text=True, timeout=240,
        )
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    assert "map renderer at 2,000 points" in done.stderr  # progress on stderr
    data = json.loads(done.stdout)
    cold, warm = data["first_load"]["cold"], data["first_load"]["warm"]
    # the cold load fetches every file; the warm one gets 304s for them, so moves far fewer bytes
    assert cold["decoded_bytes"] > 20_000 and cold["requests"] >= 10
    assert 0 < warm["bytes"] < cold["bytes"]
    assert cold["ms"] > 0 and warm["ms"] > 0
    (frame,) = data["map"]
    assert frame["points"] == 2000 and frame["frame_ms_p50"] > 0 and frame["hover_us"] >= 0
    assert len(data["load_average"]) == 3
    page = data["map_page"]  # the map page on real memories: the 40 seeded and the 3 remembered
    assert page["memories"] == 40 and page["points"] == 43
    assert page["first_ms"] > 0 and page["cached_ms"] > 0 and page["projection_bytes"] > 43 * 100
