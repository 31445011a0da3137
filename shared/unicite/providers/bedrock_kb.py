"""Amazon Bedrock Knowledge Bases: ``RetrieveAndGenerate`` answers and their stream.

A ``RetrieveAndGenerate`` response (``bedrock-agent-runtime``) holds the answer as
``output.text`` and its citations as ``citations[]``: each a ``generatedResponsePart``
(``textResponsePart``: the cited ``text`` and its ``span``) and the ``retrievedReferences``
that support it (chunks: ``content``, ``location``, ``metadata``). ``sessionId`` continues the
conversation and ``guardrailAction`` says whether a guardrail intervened.

Offsets: ``span.start`` is the first cited character and ``span.end`` the LAST one, inclusive:
on recorded responses ``textResponsePart.text == output.text[start:end + 1]`` (a 223-character
sentence at the start of the answer has span 0..222; the next, 245 characters after a space,
224..468). AWS documents neither the end's inclusiveness nor the unit. The reader takes the
span as code points first, then as UTF-16 code units and as UTF-8 bytes (the inclusive end,
then an exclusive one, in each unit), and keeps the first reading whose slice of the answer is
the cited text; when none is, the cited text's occurrence nearest the span stands for it (with
a diagnostic), and a cited text the answer does not hold is left uncited (with a diagnostic).
A citation without its text keeps the code-point inclusive reading.

Sources are the retrieved chunks, read by `unicite.sources.bedrock_kb_source`: a chunk cited
twice is one source. A citation of a paged chunk (``x-amz-bedrock-kb-document-page-number``)
points at its page. Every answer carries ``extras["grounded_effective"]`` (retrieval ran: the
response has its ``citations``), ``session_id`` and ``guardrail_action`` when given; an
intervening guardrail is a diagnostic.

``RetrieveAndGenerateStream`` events (``response["stream"]``, as boto3 yields them) are
``{"output": {"text"}}`` pieces of the answer, ``{"citation": {...}}`` citation events and
``{"guardrail": {"action"}}``; a citation event holds ``generatedResponsePart`` and
``retrievedReferences`` at its top level (the citation under its deprecated ``citation`` key is
read when they are missing). The session id is a response header, not an event: a streamed
answer has no ``session_id``. The stream has no closing event, so a stream cut short cannot
be told from a whole one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite._offsets import OffsetIndex
from unicite.model import PageLocation
from unicite.providers._base import CitationEvent, Provider, RebuildingStream, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.sources import bedrock_kb_source

__all__ = ["BEDROCK_KNOWLEDGE_BASES", "BedrockKnowledgeBasesProvider"]

_FIELDS = frozenset({"sessionId", "output", "citations", "guardrailAction", "ResponseMetadata"})
"""Top-level fields of a response the reader reads (``ResponseMetadata`` is boto3's)."""

_EVENTS = frozenset({"output", "citation", "guardrail"})
_ERRORS = frozenset(
    {
        "accessDeniedException",
        "badGatewayException",
        "conflictException",
        "dependencyFailedException",
        "internalServerException",
        "resourceNotFoundException",
        "serviceQuotaExceededException",
        "throttlingException",
        "validationException",
    }
)
"""Exceptions a ``RetrieveAndGenerateStream`` can send in place of an event."""


def _nearest(text: str, needle: str, near: int) -> int | None:
    """Start of the occurrence of `needle` in `text` nearest to `near`, or None."""
    if not needle:
        return None
    best: int | None = None
    position = text.find(needle)
    while position >= 0:
        if best is None or abs(position - near) < abs(best - near):
            best = position
        position = text.find(needle, position + 1)
    return best


class _Spans:
    """Reads a citation's span against the answer text in each unit the API may count in."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._index: OffsetIndex | None = None

    def read(self, start: int, end: int, cited: str) -> tuple[int, int] | None:
        """The code-point span of the first reading whose slice is `cited`, or None."""
        text = self.text
        for last in (end + 1, end):  # the end inclusive (as recorded), then exclusive
            if 0 <= start <= last <= len(text) and text[start:last] == cited:
                return start, last
        if self._index is None:
            self._index = OffsetIndex(text)
        index = self._index
        for convert in (index.from_utf16, index.from_bytes):
            for last in (end + 1, end):
                lo, hi = convert(start), convert(last, ceil=True)
                if lo <= hi and text[lo:hi] == cited:
                    return lo, hi
        return None


class _KnowledgeBaseReader:
    """Reads one ``RetrieveAndGenerate`` response into a builder."""

    def __init__(self, builder: AnswerBuilder, *, settled: bool) -> None:
        self.builder = builder
        self.read = builder.read
        self.settled = settled
        self.spans: _Spans | None = None

    def response(self, data: Mapping[str, Any]) -> None:
        builder, read = self.builder, self.read
        session = read.text(data, "sessionId", "response")
        output = read.obj(data, "output", "response")
        text = read.text(output, "text", "response.output") if output is not None else None
        if output is None or text is None:
            builder.note("response: no output text")
        builder.append_text(text or "")
        citations = data.get("citations")
        retrieved = isinstance(citations, list)
        builder.grounded = retrieved
        for n, item in enumerate(read.items(data, "citations", "response")):
            self.citation(item, f"response.citations[{n}]")
        action = data.get("guardrailAction")
        if action is not None:
            builder.extras["guardrail_action"] = action
            if action == "INTERVENED":
                builder.note("a guardrail intervened: the answer is the guardrail's message")
            elif action != "NONE":
                builder.note(f"response: unknown guardrailAction {action!r}")
        builder.extras["grounded_effective"] = retrieved
        if session:
            builder.extras["session_id"] = session
        unknown = {k: v for k, v in data.items() if k not in _FIELDS}
        if unknown:
            builder.extras["unknown"] = unknown

    def citation(self, item: object, path: str) -> None:
        builder, read = self.builder, self.read
        if not isinstance(item, Mapping):
            builder.note(f"{path}: expected a citation object, got {type(item).__name__}")
            return
        ids: list[str] = []
        pages: list[PageLocation | None] = []
        for n, reference in enumerate(read.items(item, "retrievedReferences", path)):
            rpath = f"{path}.retrievedReferences[{n}]"
            if not isinstance(reference, Mapping):
                builder.note(
                    f"{rpath}: expected a reference object, got {type(reference).__name__}"
                )
                continue
            source = bedrock_kb_source(reference, diagnostics=builder.diagnostics, where=rpath)
            if source is not None:
                ids.append(builder.add_source(source))
                pages.append(source.page_location())
        if not ids:
            return  # a part of the answer no chunk supports: nothing to cite
        part = read.obj(item, "generatedResponsePart", path)
        gpath = f"{path}.generatedResponsePart"
        span_part = read.obj(part, "textResponsePart", gpath) if part is not None else None
        tpath = f"{gpath}.textResponsePart"
        if span_part is None:
            builder.note(f"{path}: no textResponsePart; its sources are kept uncited")
            return
        cited = read.text(span_part, "text", tpath)
        span = read.obj(span_part, "span", tpath)
        start = read.integer(span, "start", f"{tpath}.span") if span is not None else None
        end = read.integer(span, "end", f"{tpath}.span") if span is not None else None
        found = self.place(start, end, cited, tpath)
        if found is None:
            return
        builder.cite(found[0], found[1], ids, location=pages[0], raw=item, where=path)

    def place(
        self, start: int | None, end: int | None, cited: str | None, path: str
    ) -> tuple[int, int] | None:
        """The citation's span in the answer (see the module docstring), or None."""
        builder = self.builder
        if not cited:
            if start is None or end is None:
                builder.note(f"{path}: neither span nor text; its sources are kept uncited")
                return None
            return start, end + 1  # checked against the text by `AnswerBuilder.cite`
        if self.spans is None:
            self.spans = _Spans(builder.text)
        if start is not None and end is not None:
            found = self.spans.read(start, end, cited)
            if found is not None:
                return found
        if self.settled:
            return None  # moved by a search over the whole text: final only when the text is
        near = start if start is not None else 0
        moved = _nearest(self.spans.text, cited, near)
        where = f"{path}: text {cited!r} is not at span {start}..{end}"
        if moved is None:
            builder.note(f"{where} and is not in the answer; left uncited")
            return None
        builder.note(f"{where}; cited where the answer holds it, {moved}..{moved + len(cited)}")
        return moved, moved + len(cited)


def _read(data: Mapping[str, Any], builder: AnswerBuilder, *, settled: bool = False) -> None:
    _KnowledgeBaseReader(builder, settled=settled).response(data)


class _KnowledgeBaseStream(RebuildingStream):
    """Rebuilds the ``RetrieveAndGenerate`` response from ``RetrieveAndGenerateStream`` events.

    While streaming, citations are placed one at a time, in their order, into a builder that
    keeps the text and sources so far (the final answer is read whole by `finish`): a citation
    event costs its own references, not a reading of every citation before it. A citation
    whose text has not arrived waits, and those after it with it; it is tried again when a
    citation arrives or the text has grown by an eighth, so a long stream stays linear.
    """

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._pieces: list[str] = []
        self._citations: list[Any] = []
        self._guardrail: Any = None
        self._scratch = AnswerBuilder(provider.name)
        self._reader = _KnowledgeBaseReader(self._scratch, settled=True)
        self._unread: list[str] = []  # text the scratch builder has not been given yet
        self._length = 0
        self._placed = 0  # citations tried for good: announced, or never to be while streaming
        self._tried_at = 0  # the text's length when a waiting citation was last tried

    def take(self, event: Mapping[str, Any]) -> bool:
        """Merge one event; True when a citation arrived, or text one waits for may have."""
        for kind, body in event.items():
            if kind == "output":
                text = body.get("text") if isinstance(body, Mapping) else None
                if not isinstance(text, str):
                    self.diagnostics.append("output event without text")
                    continue
                self._pieces.append(text)
                self._unread.append(text)
                self._length += len(text)
                waiting = self._placed < len(self._citations)
                return waiting and 8 * (self._length - self._tried_at) >= self._tried_at
            if kind == "citation":
                self._citations.append(self._citation(body))
                return True
            if kind == "guardrail":
                action = body.get("action") if isinstance(body, Mapping) else None
                self._guardrail = action if action is not None else body
            elif kind in _ERRORS:
                message = body.get("message") if isinstance(body, Mapping) else None
                said = message if isinstance(message, str) else repr(body)
                self.diagnostics.append(f"stream error: {kind}: {said}")
            else:
                self.diagnostics.append(f"unknown stream event {kind!r}")
        return False

    @staticmethod
    def _citation(body: object) -> Any:
        """A citation event as the citation it stands for (top-level fields, else ``citation``)."""
        if not isinstance(body, Mapping):
            return body
        if "generatedResponsePart" in body or "retrievedReferences" in body:
            return {
                k: body[k] for k in ("generatedResponsePart", "retrievedReferences") if k in body
            }
        return body.get("citation", body)

    def response(self) -> dict[str, Any]:
        """The response the events so far add up to."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        data: dict[str, Any] = {
            "output": {"text": self._pieces[0] if self._pieces else ""},
            "citations": list(self._citations),
        }
        if self._guardrail is not None:
            data["guardrailAction"] = self._guardrail
        return data

    def announce(self) -> list[CitationEvent]:
        """The citations placed since the last call, in their order.

        A citation is placed when one reading of its span (see the module docstring) finds its
        text; one whose span ends past the text so far waits for more. One that no reading
        places though its text has arrived (it needs the search over the whole answer) and one
        with nothing to cite are left to the final reading.
        """
        scratch = self._scratch
        if self._unread:
            scratch.append_text("".join(self._unread))
            self._unread.clear()
            self._reader.spans = None  # the text grew
        self._tried_at = self._length
        events = []
        while self._placed < len(self._citations):
            item = self._citations[self._placed]
            declared = scratch.declared
            self._reader.citation(item, f"response.citations[{self._placed}]")
            if scratch.declared > declared:
                citation = scratch.made()
                sources = [s for s in map(scratch.ledger.get, citation.source_ids) if s is not None]
                events.append(CitationEvent(citation=citation, sources=sources))
            else:
                end = _span_end(item)
                if end is not None and end + 1 > scratch.length:
                    break  # its text has not all arrived
            self._placed += 1
        scratch.diagnostics.clear()
        return events


def _span_end(citation: object) -> int | None:
    part = citation.get("generatedResponsePart") if isinstance(citation, Mapping) else None
    text_part = part.get("textResponsePart") if isinstance(part, Mapping) else None
    span = text_part.get("span") if isinstance(text_part, Mapping) else None
    end = span.get("end") if isinstance(span, Mapping) else None
    return end if isinstance(end, int) and not isinstance(end, bool) else None


class BedrockKnowledgeBasesProvider(Provider):
    """Amazon Bedrock Knowledge Bases ``RetrieveAndGenerate`` answers and their stream."""

    name = "bedrock"
    api = "knowledge_bases"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A ``RetrieveAndGenerate`` response: ``output.text`` beside citations or a session."""
        output = data.get("output")
        if not isinstance(output, Mapping) or "text" not in output:
            return False
        return any(key in data for key in ("citations", "sessionId", "guardrailAction"))

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A ``RetrieveAndGenerateStream`` event: one ``output``/``citation``/``guardrail`` key."""
        if len(event) != 1:
            return False
        [(kind, body)] = event.items()
        if kind == "output":
            return isinstance(body, Mapping) and set(body) == {"text"}
        return kind in _EVENTS and isinstance(body, Mapping)

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        """Fill `builder` from a final ``RetrieveAndGenerate`` response."""
        _read(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        """A reader for one ``RetrieveAndGenerateStream``."""
        return _KnowledgeBaseStream(self, **options)


BEDROCK_KNOWLEDGE_BASES = BedrockKnowledgeBasesProvider()
"""The Bedrock Knowledge Bases reader registered with the dispatcher."""
