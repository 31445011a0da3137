"""Where in a source a citation points, built from a provider's fields with a diagnostic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import ValidationError

from unicite.model import BlockLocation, CharLocation, Location, PageLocation
from unicite.providers._builder import AnswerBuilder

__all__ = ["checked_location", "document_location"]

DocumentShape = Literal["char", "page", "block"]


def checked_location(
    builder: AnswerBuilder, factory: Callable[..., Location], path: str, **values: int | None
) -> Location | None:
    """``factory(**values)``; None when a value is missing, or noted when the model refuses it."""
    if any(value is None for value in values.values()):
        return None
    try:
        return factory(**values)
    except ValidationError as err:
        builder.note(f"{path}: unusable location ({err.errors()[0]['msg']})")
        return None


def document_location(
    builder: AnswerBuilder,
    shape: DocumentShape,
    index: int | None,
    start: int | None,
    end: int | None,
    path: str,
) -> Location | None:
    """A character, page or block range of the ``index``-th document given to the model."""
    factories: dict[str, Callable[[int, int], Location]] = {
        "char": lambda a, b: CharLocation(start=a, end=b, document_index=index),
        "page": lambda a, b: PageLocation(start_page=a, end_page=b, document_index=index),
        "block": lambda a, b: BlockLocation(start_block=a, end_block=b, document_index=index),
    }
    return checked_location(builder, factories[shape], path, a=start, b=end)
