"""What the OpenAI Responses and Chat Completions readers share: annotations and their claims.

Both APIs annotate answer text with ``url_citation`` (flat in Responses, nested under its type's
key in Chat Completions), ``file_citation``, ``container_file_citation`` and ``file_path``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from unicite._segment import MARKER_RE, claim_span
from unicite.model import Citation, UrlLocation
from unicite.providers._base import CitationEvent, Provider, RebuildingStream
from unicite.providers._builder import AnswerBuilder

__all__ = [
    "NAME",
    "ClaimCache",
    "ClaimsKeptStream",
    "add_unique",
    "annotation",
    "announce_built",
    "citation_key",
    "claim_at",
    "claims_kept",
    "is_placeholder",
    "keep_unknown",
    "kind_name",
    "number_title",
    "url_source",
]

NAME = "openai"
# A bare Markdown link; parenthesised links ``([site](url))`` are matched by MARKER_RE.
_BARE_LINK_RE = re.compile(r"\[[^\[\]\n]{1,200}\]\([^\s]{1,2048}\)")
_TERMINATORS = frozenset(".!?\u2026\u3002\uff01\uff1f")
# A title that is only a marker number: xAI titles each annotation with its ``[[n]]`` number.
_NUMBER_TITLE_RE = re.compile(r"\s*\[{0,2}\s*(\d{1,4})\s*\]{0,2}\s*")


def kind_name(value: object) -> str:
    return type(value).__name__


def keep_unknown(builder: AnswerBuilder, path: str, value: Any, what: str) -> None:
    """Record an unknown item/part/annotation: one diagnostic, and its data in the extras."""
    label = value.get("type") if isinstance(value, Mapping) else None
    builder.note(f"{path}: unknown {what} {label!r}; kept in extras['unknown']")
    builder.extras.setdefault("unknown", []).append({"path": path, "value": value})


def add_unique(builder: AnswerBuilder, key: str, values: list[str]) -> None:
    if not values:
        return
    kept: list[str] = builder.extras.setdefault(key, [])
    kept.extend(value for value in values if value not in kept)


def number_title(title: object) -> int | None:
    """The marker number a title holds when it is nothing else (``"1"``, ``"[2]"``), else None.

    xAI puts the number of an annotation's ``[[n]](url)`` marker in its ``title``: that is not
    the page's title, so the source is shown by its domain or URL instead.
    """
    if not isinstance(title, str):
        return None
    match = _NUMBER_TITLE_RE.fullmatch(title)
    return int(match.group(1)) if match else None


def _body(ann: Mapping[str, Any]) -> Mapping[str, Any]:
    """The fields of a ``url_citation``: nested under its type's key (Chat) or flat (Responses)."""
    nested = ann.get("url_citation")
    return nested if isinstance(nested, Mapping) else ann


def is_placeholder(ann: object) -> bool:
    """Whether an annotation is a ``url_citation`` with the placeholder span ``0..0``.

    OpenRouter and other gateways send every annotation with ``start_index = end_index = 0``,
    often before any text: sources without a span, not citations of the answer's start.
    """
    if not isinstance(ann, Mapping) or ann.get("type") != "url_citation":
        return False
    body = _body(ann)
    start, end = body.get("start_index"), body.get("end_index")
    if isinstance(start, bool) or isinstance(end, bool):
        return False
    return isinstance(start, int) and isinstance(end, int) and start == end == 0


def _is_marker(span: str) -> bool:
    """Whether an annotated span is a citation marker (an inline link) rather than claim text."""
    stripped = span.strip()
    return bool(MARKER_RE.fullmatch(stripped) or _BARE_LINK_RE.fullmatch(stripped))


def _horizon(start: int, end: int) -> int:
    """How many characters of a text part decide an annotation's claim (see `_claim`)."""
    return start + 1 if start == end else end


_CLAIM_WINDOW = 4_096
"""How many characters before an annotation its claim is looked for in, at most."""


def _paragraph_start(text: str, pos: int) -> int:
    """Start of the paragraph holding ``pos``: a claim never crosses a blank line.

    Reading claims paragraph by paragraph keeps long answers with hundreds of citations linear.
    A claim is one sentence, so the search also stops `_CLAIM_WINDOW` characters before
    ``pos``: an answer written as one long paragraph (a long list with no blank line, say)
    stays linear too.
    """
    floor = max(0, pos - _CLAIM_WINDOW)
    cut = pos
    while True:
        newline = text.rfind("\n", floor, cut)
        if newline < 0:
            return floor
        # The line before this break is blank when only spaces separate it from the one before.
        k = newline
        while k > floor and text[k - 1] in " \t\r":
            k -= 1
        if k == 0 or text[k - 1] == "\n":
            return newline + 1
        cut = newline


