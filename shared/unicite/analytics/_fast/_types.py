"""The type of a fast reader."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from unicite.analytics._rows import Row

__all__ = ["FastReader"]

FastReader = Callable[[Mapping[str, Any]], "Row | None"]
"""Takes a decoded response its provider's reader detected; returns its row, or None to let
`extract()` read it."""
