"""The Gemini / Vertex AI reader registered with the dispatcher."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite.providers._base import CitationEvent, Provider, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers.gemini._content import content_response
from unicite.providers.gemini._interactions import (
    InteractionStream,
    looks_like_event,
    read_interaction,
)
from unicite.providers.gemini._response import ResponseReader
from unicite.providers.gemini._shape import (
    _GROUNDING_KEYS,
    _as_response,
    _looks_like_candidate,
    _looks_like_response,
    _plain,
    _type_name,
)
from unicite.providers.gemini._stream import GeminiStream
from unicite.providers.shapes import looks_like_interaction

__all__ = ["GEMINI", "GeminiProvider"]


class _EitherStream(StreamReader):
    """A Gemini stream of either API: the first event says which, and its reader reads them all."""

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(**options)
        self.provider = provider
        self._inner: StreamReader | None = None

    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        if self._inner is None:
            if looks_like_event(event):
                self._inner = InteractionStream(self.provider, **self.options)
            else:
                self._inner = GeminiStream(self.provider, **self.options)
            self._inner.diagnostics[:0] = self.diagnostics
            self.diagnostics = self._inner.diagnostics
        return self._inner.feed(event)

    def finish(self, builder: AnswerBuilder) -> None:
        if self._inner is None:
            GeminiStream(self.provider, **self.options).finish(builder)
        else:
            self._inner.finish(builder)


class GeminiProvider(Provider):
    """Gemini and Vertex AI ``GenerateContentResponse`` and Interactions API ``Interaction``.

    Both are read from google-genai objects or REST JSON. A bare candidate reads as a response
    holding only it, with any response-level fields (``usageMetadata``, ``modelVersion``...)
    merged into it kept at the response level: that is how frameworks keep a Gemini answer
    (LlamaIndex's ``raw``, each streamed chunk included).
    """

    name = "gemini"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A response, a bare candidate, or an interaction.

        A response has a ``candidates`` list, or only prompt feedback or usage; an interaction
        has typed ``steps`` (or ``outputs``).
        """
        return (
            _looks_like_response(data)
            or _looks_like_candidate(data)
            or looks_like_interaction(data)
        )

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A stream chunk (a whole response or a bare candidate), or an Interactions event.

        Interactions events have an ``event_type`` of ``interaction.*``, ``step.*`` or
        ``content.*``.
        """
        return (
            _looks_like_response(event) or _looks_like_candidate(event) or looks_like_event(event)
        )

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Read the candidate chosen by ``candidate=`` (the first by default), or an interaction."""
        settling = bool(options.get("settling", False))
        if looks_like_interaction(data):
            read_interaction(data, builder, settling=settling)
            return
        response = _plain(data)
        if not isinstance(response, Mapping):
            builder.note(f"expected a response object, got {_type_name(response)}")
            return
        reader = ResponseReader(builder, settling=settling)
        reader.response(_as_response(response), options.get("candidate", 0))

    def stream(self, **options: Any) -> StreamReader:
        """A reader of ``streamGenerateContent`` chunks or of an Interactions event stream."""
        return _EitherStream(self, **options)

    def from_content(
        self, content: str | list[Any], fields: Mapping[str, Any]
    ) -> Mapping[str, Any] | None:
        """The response a framework's content items and candidate fields came from.

        Content items are the candidate's parts, as Gemini writes them or as typed blocks
        (``text``, ``thinking``, ``executable_code``, ``code_execution_result``, ``image``);
        ``fields``: ``grounding_metadata``, ``citation_metadata``, ``finish_reason`` (either
        spelling) and ``model``. Without grounding metadata, LangChain's standard (v1) citations
        give it back from what they keep in ``extras["google_ai_metadata"]``.
        """
        return content_response(content, fields)

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """Fields holding grounding metadata."""
        return any(fields.get(key) is not None for key in _GROUNDING_KEYS)


GEMINI = GeminiProvider()
"""The Gemini / Vertex AI reader registered with the dispatcher."""