ClaimCache = dict[tuple[int, int, str], tuple[int, int]]
"""Claims of a stream's annotations, by span and the paragraph text they were read from."""

_CLAIMS: ContextVar[ClaimCache | None] = ContextVar("unicite_openai_claims", default=None)


@contextmanager
def claims_kept(cache: ClaimCache) -> Iterator[None]:
    """Keep the claims located in this block in `cache`, and take those already there.

    A stream reads its annotations as their text arrives and its whole response again at the
    end: with one cache for both, each annotated claim is segmented once. A claim is kept under
    its span and the paragraph text it was read from, so a hit is the claim that text gives.
    """
    token = _CLAIMS.set(cache)
    try:
        yield
    finally:
        _CLAIMS.reset(token)


class ClaimsKeptStream(RebuildingStream):
    """An OpenAI stream whose claims located while announcing are taken by the final read."""

    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._claims: ClaimCache = {}

    def feed(self, event: Mapping[str, Any]) -> list[CitationEvent]:
        """Take one event; return the citations it made final (their claims are kept)."""
        with claims_kept(self._claims):
            return super().feed(event)

    def finish(self, builder: AnswerBuilder) -> None:
        """Read the rebuilt response, taking the claims located while announcing."""
        if not self._claims:
            super().finish(builder)
            return
        with claims_kept(self._claims):
            super().finish(builder)


def _claim_before(text: str, start: int, end: int) -> tuple[int, int]:
    """`claim_span` of a marker at ``text[start:end]``, reading only its paragraph up to ``end``.

    Inside `claims_kept`, a claim read from its paragraph alone is kept, and taken from there.
    """
    origin = _paragraph_start(text, start)
    paragraph = text[origin:end]
    cache = _CLAIMS.get()
    key = (start, end, paragraph)
    if cache is not None and (kept := cache.get(key)) is not None:
        return kept
    claim_start, claim_end = claim_span(paragraph, start - origin, end - origin)
    if claim_start == claim_end and origin > 0:
        # A paragraph holding only a follow-up offer: its claim is the paragraph before (read
        # from more than the paragraph: not kept).
        origin = _paragraph_start(text, origin - 1)
        claim_start, claim_end = claim_span(text[origin:end], start - origin, end - origin)
        return origin + claim_start, origin + claim_end
    span = origin + claim_start, origin + claim_end
    if cache is not None:
        cache[key] = span
    return span


def _claim(
    text: str, start: int, end: int, *, complete: bool
) -> tuple[tuple[int, int], tuple[int, int] | None] | None:
    """Claim span and marker span of an annotation over ``text[start:end]`` of one text part.

    Only ``text[:_horizon(start, end)]`` is read unless the marker leads its sentence, so a
    stream can place a citation as soon as that much text has arrived. Returns None when the
    claim needs text after the annotation and ``complete`` is False.
    """
    if start == end:
        # An insertion point (file_citation `index`, zero-width spans): the claim is the
        # sentence ending there, including the terminator the index often points at.
        stop = start + 1 if start < len(text) and text[start] in _TERMINATORS else start
        span = _claim_before(text, stop, stop)
        if span[0] == span[1]:
            if not complete:
                return None
            span = claim_span(text, stop, stop)
            if span[0] == span[1]:
                span = (start, start)
        return span, None
    if not _is_marker(text[start:end]):
        return (start, end), None
    span = _claim_before(text, start, end)
    if span[0] == span[1]:
        if not complete:
            return None
        span = claim_span(text, start, end)
        if span[0] == span[1]:
            # Nothing to claim around the link: cite the link itself.
            span = (start, end)
    return span, (start, end)


def claim_at(text: str, at: int) -> tuple[int, int]:
    """The claim a marker removed from ``text`` at ``at`` closed: the sentence ending there."""
    found = _claim(text, at, at, complete=True)
    return found[0] if found is not None else (at, at)


# --- annotations --------------------------------------------------------------------------


