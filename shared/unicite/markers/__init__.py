"""Citation markers in answer text: writing them from citations (and, later, reading them)."""

from unicite.markers._inject import inject_markers

__all__ = ["inject_markers"]
