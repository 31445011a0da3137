"""The dispatcher: recognise the provider, run its reader, apply the grounding policy."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, Iterable, Mapping
from typing import Any, Literal

from unicite._data import to_data
from unicite.exceptions import GroundingRequiredError, UsageError
from unicite.model import Citation, CitedAnswer
from unicite.providers._base import CitationEvent, Provider, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers._sse import iter_sse, looks_like_sse
from unicite.providers.anthropic import ANTHROPIC
from unicite.providers.gemini import GEMINI
from unicite.providers.openai import OPENAI_CHAT, OPENAI_RESPONSES
from unicite.providers.others import COHERE, PERPLEXITY

__all__ = [
    "PROVIDER_NAMES",
    "StreamCollector",
    "acollect_stream",
    "collect_stream",
    "detect_provider",
    "extract",
]

logger = logging.getLogger("unicite")

# Detection order matters: Perplexity answers are Chat Completions with extra fields.
_READERS: tuple[Provider, ...] = (
    OPENAI_RESPONSES,
    PERPLEXITY,
    OPENAI_CHAT,
    ANTHROPIC,
    GEMINI,
    COHERE,
)

PROVIDER_NAMES = ("openai", "anthropic", "gemini", "perplexity", "cohere")
"""Names accepted by ``provider=``; ``"google"`` and ``"vertex"`` are aliases of ``"gemini"``."""

_ALIASES = {"google": "gemini", "vertex": "gemini", "vertexai": "gemini", "claude": "anthropic"}

Require = Literal["citations"] | None


def _readers_for(provider: str | None) -> tuple[Provider, ...]:
    if provider is None:
        return _READERS
    if not isinstance(provider, str):
        raise UsageError(f"provider must be a string, got {type(provider).__name__}")
    name = _ALIASES.get(provider.lower(), provider.lower())
    readers = tuple(r for r in _READERS if r.name == name)
    if not readers:
        raise UsageError(
            f"unknown provider {provider!r}; expected one of {', '.join(PROVIDER_NAMES)}"
        )
    return readers


def _check_require(require: object) -> None:
    if require not in (None, "citations"):
        raise UsageError(f"require must be None or 'citations', got {require!r}")


def _provider_error(data: Mapping[str, Any]) -> str | None:
    """What an error body says, when `data` is one instead of a response.

    OpenAI and Gemini send ``{"error": {...}}``; Anthropic ``{"type": "error", "error": {...}}``;
    a Responses stream's ``error`` event has its message at the top level.
    """
    error = data.get("error")
    if not isinstance(error, Mapping):
        if data.get("type") != "error":
            return None
        error = data
    message = error.get("message")
    kind = next(
        (v for v in (error.get("type"), error.get("status"), error.get("code")) if v is not None),
        None,
    )
    if not isinstance(message, str) and kind is None:
        return None
    parts = [str(v) for v in (kind, message) if v is not None]
    return f"the provider returned an error: {': '.join(parts)}"


def detect_provider(response: object) -> str | None:
    """The provider a final response comes from, or None when the shape is unknown."""
    data, _ = to_data(response)
    if isinstance(data, Mapping):
        for reader in _READERS:
            if reader.detect(data):
                return reader.name
    return None


def _finish(
    builder: AnswerBuilder, *, strict: bool, require: Require, grounded: bool
) -> CitedAnswer:
    answer = builder.build(strict=strict)
    if grounded and not answer.citations:
        logger.warning(
            "%s: tools or search ran but no citation could be extracted",
            answer.provider or "provider",
        )
    if require == "citations" and not answer.citations:
        who = answer.provider or "the provider"
        if grounded:
            reason, why = "no citations", "grounding ran but the answer carries no citations"
        else:
            reason, why = "no grounding", "the response carries no grounding and no citations"
        raise GroundingRequiredError(f"{who}: {why}", provider=answer.provider, reason=reason)
    return answer


def extract(
    response: object,
    provider: str | None = None,
    *,
    strict: bool = False,
    require: Require = None,
    candidate: int = 0,
) -> CitedAnswer:
    """Turn a provider response into a `CitedAnswer`.

    Accepts SDK response objects (read through ``model_dump()``), dicts, JSON text, and SSE logs
    or lists of stream events (read as by `collect_stream`). Odd data never raises: it is dropped
    and reported in ``diagnostics``, unless ``strict=True`` (then `CitationError`).

    Args:
        response: The provider response.
        provider: Skip detection: one of `PROVIDER_NAMES`.
        strict: Raise `CitationError` instead of recording diagnostics.
        require: ``"citations"`` raises `GroundingRequiredError` when the answer has none.
        candidate: Which Gemini candidate to read (the first by default).
    """
    _check_require(require)
    readers = _readers_for(provider)
    if isinstance(response, (str, bytes, bytearray)):
        text = response.decode("utf-8", "replace") if not isinstance(response, str) else response
        if looks_like_sse(text):
            return collect_stream(
                text, provider, strict=strict, require=require, candidate=candidate
            )
    data, problem = to_data(response)
    if isinstance(data, (list, tuple)) and problem is None:
        return collect_stream(data, provider, strict=strict, require=require, candidate=candidate)
    if problem is None and not isinstance(data, Mapping):
        problem = f"expected a JSON object, got {type(data).__name__}"
    reader = None
    if problem is None:
        reader = next((r for r in readers if r.detect(data)), None)
        if reader is None and provider is not None:
            reader = readers[0]
        if reader is None:
            problem = _provider_error(data) or (
                "unrecognised response shape: not OpenAI, Anthropic, Gemini, Perplexity or Cohere"
            )
    builder = AnswerBuilder(reader.name if reader else (readers[0].name if provider else None))
    if reader is None or problem is not None:
        builder.note(problem or "unreadable response")
        return _finish(builder, strict=strict, require=require, grounded=False)
    try:
        reader.read(data, builder, candidate=candidate)
    except RecursionError:
        builder.note(f"the {reader.name} response is nested too deeply to read")
    except Exception as err:
        builder.note(f"internal error reading the {reader.name} response: {err!r}")
    return _finish(builder, strict=strict, require=require, grounded=builder.grounded)


class StreamCollector:
    """Reads a provider stream event by event and builds the final `CitedAnswer`.

    ``feed(event)`` accepts SDK event objects or parsed dicts and returns the citations that
    event made final; ``result()`` returns the answer, equal to `extract` on the final response.
    """

    def __init__(
        self,
        provider: str | None = None,
        *,
        strict: bool = False,
        require: Require = None,
        candidate: int = 0,
    ) -> None:
        _check_require(require)
        self._readers = _readers_for(provider)
        self._provider = provider
        self._strict = strict
        self._require = require
        self._options: dict[str, Any] = {"candidate": candidate}
        self._reader: Provider | None = None
        self._stream: StreamReader | None = None
        self._diagnostics: list[str] = []
        self._skipped = 0
        self._announced: list[Citation] = []

    def feed(self, event: object) -> list[CitationEvent]:
        """Take one stream event; return the citations it made final."""
        data, problem = to_data(event)
        if problem is not None or not isinstance(data, Mapping):
            self._diagnostics.append(
                problem or f"stream event is a {type(data).__name__}, not an object"
            )
            return []
        if self._stream is None:
            reader = next((r for r in self._readers if r.detect_event(data)), None)
            if reader is None:
                error = _provider_error(data)
                if error is not None:
                    self._diagnostics.append(error)
                self._skipped += 1
                return []
            self._reader = reader
            self._stream = reader.stream(**self._options)
        name = self._reader.name if self._reader else "provider"
        try:
            made = self._stream.feed(data)
        except RecursionError:
            self._diagnostics.append(f"a {name} stream event is nested too deeply to read")
            return []
        except Exception as err:
            self._diagnostics.append(f"internal error reading a {name} stream event: {err!r}")
            return []
        self._announced.extend(item.citation for item in made)
        return made

    def result(self) -> CitedAnswer:
        """The answer built from every event fed so far."""
        if self._reader is None or self._stream is None:
            name = self._readers[0].name if self._provider else None
            builder = AnswerBuilder(name)
            builder.diagnostics.extend(self._diagnostics)
            builder.note(
                f"no recognisable stream events ({self._skipped} skipped)"
                if self._skipped
                else "empty stream"
            )
            return _finish(builder, strict=self._strict, require=self._require, grounded=False)
        builder = AnswerBuilder(self._reader.name)
        builder.diagnostics.extend(self._diagnostics)
        try:
            self._stream.finish(builder)
        except RecursionError:
            builder.note(f"the {self._reader.name} stream is nested too deeply to read")
        except Exception as err:
            builder.note(f"internal error finishing the {self._reader.name} stream: {err!r}")
        seen = set(builder.diagnostics)
        for note in self._stream.diagnostics:
            if note not in seen:
                seen.add(note)
                builder.diagnostics.append(note)
        if self._announced:
            # A stream whose closing events contradict its deltas can revise what it announced.
            revised = _missing(self._announced, builder.build().citations)
            if revised:
                builder.note(
                    f"{revised} citation(s) announced while streaming are not in the final "
                    "answer: the stream's deltas disagree with its final text"
                )
        return _finish(
            builder, strict=self._strict, require=self._require, grounded=builder.grounded
        )


def _missing(announced: list[Citation], final: list[Citation]) -> int:
    """How many of the announced citations are not among the final ones.

    Equal citations share their span and sources, so each is compared with those only:
    linear in the number of citations, not quadratic.
    """
    by_key: dict[tuple[int, int, tuple[str, ...]], list[Citation]] = {}
    for citation in final:
        key = (citation.start, citation.end, tuple(citation.source_ids))
        by_key.setdefault(key, []).append(citation)
    return sum(
        1 for c in announced if c not in by_key.get((c.start, c.end, tuple(c.source_ids)), ())
    )


def _events(events: Iterable[object] | str | bytes, diagnostics: list[str]) -> Iterable[object]:
    if isinstance(events, (bytes, bytearray)):
        events = events.decode("utf-8", "replace")
    if isinstance(events, str):
        return iter_sse(events, diagnostics)
    if not isinstance(events, Iterable):
        raise UsageError(f"events must be stream events or an SSE log, got {type(events).__name__}")
    return events


def collect_stream(
    events: Iterable[object] | str | bytes,
    provider: str | None = None,
    *,
    strict: bool = False,
    require: Require = None,
    candidate: int = 0,
) -> CitedAnswer:
    """Build the answer from a whole stream: SDK events, dicts, or an SSE log as text.

    The result equals `extract` on the stream's final response.
    """
    collector = StreamCollector(provider, strict=strict, require=require, candidate=candidate)
    parse_problems: list[str] = []
    for event in _events(events, parse_problems):
        collector.feed(event)
    collector._diagnostics.extend(parse_problems)
    return collector.result()


async def acollect_stream(
    events: AsyncIterable[object],
    provider: str | None = None,
    *,
    strict: bool = False,
    require: Require = None,
    candidate: int = 0,
) -> CitedAnswer:
    """`collect_stream` for async streams (``AsyncStream`` of the SDKs, async generators)."""
    collector = StreamCollector(provider, strict=strict, require=require, candidate=candidate)
    if not isinstance(events, AsyncIterable):
        raise UsageError(f"events must be an async iterable, got {type(events).__name__}")
    async for event in events:
        collector.feed(event)
    return collector.result()
