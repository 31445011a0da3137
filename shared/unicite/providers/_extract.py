"""The dispatcher: recognise the provider, run its reader, apply the grounding policy."""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import AsyncIterable, Iterable, Mapping
from typing import Any, Literal

from unicite._data import to_data, to_plain
from unicite.exceptions import GroundingRequiredError, UsageError
from unicite.model import Citation, CitedAnswer
from unicite.providers._base import CitationEvent, Provider, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers._eventstream import iter_eventstream, looks_like_eventstream
from unicite.providers._forensics import debug_grounding
from unicite.providers._registry import registered
from unicite.providers._sse import iter_sse, looks_like_sse

__all__ = [
    "PROVIDER_NAMES",
    "StreamCollector",
    "acollect_stream",
    "collect_stream",
    "detect_provider",
    "extract",
    "extract_content",
    "read_response",
]

logger = logging.getLogger("unicite")

PROVIDER_NAMES = (
    "xai",
    "openai",
    "anthropic",
    "gemini",
    "perplexity",
    "azure",
    "mistral",
    "cohere",
    "bedrock",
)
"""Names of the built-in providers, accepted by ``provider=`` with those of registered ones;
``"google"`` and ``"vertex"`` are aliases of ``"gemini"``, ``"claude"`` of ``"anthropic"``,
``"grok"`` of ``"xai"``."""

_ALIASES = {
    "google": "gemini",
    "vertex": "gemini",
    "vertexai": "gemini",
    "claude": "anthropic",
    "grok": "xai",
}

Require = Literal["citations"] | None


def _readers_for(provider: str | None) -> tuple[Provider, ...]:
    readers = registered()
    if provider is None:
        return readers
    if not isinstance(provider, str):
        raise UsageError(f"provider must be a string, got {type(provider).__name__}")
    name = provider.lower()
    found = tuple(r for r in readers if r.name.lower() == name)
    if not found and name in _ALIASES:
        found = tuple(r for r in readers if r.name.lower() == _ALIASES[name])
    if not found:
        names = ", ".join(dict.fromkeys(r.name for r in readers)) or "none registered"
        raise UsageError(f"unknown provider {provider!r}; expected one of {names}")
    return found


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


_FIRST_LINE_RE = re.compile(r"[^\r\n]*")
_DECODER = json.JSONDecoder()


def _looks_like_json_lines(text: str) -> bool:
    """Whether text is a JSON Lines log (one JSON object per line) rather than one document.

    It is when its first non-blank line is a whole JSON object and more text follows that
    line: a logged stream (``{"type": "response.output_text.delta", ...}`` per line) reads
    so, while a single JSON document, compact or pretty-printed, does not.
    """
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return False
    first = _FIRST_LINE_RE.match(stripped)
    line = first.group() if first is not None else stripped
    if len(line) == len(stripped) or not stripped[len(line) :].strip():
        return False
    try:
        _, end = _DECODER.raw_decode(line)
    except (ValueError, RecursionError):
        return False
    return not line[end:].strip()


def _is_stream_log(text: str) -> bool:
    """Whether text is a stream log every entry point reads as events: SSE or JSON Lines."""
    return looks_like_sse(text) or _looks_like_json_lines(text)


def detect_provider(response: object) -> str | None:
    """The provider a final response comes from, or None when the shape is unknown."""
    data, _ = to_data(response)
    if isinstance(data, Mapping):
        for reader in registered():
            if reader.detect(data):
                return reader.name
    return None


def _finish(
    builder: AnswerBuilder,
    *,
    strict: bool,
    require: Require,
    grounded: bool,
    response: object = None,
) -> CitedAnswer:
    answer = builder.build(strict=strict)
    debug_grounding(answer, response)
    if grounded and not answer.citations:
        _warn_uncited(answer.provider or "provider")
    if require == "citations" and not answer.citations:
        who = answer.provider or "the provider"
        if grounded:
            reason, why = "no citations", "grounding ran but the answer carries no citations"
        else:
            reason, why = "no grounding", "the response carries no grounding and no citations"
        raise GroundingRequiredError(f"{who}: {why}", provider=answer.provider, reason=reason)
    return answer


_warned: set[str] = set()
"""Providers already warned about in this process (see `_warn_uncited`)."""
_warned_lock = threading.Lock()


