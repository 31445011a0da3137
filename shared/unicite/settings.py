"""Whether citations are on: one precedence rule shared by the core and the adapters."""

from __future__ import annotations

__all__ = ["resolve_enabled"]


def resolve_enabled(
    explicit: bool | None = None, persistent: bool | None = None, default: bool = False
) -> bool:
    """Decide whether citations are enabled.

    An explicit choice (a per-call argument or a ``/set``-style toggle) wins over a persistent
    setting, which wins over the default. ``None`` means "not set" at that level.
    """
    if explicit is not None:
        return bool(explicit)
    if persistent is not None:
        return bool(persistent)
    return bool(default)
