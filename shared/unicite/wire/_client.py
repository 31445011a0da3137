"""The browser client shipped with the package: ``unicite.js`` and ``unicite.css``.

``unicite.js`` is a plain ES module (no build step, no dependency) that renders one message of
the ``unicite`` protocol — Markdown with inline ``[n]`` markers at the exact spans of the
history document, tooltips, a Sources list — live from ``thread.message.*`` events and, with
the same function, from the history document after a reload. Serve the folder as static
files (`unicite.wire.starlette.mount_client` does it for Starlette and FastAPI) and import it
from a page::

    <link rel="stylesheet" href="/unicite/unicite.css">
    <script type="module">
      import { ThreadView, subscribe } from "/unicite/unicite.js";
    </script>
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["client_dir"]

_STATIC = Path(__file__).resolve().parent / "static"


def client_dir() -> Path:
    """The folder holding ``unicite.js`` and ``unicite.css``, to serve as static files."""
    return _STATIC