def _warn_uncited(provider: str) -> None:
    """Warn that tools or search ran but nothing was cited: once per process per provider.

    DESIGN's quiet rule: one warning per run, never one per answer, so a loop over responses
    (or a CLI command reading its input twice) warns once. A warning a filter of the logger
    drops (citing disabled, analytics counting) was not given: a later answer still warns.
    """
    with _warned_lock:
        if provider in _warned or not logger.isEnabledFor(logging.WARNING):
            return
        fn, lno, func, _ = logger.findCaller()
        record = logger.makeRecord(
            logger.name,
            logging.WARNING,
            fn,
            lno,
            "%s: tools or search ran but no citation could be extracted",
            (provider,),
            None,
            func,
        )
        if not logger.filter(record):
            return
        _warned.add(provider)
    logger.handle(record)


def extract(
    response: object,
    provider: str | None = None,
    *,
    strict: bool = False,
    require: Require = None,
    candidate: int = 0,
) -> CitedAnswer:
    """Turn a provider response into a `CitedAnswer`.

    Accepts SDK response objects (read through ``model_dump()``), dicts, JSON text, and stream
    logs (SSE, or JSON Lines: one event object per line, as text or bytes), lists of stream
    events, or a single stream event: those are read as by `collect_stream`, which takes the
    same inputs. Odd data never raises: it is dropped and reported in ``diagnostics``, unless
    ``strict=True`` (then `CitationError`).

    Args:
        response: The provider response.
        provider: Skip detection: the name of a registered provider (`PROVIDER_NAMES` for
            the built-in ones; see `register`).
        strict: Raise `CitationError` instead of recording diagnostics.
        require: ``"citations"`` raises `GroundingRequiredError` when the answer has none.
        candidate: Which Gemini candidate to read (the first by default).
    """
    _check_require(require)
    readers = _readers_for(provider)
    if isinstance(response, (bytes, bytearray)) and looks_like_eventstream(response):
        # An AWS event-stream body (Bedrock's streaming APIs), read as the stream it frames.
        return collect_stream(response, provider, strict=strict, require=require)
    if isinstance(response, (str, bytes, bytearray)):
        text = response.decode("utf-8", "replace") if not isinstance(response, str) else response
        if _is_stream_log(text):
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
        if reader is None and any(r.detect_event(data) for r in readers):
            # One stream event (a one-line JSON Lines log): read as the stream it starts.
            return collect_stream(
                [data], provider, strict=strict, require=require, candidate=candidate
            )
        if reader is None and provider is not None:
            reader = readers[0]
        if reader is None:
            problem = _provider_error(data) or (
                f"unrecognised response shape: not {_names(readers)}"
            )
    builder = AnswerBuilder(reader.name if reader else (readers[0].name if provider else None))
    if reader is None or problem is not None:
        builder.note(problem or "unreadable response")
        return _finish(builder, strict=strict, require=require, grounded=False, response=data)
    _read(reader, data, builder, candidate=candidate)
    return _finish(
        builder, strict=strict, require=require, grounded=builder.grounded, response=data
    )


_DISPLAY_NAMES = {"openai": "OpenAI", "xai": "xAI"}


def _names(readers: tuple[Provider, ...]) -> str:
    """``"OpenAI, Anthropic or Gemini"``: the readers' provider names, for a message."""
    names = list(dict.fromkeys(_DISPLAY_NAMES.get(r.name, r.name.capitalize()) for r in readers))
    if len(names) < 2:
        return "".join(names) or "any registered provider"
    return f"{', '.join(names[:-1])} or {names[-1]}"


def read_response(
    data: Mapping[str, Any],
    builder: AnswerBuilder,
    provider: str | None = None,
    *,
    candidate: int = 0,
) -> Provider | None:
    """Fill `builder` from a decoded final response, with the reader `extract` would choose.

    `extract` is this with an `AnswerBuilder` and its `build`; a sink of one's own (an
    `AnswerBuilder` subclass that counts instead of building, as `unicite.analytics` does)
    gets the same reading; a builder made with no provider name takes the reader's. Returns
    the reader, or None (and `builder` untouched) when no registered reader detects `data` as
    a final response.
    """
    reader = next((r for r in _readers_for(provider) if r.detect(data)), None)
    if reader is not None:
        if builder.provider is None:
            builder.provider = reader.name
        _read(reader, data, builder, candidate=candidate)
    return reader


def _read(
    reader: Provider, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any
) -> None:
    """Run one reader; what it raises becomes a diagnostic."""
    try:
        reader.read(data, builder, **options)
    except RecursionError:
        builder.note(f"the {reader.name} response is nested too deeply to read")
    except Exception as err:
        builder.note(f"internal error reading the {reader.name} response: {err!r}")


