"""What a provider reader is: detection, reading a final response, and reading its stream."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from unicite.model import Citation, Source
from unicite.providers._builder import AnswerBuilder

__all__ = ["CitationEvent", "Provider", "StreamReader"]


class CitationEvent(BaseModel):
    """A citation that became final while a stream was being read, with the sources it cites.

    Its offsets index the answer text as streamed so far, and are the offsets the finished answer
    will have.
    """

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    citation: Citation
    """The finished citation."""
    sources: list[Source]
    """The sources it cites, in its `source_ids` order."""


class StreamReader(ABC):
    """Incremental reader of one provider's stream events (already plain dicts).

    A reader keeps what the events say and, in `finish`, fills an `AnswerBuilder` exactly as the
    provider's final-response reader would, so a stream and its final response give equal answers.
    """

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.diagnostics: list[str] = []

    @abstractmethod
    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        """Take one event; return the citations it made final."""

    @abstractmethod
    def finish(self, builder: AnswerBuilder) -> None:
        """Fill `builder` with everything read so far (also after a stream cut short)."""


class Provider(ABC):
    """One provider's readers, registered with the dispatcher under `name`."""

    name: str

    @abstractmethod
    def detect(self, data: Mapping[str, Any]) -> bool:
        """Whether a final response looks like this provider's."""

    @abstractmethod
    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """Whether a stream event looks like this provider's."""

    @abstractmethod
    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final response; never raise on odd data."""

    @abstractmethod
    def stream(self, **options: Any) -> StreamReader:
        """A new reader for one stream."""
