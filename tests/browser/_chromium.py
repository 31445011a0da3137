"""Where the browser tests find Debian's Chromium, how they start it, where screenshots go."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).parents[2]
SCREENSHOTS = ROOT / "test-output" / "screenshots"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Without the background-networking flags Chromium keeps dialling out of the closed network."""