def _range(
    builder: AnswerBuilder, ann: Mapping[str, Any], text: str, path: str, *, complete: bool
) -> tuple[int, int] | Literal[False] | None:
    """The ``(start, end)`` of an annotation in its text part.

    None (with a diagnostic) when it has no usable span; False when the span reaches past the
    text so far and ``complete`` is False (a stream must wait for more text).
    """
    read = builder.read
    start = read.integer(ann, "start_index", path)
    end = read.integer(ann, "end_index", path)
    if start is None or end is None:
        builder.note(f"{path}: no start_index/end_index; source kept without a span")
        return None
    if not 0 <= start <= end:
        builder.note(f"{path}: span {start}..{end} is not a range; source kept without a span")
        return None
    if not complete and len(text) < _horizon(start, end):
        return False
    if end > len(text):
        builder.note(
            f"{path}: span {start}..{end} is outside its text part (0..{len(text)}); "
            "source kept without a span"
        )
        return None
    return start, end


def _extras(ann: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in ann.items() if key not in known}


_URL_KEYS = frozenset({"type", "url", "title", "content", "start_index", "end_index"})
_FILE_KEYS = frozenset({"type", "file_id", "filename", "index"})
_CONTAINER_KEYS = frozenset(
    {"type", "file_id", "filename", "container_id", "start_index", "end_index"}
)


def _cite_span(
    builder: AnswerBuilder,
    span: tuple[int, int],
    text: str,
    base: int,
    source_id: str,
    *,
    complete: bool,
    path: str,
    **fields: Any,
) -> bool:
    """Cite a span of one text part placed at ``base``; False when it must wait for more text."""
    if builder.locates_claims:
        found = _claim(text, span[0], span[1], complete=complete)
    else:
        found = span, None  # the claim only places the citation (see `_claim`)
    if found is None:
        return False
    (claim_start, claim_end), marker = found
    builder.cite(
        base + claim_start,
        base + claim_end,
        [source_id],
        marker_span=None if marker is None else (base + marker[0], base + marker[1]),
        where=path,
        **fields,
    )
    return True


def _url_fields(
    builder: AnswerBuilder, ann: Mapping[str, Any], path: str
) -> tuple[Mapping[str, Any], str, dict[str, Any]]:
    """The body of a ``url_citation``, its path, and what it carries beyond the known keys."""
    nested = builder.read.obj(ann, "url_citation", path)
    body: Mapping[str, Any] = nested if nested is not None else ann
    body_path = f"{path}.url_citation" if nested is not None else path
    extras = _extras(body, _URL_KEYS)
    if nested is not None:
        extras.update(_extras(ann, frozenset({"type", "url_citation"})))
    return body, body_path, extras


def _add_url_source(
    builder: AnswerBuilder, body: Mapping[str, Any], body_path: str, raw: Any
) -> tuple[str | None, int | None]:
    """Add the source a ``url_citation`` names: its id (None without a url) and title number."""
    read = builder.read
    url = read.text(body, "url", body_path)
    if not url:
        builder.note(f"{body_path}: url_citation without a url; dropped")
        return None, None
    title = read.text(body, "title", body_path)
    number = number_title(title)
    source: dict[str, Any] = {"kind": "web", "url": url, "raw": raw}
    if number is None:
        source["title"] = title
    # OpenRouter's web plugin gives the page text it searched in `content`.
    content = body.get("content")
    if isinstance(content, str) and content.strip():
        source["content"] = content
    return builder.add_source(source), number


def url_source(
    builder: AnswerBuilder, ann: Mapping[str, Any], path: str, *, raw: Any = None
) -> tuple[str | None, int | None]:
    """Read a ``url_citation`` as a source only (no span): its id and its title's number."""
    body, body_path, _ = _url_fields(builder, ann, path)
    return _add_url_source(builder, body, body_path, ann if raw is None else raw)


def _url_citation(
    builder: AnswerBuilder,
    ann: Mapping[str, Any],
    text: str,
    base: int,
    path: str,
    complete: bool,
    raw: Any,
) -> bool:
    body, body_path, extras = _url_fields(builder, ann, path)
    span = _range(builder, body, text, body_path, complete=complete)
    if span is False:
        return False
    sid, number = _add_url_source(builder, body, body_path, raw)
    if sid is None or span is None:
        return True
    if number is not None:
        extras["marker_number"] = number
        if not _number_agrees(builder, text[span[0] : span[1]], number, body_path):
            return True
    return _cite_span(
        builder,
        span,
        text,
        base,
        sid,
        complete=complete,
        path=path,
        location=UrlLocation(url=body["url"]),
        extras=extras,
        raw=raw,
    )


_SPAN_NUMBER_RE = re.compile(r"\[\[?(\d{1,4})\]")


