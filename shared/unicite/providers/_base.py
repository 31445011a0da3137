"""What a provider reader is: detection, reading a final response, and reading its stream."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from unicite.model import Citation, CitedAnswer, Source
from unicite.providers._builder import AnswerBuilder

__all__ = ["CitationEvent", "Provider", "RebuildingStream", "StreamReader"]


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
    Most readers rebuild the final response: `RebuildingStream` does the common part.
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

    def collect(self, event: Mapping[str, Any]) -> None:
        """Take one event of a stream read whole, whose citations nobody watches arrive.

        `finish` gives the same answer as after `feed`; a reader that announces citations by
        reading what it has so far skips that work here.
        """
        self.feed(event)


class Provider(ABC):
    """One provider's readers, registered with the dispatcher under `name`.

    Subclass it and pass an instance to `unicite.providers.register` to read a provider (or a
    gateway) unicite does not know; `AnswerBuilder` is what `read` fills, and `RebuildingStream`
    the usual base of what `stream` returns.
    """

    name: str
    """The provider's name: what ``extract(provider=...)`` selects and ``answer.provider`` says."""
    api: str | None = None
    """Which of the provider's APIs this reader reads, when it has several (OpenAI's
    ``"responses"`` and ``"chat"``); together with `name` it identifies the reader."""

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

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The final response that content blocks and some response fields add up to.

        Frameworks keep a provider's response as its content (a string, or a list of content
        blocks in the provider's own shape or a framework's normalised one) and a few of its
        top-level fields. A reader that knows how its API holds them returns the response they
        came from, for `read`; None means it does not read such content (the default).
        """
        return None

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """Whether content (see `from_content`) shows this provider's citation or tool shapes."""
        return False


def _events(answer: CitedAnswer, citations: list[Citation]) -> list[CitationEvent]:
    """`CitationEvent`s for citations of `answer`, with their sources."""
    return [
        CitationEvent(
            citation=citation,
            sources=[s for sid in citation.source_ids if (s := answer.source(sid)) is not None],
        )
        for citation in citations
    ]


class RebuildingStream(StreamReader):
    """A stream reader that rebuilds the final response and reads it like one.

    A provider's stream fills in two things: `take`, which merges one event into what it keeps,
    and `response`, the final response the events so far add up to. `finish` reads that response
    with the provider's own `Provider.read`, which is what makes a stream and its final response
    give equal answers; `problems` says what a stream cut short or filtered lacks.

    While streaming, each event `take` says may have settled citations makes `announce` read the
    rebuilt response into a scratch builder and return the citations not announced before. A
    stream with a cheaper, incremental way to find them overrides `announce`.
    """

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(**options)
        self.provider = provider
        self._told: Counter[str] = Counter()

    @abstractmethod
    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one event; return whether it may have made citations final."""

    @abstractmethod
    def response(self) -> dict[str, Any]:
        """The final response the events so far add up to."""

    def problems(self) -> list[str]:
        """What the rebuilt response lacks, as diagnostics (none when the stream is whole)."""
        return []

    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        """Take one event; return the citations it made final."""
        return self.announce() if self.take(event) else []

    def collect(self, event: Mapping[str, Any]) -> None:
        """Take one event without announcing: `finish` reads the rebuilt response anyway."""
        self.take(event)

    def read(self, builder: AnswerBuilder) -> None:
        """Read the rebuilt response into `builder` with the provider's final-response reader."""
        self.provider.read(self.response(), builder, **self.options)

    def announce(self) -> list[CitationEvent]:
        """Citations of the response so far that were not announced yet."""
        scratch = AnswerBuilder(self.provider.name)
        self.read(scratch)
        answer = scratch.build()
        seen: Counter[str] = Counter()
        fresh = []
        for citation in answer.citations:
            try:
                key = citation.model_dump_json()
            except ValueError:  # lone surrogates: not UTF-8, but still a usable key
                key = repr(citation.model_dump())
            seen[key] += 1
            if seen[key] > self._told[key]:
                self._told[key] += 1
                fresh.append(citation)
        return _events(answer, fresh)

    def finish(self, builder: AnswerBuilder) -> None:
        """Read the rebuilt response, then note what it lacks."""
        self.read(builder)
        for problem in self.problems():
            builder.note(problem)
