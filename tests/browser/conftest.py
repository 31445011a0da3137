"""The browser every test here drives: Debian's Chromium through Playwright, one per module.

Playwright's own browser download is not used; the modules skip themselves when
``/usr/bin/chromium`` or the ``playwright`` package is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _chromium import ARGS, CHROMIUM


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the module's tests."""
    from playwright import sync_api

    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield launched
        finally:
            launched.close()
