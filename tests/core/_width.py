"""Terminal display width for the rendering tests, written apart from the renderer's own."""

from __future__ import annotations

import unicodedata


def display_width(text: str) -> int:
    """Columns ``text`` takes: combining and format characters none, wide and full-width two."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in {"Mn", "Me", "Cf"}:
            continue
        width += 2 if unicodedata.east_asian_width(char) in {"W", "F"} else 1
    return width