def _content_text(content: str | list[Any]) -> str:
    """The text of content no reader takes: strings and text blocks, joined."""
    if isinstance(content, str):
        return content
    pieces = []
    for block in content:
        if isinstance(block, str):
            pieces.append(block)
        elif isinstance(block, Mapping) and block.get("type") in (None, "text", "output_text"):
            text = block.get("text")
            if isinstance(text, str):
                pieces.append(text)
    return "".join(pieces)


def extract_content(
    content: object,
    provider: str | None = None,
    *,
    fields: Mapping[str, Any] | None = None,
    strict: bool = False,
    require: Require = None,
) -> CitedAnswer:
    """The `CitedAnswer` of a response kept, as frameworks keep one, as content plus fields.

    LangChain and LlamaIndex keep a provider's answer as its content (a string, or a list of
    content blocks: the provider's own, or a framework's normalised or standard ones) and a
    few of the response's top-level fields. Each provider's reader puts them back where its
    API has them (`Provider.from_content`) and reads the response they add up to, so the
    answer equals `extract` on the original response wherever the framework kept what counts.

    Args:
        content: A string or a list of content blocks (SDK objects are read as `to_data`).
        provider: The provider's name; None detects it from citation and tool shapes in the
            blocks (and grounding metadata in the fields).
        fields: The response's other fields as the provider names them (``id``, ``model``,
            ``status``, ``finish_reason``, ``stop_reason``, ``grounding_metadata``...); other
            keys are ignored.
        strict: Raise `CitationError` instead of recording diagnostics.
        require: ``"citations"`` raises `GroundingRequiredError` when the answer has none.

    Returns:
        The answer. When no reader takes the content (no provider given and none detected, or
        a provider whose readers read no content), its text, uncited, with ``provider`` None.

    Raises:
        UsageError: ``content`` is neither a string nor a list, ``fields`` is not a mapping,
            or ``provider`` names no registered provider.
    """
    _check_require(require)
    readers = _readers_for(provider)
    data = to_plain(content)
    if not isinstance(data, (str, list)):
        raise UsageError(
            f"content must be a string or a list of blocks, got {type(content).__name__}"
        )
    extra = to_plain(fields) if fields is not None else {}
    if not isinstance(extra, Mapping):
        raise UsageError(f"fields must be a mapping, got {type(fields).__name__}")
    for reader in readers:
        try:
            if provider is None and not reader.detect_content(data, extra):
                continue
            response = reader.from_content(data, extra)
        except Exception as err:
            builder = AnswerBuilder(reader.name)
            builder.note(f"internal error reading {reader.name} content: {err!r}")
            builder.append_text(_content_text(data))
            return _finish(builder, strict=strict, require=require, grounded=False)
        if response is None:
            continue
        builder = AnswerBuilder(reader.name)
        _read(reader, response, builder)
        return _finish(builder, strict=strict, require=require, grounded=builder.grounded)
    builder = AnswerBuilder(None)
    builder.append_text(_content_text(data))
    return _finish(builder, strict=strict, require=require, grounded=False)


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
        return self._take(event, announce=True)

    def _take(self, event: object, *, announce: bool) -> list[CitationEvent]:
        """`feed`; without `announce` (a stream read whole) nothing is announced."""
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
            if not announce:
                self._stream.collect(data)
                return []
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
        if looks_like_eventstream(events):
            return iter_eventstream(events, diagnostics)
        events = events.decode("utf-8", "replace")
    if isinstance(events, str):
        # SSE logs and JSON Lines logs alike (`iter_sse` reads lines holding a whole object).
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
    """Build the answer from a whole stream: SDK events, dicts, or a log as text or bytes.

    A log is SSE (``event:``/``data:`` lines) or JSON Lines (one event object per line), or,
    as bytes, an AWS event-stream body (Bedrock's ``ConverseStream``: binary messages, read as
    the events boto3 yields); `extract` and ``unicite extract FILE`` take the same logs and
    give the same answer. The result equals `extract` on the stream's final response.
    """
    collector = StreamCollector(provider, strict=strict, require=require, candidate=candidate)
    parse_problems: list[str] = []
    for event in _events(events, parse_problems):
        collector._take(event, announce=False)
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
        collector._take(event, announce=False)
    return collector.result()
