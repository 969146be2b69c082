"""Where the dashboard tests find the browser: Debian's chromium (scripts/test installs it),
or $SIGNET_CHROMIUM; and the flags it runs with (headless, nothing fetched in the background)."""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("SIGNET_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
