"""Whether a terminal shows OSC 8 hyperlinks, by the conventions terminals and tools share."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TextIO

from unicite._text import int_of

__all__ = ["osc8", "supports_hyperlinks"]

# Terminals known to render OSC 8 links, by the variables they set.
_GOOD_TERM_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "vscode", "Hyper", "ghostty", "Tabby"})
_GOOD_TERMS = frozenset({"xterm-kitty", "xterm-ghostty", "wezterm", "foot", "foot-extra"})
_MARKER_VARIABLES = ("WT_SESSION", "KITTY_WINDOW_ID", "KONSOLE_VERSION", "DOMTERM")
_VTE_FIRST_GOOD = 5000  # VTE 0.50 introduced OSC 8


def supports_hyperlinks(stream: TextIO | None = None, env: Mapping[str, str] | None = None) -> bool:
    """Tell whether OSC 8 hyperlinks should be written to ``stream``.

    In order: ``FORCE_HYPERLINK`` decides when set (``0``, ``false``, ``no`` or ``off`` turn
    links off, any other value, even empty, turns them on); a stream that is not a TTY gets
    none; ``TERM=dumb`` gets none; then terminals known to support them get them
    (``TERM_PROGRAM`` iTerm.app, WezTerm, vscode, Hyper, ghostty or Tabby; ``VTE_VERSION`` of
    5000 or more; ``WT_SESSION``, ``KITTY_WINDOW_ID``, ``KONSOLE_VERSION`` or ``DOMTERM``
    non-empty; ``TERM`` xterm-kitty, xterm-ghostty, wezterm or foot). Anything else gets
    none, since an unsupporting terminal may print the escape sequences as garbage.

    ``NO_COLOR`` is deliberately ignored: it asks for no colour, and a hyperlink is not colour
    (the terminal renderer writes no colour codes at all).

    Args:
        stream: The stream the output goes to; ``sys.stdout`` by default.
        env: The environment; ``os.environ`` by default.

    Returns:
        True when links should be written. Never raises.
    """
    env = os.environ if env is None else env
    forced = env.get("FORCE_HYPERLINK")
    if forced is not None:
        return forced.strip().lower() not in {"0", "false", "no", "off"}
    stream = sys.stdout if stream is None else stream
    try:
        if stream is None or not stream.isatty():
            return False
    except (AttributeError, ValueError, OSError):  # closed or not a real stream
        return False
    term = env.get("TERM", "")
    if term == "dumb":
        return False
    if env.get("TERM_PROGRAM") in _GOOD_TERM_PROGRAMS or term in _GOOD_TERMS:
        return True
    vte = int_of(env.get("VTE_VERSION", ""))
    if vte is not None and vte >= _VTE_FIRST_GOOD:
        return True
    return any(env.get(name) for name in _MARKER_VARIABLES)


def osc8(href: str, text: str) -> str:
    """``text`` wrapped in an OSC 8 hyperlink to ``href`` (which must come from `safe_href`)."""
    return f"\x1b]8;;{href}\x1b\\{text}\x1b]8;;\x1b\\"
