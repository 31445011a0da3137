"""The Gemini / Vertex AI reader registered with the dispatcher, and its stream readers."""

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
from unicite.providers.gemini._stream import SettlingStream, _joined, _merge_candidate
from unicite.providers.shapes import looks_like_interaction

__all__ = ["GEMINI", "GeminiProvider", "GeminiStream"]


class GeminiStream(SettlingStream):
    """Rebuilds the final response from ``generateContent`` stream chunks.

    Text arrives in pieces and grounding on late chunks, whose segment offsets index the text of
    all chunks together; `finish` reads the rebuilt response exactly as a final one. Chunks may
    be bare candidates too, as frameworks keep them.
    """

    def __init__(self, provider: Provider | None = None, **options: Any) -> None:
        super().__init__(GEMINI if provider is None else provider, **options)
        self._top: dict[str, Any] = {}
        self._candidates: dict[int, dict[str, Any]] = {}
        self._finished: set[int] = set()
        self._blocked = False

    def _growing(self) -> bool:
        return self.options.get("candidate", 0) not in self._finished

    def response(self) -> dict[str, Any]:
        """The final response the chunks so far add up to."""
        response = dict(self._top)
        if self._candidates:
            response["candidates"] = [
                _joined(self._candidates[n]) for n in sorted(self._candidates)
            ]
        return response

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one chunk; True when it brings grounding, recitations or a finish."""
        chunk = _plain(event)
        if not isinstance(chunk, Mapping):
            self.diagnostics.append(f"stream chunk is a {_type_name(chunk)}, not an object")
            return False
        chunk = _as_response(chunk)
        for key, value in chunk.items():
            if key != "candidates":
                self._top[key] = value
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            self._blocked = True
        candidates = chunk.get("candidates", [])
        if not isinstance(candidates, list):
            self.diagnostics.append(
                f"stream chunk candidates: expected a list, got {_type_name(candidates)}"
            )
            return False
        settled = False
        for position, candidate in enumerate(candidates):
            if not isinstance(candidate, Mapping):
                self.diagnostics.append(
                    f"stream chunk candidates[{position}]: expected an object, "
                    f"got {_type_name(candidate)}"
                )
                continue
            number = candidate.get("index", 0)
            if isinstance(number, bool) or not isinstance(number, int):
                number = position
            _merge_candidate(self._candidates.setdefault(number, {}), candidate)
            if "finishReason" in candidate:
                self._finished.add(number)
            settled = settled or any(
                key in candidate
                for key in ("groundingMetadata", "citationMetadata", "finishReason")
            )
        return settled

    def problems(self) -> list[str]:
        """Candidates that never got their finishReason (a blocked prompt has none)."""
        unfinished = [n for n in sorted(self._candidates) if n not in self._finished]
        if self._blocked or not unfinished:
            return []
        return [
            "stream ended before a chunk with finishReason for candidate(s) "
            f"{', '.join(map(str, unfinished))}: the answer may be cut short"
        ]


class _EitherStream(StreamReader):
    """A Gemini stream of either API: the first event says which, and its reader reads them all."""

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(**options)
        self.provider = provider
        self._inner: StreamReader | None = None

    def _reader(self, event: Mapping[str, Any]) -> StreamReader:
        if self._inner is None:
            if looks_like_event(event):
                self._inner = InteractionStream(self.provider, **self.options)
            else:
                self._inner = GeminiStream(self.provider, **self.options)
            self._inner.diagnostics[:0] = self.diagnostics
            self.diagnostics = self._inner.diagnostics
        return self._inner

    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        return self._reader(event).feed(event)

    def collect(self, event: Mapping[str, Any]) -> None:
        self._reader(event).collect(event)

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
