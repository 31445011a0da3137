"""LangChain's standard (v1) content blocks, read back into a provider's own shapes.

LangChain keeps a provider's answer either in the provider's block format or in its standard
one, where citations become ``citation`` annotations (provider fields in ``extras``) and what
has no standard form becomes ``non_standard`` blocks and annotations. Each provider maps the
standard citation back to its own; the parts every provider shares live here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["is_v1", "v1_citation"]

_V1_ANNOTATIONS = frozenset({"citation", "non_standard_annotation"})


def _type(value: object) -> object:
    return value.get("type") if isinstance(value, Mapping) else None


def is_v1(blocks: list[Any], standard_blocks: frozenset[str]) -> bool:
    """Whether `blocks` are in the standard form: a standard block type, or a v1 annotation.

    Args:
        blocks: The content blocks.
        standard_blocks: Standard block types the provider has no block of that name for.
    """
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        if _type(block) in standard_blocks:
            return True
        annotations = block.get("annotations")
        if isinstance(annotations, list) and any(_type(a) in _V1_ANNOTATIONS for a in annotations):
            return True
    return False


def v1_citation(annotation: Any) -> tuple[dict[str, Any] | None, Any]:
    """Split a standard annotation into ``(fields, None)`` or ``(None, kept)``.

    A standard ``citation`` gives its ``extras`` (the provider's own fields) as a new dict for
    the provider to complete; a ``non_standard_annotation`` gives back the provider's value it
    wraps; anything else is kept as it is (a copy of a mapping).
    """
    if not isinstance(annotation, Mapping):
        return None, annotation
    kind = annotation.get("type")
    if kind == "non_standard_annotation":
        return None, annotation.get("value")
    if kind != "citation":
        return None, dict(annotation)
    extras = annotation.get("extras")
    return (dict(extras) if isinstance(extras, Mapping) else {}), None