def _number_agrees(builder: AnswerBuilder, span: str, number: int, path: str) -> bool:
    """Whether an annotated ``[[n]](url)`` / ``[n]`` marker carries its title's number.

    A span holding another number means the annotation and the text disagree: the source is
    kept, the span is not cited. A span holding no numbered marker says nothing either way.
    """
    match = _SPAN_NUMBER_RE.match(span.strip())
    if match is None or int(match.group(1)) == number:
        return True
    builder.note(
        f"{path}: title says marker [{number}] but its span holds {span.strip()[:40]!r}; "
        "source kept without a span"
    )
    return False


def _file_citation(
    builder: AnswerBuilder,
    ann: Mapping[str, Any],
    text: str,
    base: int,
    path: str,
    complete: bool,
    raw: Any,
) -> bool:
    read = builder.read
    index = read.integer(ann, "index", path)
    if index is not None and not complete and len(text) < _horizon(index, index):
        return False
    if index is not None and not 0 <= index <= len(text):
        builder.note(f"{path}: index {index} is outside its text part (0..{len(text)})")
        index = None
    file_id = read.text(ann, "file_id", path)
    sid = builder.add_source(
        {
            "kind": "file",
            "provider_id": file_id or None,
            "title": read.text(ann, "filename", path),
            "raw": raw,
        }
    )
    if index is None:
        return True
    return _cite_span(
        builder,
        (index, index),
        text,
        base,
        sid,
        complete=complete,
        path=path,
        extras={"index": index, **_extras(ann, _FILE_KEYS)},
        raw=raw,
    )


def _container_file_citation(
    builder: AnswerBuilder,
    ann: Mapping[str, Any],
    text: str,
    base: int,
    path: str,
    complete: bool,
    raw: Any,
) -> bool:
    read = builder.read
    span = _range(builder, ann, text, path, complete=complete)
    if span is False:
        return False
    container_id = read.text(ann, "container_id", path)
    sid = builder.add_source(
        {
            "kind": "file",
            "provider_id": read.text(ann, "file_id", path) or None,
            "title": read.text(ann, "filename", path),
            "extras": {"container_id": container_id} if container_id else {},
            "raw": raw,
        }
    )
    if span is None:
        return True
    extras = _extras(ann, _CONTAINER_KEYS)
    return _cite_span(
        builder, span, text, base, sid, complete=complete, path=path, extras=extras, raw=raw
    )


def _file_path(builder: AnswerBuilder, ann: Mapping[str, Any], path: str) -> None:
    # A file the answer produced; its `index` numbers files, not text: a source, no span.
    read = builder.read
    file_id = read.text(ann, "file_id", path)
    index = read.integer(ann, "index", path)
    builder.add_source(
        {
            "kind": "file",
            "provider_id": file_id or None,
            "title": file_id,
            "extras": {"file_path_index": index} if index is not None else {},
            "raw": ann,
        }
    )


def annotation(
    builder: AnswerBuilder,
    ann: object,
    text: str,
    base: int,
    path: str,
    *,
    complete: bool = True,
    raw: Any = None,
) -> bool:
    """Read one annotation of a text part that starts at ``base`` in the answer.

    With ``complete`` False (a stream whose part is still growing) it returns False, adding
    nothing, when the claim needs text that has not arrived yet. ``raw`` is the annotation as
    the provider sent it, when ``ann`` is a copy with its offsets moved (see `_inline`).
    """
    if not isinstance(ann, Mapping):
        builder.note(f"{path}: expected an object, got {kind_name(ann)}")
        return True
    kind = builder.read.text(ann, "type", path)
    given = ann if raw is None else raw
    if kind == "url_citation":
        return _url_citation(builder, ann, text, base, path, complete, given)
    if kind == "file_citation":
        return _file_citation(builder, ann, text, base, path, complete, given)
    if kind == "container_file_citation":
        return _container_file_citation(builder, ann, text, base, path, complete, given)
    if kind == "file_path":
        _file_path(builder, ann, path)
        return True
    keep_unknown(builder, path, ann, "annotation type")
    return True


def announce_built(builder: AnswerBuilder, after: int) -> list[CitationEvent]:
    """The citations a scratch builder holds, as events carrying their sources.

    ``after`` citations were announced before these, earlier in the text.
    """
    ledger = builder.ledger
    return [
        CitationEvent(
            citation=citation,
            sources=[s for sid in citation.source_ids if (s := ledger.get(sid)) is not None],
        )
        for citation in builder.citations(after=after)
    ]


def citation_key(citation: Citation) -> str:
    """What tells announced citations apart, as `RebuildingStream.announce` counts them."""
    try:
        return citation.model_dump_json()
    except ValueError:  # lone surrogates: not UTF-8, but still a usable key
        return repr(citation.model_dump())
