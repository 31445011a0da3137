"""Whether citations are on: one precedence rule shared by the core and the adapters."""

from __future__ import annotations

from unicite.exceptions import UsageError

__all__ = ["Toggle", "resolve_enabled"]

Toggle = bool | int | str | None
"""A setting as users write it: a bool, ``1``/``0``, or a word (see `resolve_enabled`)."""

_WORDS = {
    "enabled": True,
    "disabled": False,
    "on": True,
    "off": False,
    "true": True,
    "false": False,
    "1": True,
    "0": False,
    "yes": True,
    "no": False,
}


def _toggle(value: Toggle, level: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().casefold()
        if not word:
            return None
        if word in _WORDS:
            return _WORDS[word]
    words = ", ".join(sorted(_WORDS))
    raise UsageError(f"{level} must be a bool or one of {words} (any case), got {value!r}")


def resolve_enabled(
    explicit: Toggle = None, persistent: Toggle = None, default: Toggle = False
) -> bool:
    """Decide whether citations are enabled.

    An explicit choice (a per-call argument or a ``/set``-style toggle) wins over a persistent
    setting, which wins over the default. ``None`` (or an empty string, as an unset
    environment variable reads) means "not set" at that level. Each level takes a bool or the
    toggle's words, in any case: ``enabled``/``disabled``, ``on``/``off``, ``true``/``false``,
    ``yes``/``no``, ``1``/``0``.

    Raises:
        UsageError: A level holds anything else (``"disable"``, ``2``, a list...): a typo
            must not silently turn citations on.
    """
    for value, level in ((explicit, "explicit"), (persistent, "persistent"), (default, "default")):
        decided = _toggle(value, level)
        if decided is not None:
            return decided
    return False
