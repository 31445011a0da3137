"""The provider-neutral citation model: `Source`, `Citation`, `CitedAnswer` and source locations.

Every path into unicite (native provider citations, tool and retriever sources, text markers,
post-hoc attribution) ends in a `CitedAnswer`. Offsets are Python str indices into
`CitedAnswer.text`; the answer checks its own invariants when it is built.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticSerializationError, to_jsonable_python

from unicite._ids import citation_ids, stable_source_id
from unicite._offsets import OffsetIndex
from unicite._text import int_of
from unicite._urls import is_redirect_url, source_domain

__all__ = [
    "BlockLocation",
    "CharLocation",
    "Citation",
    "CitationOrigin",
    "CitedAnswer",
    "Location",
    "PageLocation",
    "SearchResultLocation",
    "Source",
    "SourceKind",
    "SourceOrigin",
    "UrlLocation",
]


class _Model(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid", frozen=True)


# --- where in a source a citation points ------------------------------------------------------


class CharLocation(_Model):
    """A character range in a plain-text source document (end exclusive)."""

    kind: Literal["char"] = "char"
    start: int = Field(ge=0)
    """First character of the cited range in the source's text."""
    end: int = Field(ge=0)
    """One past the last character of the cited range."""
    document_index: int | None = None
    """Position of the document in the request, when the provider reports it."""

    @model_validator(mode="after")
    def _ordered(self) -> CharLocation:
        if self.start > self.end:
            raise ValueError(f"char location start {self.start} > end {self.end}")
        return self


class PageLocation(_Model):
    """A page range in a paged document such as a PDF (1-based, end exclusive)."""

    kind: Literal["page"] = "page"
    start_page: int = Field(ge=0)
    """First cited page, 1-based."""
    end_page: int = Field(ge=0)
    """One past the last cited page: a citation of page 3 alone has start 3, end 4."""
    document_index: int | None = None
    """Position of the document in the request, when the provider reports it."""

    @model_validator(mode="after")
    def _ordered(self) -> PageLocation:
        if self.start_page > self.end_page:
            raise ValueError(f"page location start {self.start_page} > end {self.end_page}")
        return self


class BlockLocation(_Model):
    """A range of content blocks in a custom-content document (0-based, end exclusive)."""

    kind: Literal["block"] = "block"
    start_block: int = Field(ge=0)
    """First cited content block."""
    end_block: int = Field(ge=0)
    """One past the last cited content block."""
    document_index: int | None = None
    """Position of the document in the request, when the provider reports it."""

    @model_validator(mode="after")
    def _ordered(self) -> BlockLocation:
        if self.start_block > self.end_block:
            raise ValueError(f"block location start {self.start_block} > end {self.end_block}")
        return self


class SearchResultLocation(_Model):
    """A search result passed to the model, and optionally a block range inside it."""

    kind: Literal["search_result"] = "search_result"
    search_result_index: int = Field(ge=0)
    """Position of the search result among those given to the model."""
    start_block: int | None = Field(default=None, ge=0)
    """First cited content block of the result."""
    end_block: int | None = Field(default=None, ge=0)
    """One past the last cited content block."""


class UrlLocation(_Model):
    """A web page as a whole, identified by its URL."""

    kind: Literal["url"] = "url"
    url: str
    """The cited page's URL, as the provider gave it."""


Location = Annotated[
    CharLocation | PageLocation | BlockLocation | SearchResultLocation | UrlLocation,
    Field(discriminator="kind"),
]
"""Where in a source a citation points, discriminated by `kind`."""

SourceKind = Literal[
    "web", "document", "file", "search_result", "tool", "api", "mcp", "place", "other"
]
"""What a source is: a web page, a document given in the request, an uploaded file, a search
result block, a tool's output, an HTTP API's response, an MCP tool's result, a place, ...
(seed 001's ``web``, ``file``, ``api`` and ``mcp`` types among them)."""

CitationOrigin = Literal[
    "native",
    "marker",
    "posthoc-lexical",
    "posthoc-llm",
    "posthoc-embedding",
    "posthoc-nli",
    "manual",
]
"""How a citation came about: from the provider, from text markers, or attributed afterwards."""

# --- sources ------------------------------------------------------------------------------------


class SourceOrigin(_Model):
    """Which tool call brought a source in: the tool's name and, when known, the call's id."""

    tool: str = Field(min_length=1)
    """Name of the tool or retriever whose output held the source."""
    call_id: str | None = None
    """Id of the tool call (``call_…``, ``toolu_…``, a framework run id), when known."""


class Source(_Model):
    """Something an answer can cite: a web page, a document, a file, a tool result.

    Only `id` identifies a source; when it is not given it is derived from the provider id, else
    the normalized URL, else a hash of title and content, so the same source gets the same id on
    every run. `domain` and `redirect` are filled from the URL when not given.

    Seed-004 source rows are taken as they are: ``text`` is the `snippet`,
    ``published_time_iso`` / ``modified_time_iso`` the dates, ``objective_relevance`` the
    `relevance`; ``sid``, ``query_relevance`` and ``reasoning`` are kept in `extras` under their
    own names, as is any other key of a row that has a ``sid``. A value that does not fit its
    field is kept in `extras` under its row name instead of being dropped.
    """

    id: str = Field(default="", min_length=1)
    """Stable identifier, unique within an answer; derived from the other fields when empty."""
    kind: SourceKind = "web"
    """What the source is."""
    url: str | None = None
    """Where the source lives, exactly as received (display and links use a sanitized form)."""
    title: str | None = None
    """Human-readable title."""
    domain: str | None = None
    """Registrable domain of the URL (``bbc.co.uk`` for ``forums.bbc.co.uk``)."""
    snippet: str | None = None
    """A short preview of the source's text: cheap to show or to put in a prompt."""
    content: str | None = None
    """The full text of the source, when known: expensive, used for attribution."""
    provider_id: str | None = None
    """The provider's own identifier (file id, document index, chunk id), when it has one."""
    rank: int | None = None
    """Position among the results it came with (0 = first), when it came from a ranked list."""
    redirect: bool = False
    """The URL is a redirect (Vertex ``grounding-api-redirect``) that hides the real site."""
    relevance: float | None = Field(default=None, ge=0.0, le=1.0)
    """How relevant the source is to the task, from `unicite.sources.reconcile`, when scored."""
    published_at: datetime | None = None
    """When the source was first published, when known (naive values are taken as UTC)."""
    modified_at: datetime | None = None
    """When the source was last changed, when known (naive values are taken as UTC)."""
    origin: SourceOrigin | None = None
    """The tool call that first brought the source in, for sources from tools and retrievers."""
    extras: dict[str, Any] = Field(default_factory=dict)
    """Provider fields the model has no place for, kept rather than dropped."""
    raw: Any = Field(default=None, repr=False)
    """The untouched provider object, for forensics; never rendered."""

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = _from_seed_row(data) if _SEED_KEYS.intersection(data) else dict(data)
        url = data.get("url")
        url = url if isinstance(url, str) and url else None
        if not data.get("id"):
            provider_id = data.get("provider_id")
            data["id"] = stable_source_id(
                provider_id=provider_id if isinstance(provider_id, str) else None,
                url=url,
                title=data.get("title") if isinstance(data.get("title"), str) else None,
                content=_text_of(data),
            )
        if url is not None and "redirect" not in data:
            data["redirect"] = is_redirect_url(url)
        if data.get("domain") is None:
            data["domain"] = source_domain(url, data.get("title"), bool(data.get("redirect")))
        if "kind" not in data and url is None:
            data["kind"] = "document"
        return data

    def page_location(self) -> PageLocation | None:
        """The page this source lies on, as a citation location, when it is a page of a file.

        Paged chunks keep their 1-based page in ``extras["page_number"]`` (LangChain's 0-based
        ``page`` plus one, LlamaIndex's numeric ``page_label``, a document's ``page_number``):
        a citation of the chunk that locates no passage in it points at that page.
        """
        page = self.extras.get("page_number")
        if isinstance(page, bool) or not isinstance(page, int) or page < 1:
            return None
        return PageLocation(start_page=page, end_page=page + 1)


_SEED_KEYS = frozenset(
    {
        "sid",
        "text",
        "published_time_iso",
        "modified_time_iso",
        "objective_relevance",
        "o_relevance",
        "query_relevance",
        "q_relevance",
        "reasoning",
    }
)
"""Keys of seed-004 source rows (and of its reconciler's replies) that `Source` reads."""

_SEED_DATES = (("published_time_iso", "published_at"), ("modified_time_iso", "modified_at"))
_SEED_EXTRAS = {
    "sid": "sid",
    "query_relevance": "query_relevance",
    "q_relevance": "query_relevance",
    "reasoning": "reasoning",
}


_DATETIME: TypeAdapter[datetime] = TypeAdapter(datetime)


def _seed_date(value: object) -> datetime | None:
    """An ISO 8601 date of a seed row (``Z`` and offsets read; naive values are UTC)."""
    if not isinstance(value, (str, datetime)) or (isinstance(value, str) and not value.strip()):
        return None
    try:
        moment = _DATETIME.validate_python(value.strip() if isinstance(value, str) else value)
    except ValidationError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _seed_sid(value: object) -> object:
    """A seed ``sid`` as an int when it is one (``3``, ``3.0``, ``"3"``), else as given."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and (parsed := int_of(value)) is not None:
        return parsed
    return value


def _from_seed_row(row: dict[str, Any]) -> dict[str, Any]:
    """The `Source` fields of a seed-004 row; nothing in the row is lost.

    Seed keys map onto fields (``text`` → ``snippet``, ``*_time_iso`` → ``*_at``,
    ``objective_relevance`` → ``relevance``) or into ``extras`` (``sid``,
    ``query_relevance``, ``reasoning``). A value that cannot fill its field (the field is
    given too, or the value is not a date, not a score in [0, 1]) is kept in ``extras``
    under its row key. In a row with a ``sid`` (the seed's required key) any other key the
    model does not have goes to ``extras`` too; elsewhere an unknown key stays an error.
    """
    data = dict(row)
    given = data.get("extras")
    extras: dict[str, Any] = dict(given) if isinstance(given, dict) else {}

    def keep(key: str, value: object) -> None:
        if value is not None and value != "":
            extras.setdefault(key, value)

    if "text" in data:
        value = data.pop("text")
        if data.get("snippet") is None and (value is None or isinstance(value, str)):
            data["snippet"] = value or None
        else:
            keep("text", value)
    for key, field in _SEED_DATES:
        if key in data:
            value = data.pop(key)
            moment = _seed_date(value)
            if data.get(field) is None and moment is not None:
                data[field] = moment
            else:
                keep(key, value)
    for key in ("objective_relevance", "o_relevance"):
        if key in data:
            value = data.pop(key)
            score = (
                float(value)
                if isinstance(value, (int, float)) and not isinstance(value, bool)
                else None
            )
            if data.get("relevance") is None and score is not None and 0.0 <= score <= 1.0:
                data["relevance"] = score
            else:
                keep(key, value)
    for key, name in _SEED_EXTRAS.items():
        if key in data:
            value = data.pop(key)
            keep(name, _seed_sid(value) if key == "sid" else value)
    if "sid" in row:
        for key in [k for k in data if k not in Source.model_fields]:
            extras.setdefault(str(key), data.pop(key))
    if extras or given is not None:
        data["extras"] = extras if isinstance(given, dict) or given is None else given
    return data


def _text_of(data: dict[str, Any]) -> str | None:
    for key in ("content", "snippet"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


# --- citations ----------------------------------------------------------------------------------


class Citation(_Model):
    """A span of the answer text tied to the sources that support it."""

    start: int = Field(ge=0)
    """Start of the claim span: a Python str index into `CitedAnswer.text`."""
    end: int = Field(ge=0)
    """End of the claim span (exclusive)."""
    text: str
    """The cited answer text: always equal to ``answer.text[start:end]``."""
    source_ids: list[str] = Field(min_length=1)
    """Ids of the supporting sources, each one in `CitedAnswer.sources`."""
    quote: str | None = None
    """Text quoted from the source, when the provider or the attributor gives it."""
    location: Location | None = None
    """Where in the (first) cited source the support lies."""
    origin: CitationOrigin = "native"
    """How the citation came about."""
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    """Probability that the sources support the claim, when known."""
    verified: bool | None = None
    """Set by `unicite.verify`: the quote was found in the cited source (or, without a quote,
    the claim is supported by it); None when unchecked or the source has no text to check."""
    support: float | None = Field(default=None, ge=0.0, le=1.0)
    """Set by `unicite.verify`: calibrated probability that the cited source supports the claim."""
    marker_span: tuple[int, int] | None = None
    """Span of the citation marker in the text (``[1]``, an inline link), when there is one."""
    id: str | None = None
    """A stable id, unique within the answer (``ref-0``, ``ref-1``, …): the one given, else
    set when the answer is built, from the citation's place in it, and kept through every
    later copy (renumbering, JSON, citing again). None only outside an answer."""
    extras: dict[str, Any] = Field(default_factory=dict)
    """Provider fields the model has no place for."""
    raw: Any = Field(default=None, repr=False)
    """The untouched provider object, for forensics; never rendered."""

    @model_validator(mode="after")
    def _ordered(self) -> Citation:
        if self.start > self.end:
            raise ValueError(f"citation start {self.start} > end {self.end}")
        if self.marker_span is not None and not 0 <= self.marker_span[0] <= self.marker_span[1]:
            raise ValueError(f"marker span {self.marker_span} is not an ordered range")
        return self


# --- the answer ---------------------------------------------------------------------------------


class CitedAnswer(_Model):
    """Answer text, the sources it rests on, and citations tying spans of it to sources.

    Invariants, checked on construction: citation spans lie within `text` and slice to
    `Citation.text`; every cited source id resolves; source ids are unique. Citations are kept
    sorted by ``(start, end)``, each has an id unique in the answer (a citation without one,
    or repeating one held before it, gets ``ref-k`` from its place k, or the next free k),
    and a declared `sources_used` includes every cited source. Footnote ``n`` is
    ``sources[n - 1]``.
    """

    text: str = ""
    """The full answer text, as shown to the user."""
    sources: list[Source] = Field(default_factory=list)
    """Sources in display order."""
    citations: list[Citation] = Field(default_factory=list)
    """Citations sorted by ``(start, end)``."""
    provider: str | None = None
    """Which provider produced the answer (``"openai"``, ``"anthropic"``, ``"gemini"``, ...)."""
    model: str | None = None
    """The model that produced the answer, when reported."""
    diagnostics: list[str] = Field(default_factory=list)
    """What was odd or dropped while building the answer."""
    extras: dict[str, Any] = Field(default_factory=dict)
    """Answer-level provider data: search queries, search suggestions, usage, ..."""
    sources_used: list[str] | None = None
    """Ids of the sources the model used: those it declared (``[[USAGE:1,3]]`` tags), in the
    order declared, then every other source a citation cites, in text order (seed 004's
    ``sources_used``, the union of both). None when the answer carried no declaration."""

    _index: dict[str, int] = PrivateAttr(default_factory=dict)
    _offsets: OffsetIndex | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_invariants(self) -> CitedAnswer:
        index: dict[str, int] = {}
        problems: list[str] = []
        for position, source in enumerate(self.sources):
            if source.id in index:
                problems.append(f"duplicate source id {source.id!r}")
            index[source.id] = position
        size = len(self.text)
        for n, citation in enumerate(self.citations):
            if citation.end > size:
                problems.append(f"citation {n} ends at {citation.end}, past the text ({size})")
            elif self.text[citation.start : citation.end] != citation.text:
                problems.append(
                    f"citation {n} text does not match text[{citation.start}:{citation.end}]"
                )
            if citation.marker_span is not None and citation.marker_span[1] > size:
                problems.append(f"citation {n} marker span {citation.marker_span} is past the text")
            problems.extend(
                f"citation {n} cites unknown source id {sid!r}"
                for sid in citation.source_ids
                if sid not in index
            )
            if len(problems) > 20:
                break
        problems.extend(
            f"sources_used names unknown source id {sid!r}"
            for sid in self.sources_used or ()
            if sid not in index
        )
        if problems:
            raise ValueError("; ".join(problems))
        self.citations.sort(key=lambda c: (c.start, c.end))
        given = [c.id for c in self.citations]
        ids = citation_ids(given)
        if ids != given:
            # The model is frozen: the validator sets the ids in place of the missing ones.
            object.__setattr__(
                self,
                "citations",
                [
                    c if c.id == cid else c.model_copy(update={"id": cid})
                    for c, cid in zip(self.citations, ids, strict=True)
                ],
            )
        if self.sources_used is not None:
            used = dict.fromkeys(self.sources_used)
            used.update(dict.fromkeys(sid for c in self.citations for sid in c.source_ids))
            if len(used) != len(self.sources_used):
                # The model is frozen: the validator sets the union in place of the declaration.
                object.__setattr__(self, "sources_used", list(used))
        self._index = index
        return self

    def __eq__(self, other: object) -> bool:
        # Equality is about content: the private lookup caches must not make equal answers differ.
        if not isinstance(other, CitedAnswer):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    def replace(self, **changes: Any) -> CitedAnswer:
        """A copy with `changes` applied, validated like a new answer.

        Unlike ``model_copy(update=...)``, the copy checks every invariant again (spans slice
        to their text, cited ids resolve, ids are unique) and keeps citations sorted, so an
        edit cannot produce an answer that lies about its text.

        Raises:
            pydantic.ValidationError: A change names no field, or breaks an invariant.
        """
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        fields.update(changes)
        return type(self)(**fields)

    def _position(self, source_id: str) -> int | None:
        position = self._index.get(source_id)
        if position is not None and (
            position >= len(self.sources) or self.sources[position].id != source_id
        ):
            # A copy made with model_copy(update=...) skips validation; rebuild the index.
            self._index = {source.id: n for n, source in enumerate(self.sources)}
            position = self._index.get(source_id)
        return position

    def source(self, source_id: str) -> Source | None:
        """The source with id `source_id`, or None."""
        position = self._position(source_id)
        return None if position is None else self.sources[position]

    def footnote_number(self, source_id: str) -> int | None:
        """1-based footnote number of a source (its position in `sources`), or None."""
        position = self._position(source_id)
        return None if position is None else position + 1

    @property
    def has_inline_markers(self) -> bool:
        """Whether any citation has a marker in the text (else renderers append a Sources list)."""
        size = len(self.text)
        return any(
            c.marker_span is not None and c.marker_span[0] < c.marker_span[1] <= size
            for c in self.citations
        )

    def cited_sources(self) -> list[Source]:
        """Sources that at least one citation cites, in display order."""
        cited = {sid for citation in self.citations for sid in citation.source_ids}
        return [source for source in self.sources if source.id in cited]

    def _offset_index(self) -> OffsetIndex:
        if self._offsets is None:
            self._offsets = OffsetIndex(self.text)
        return self._offsets

    def utf16_span(self, citation: Citation) -> tuple[int, int]:
        """A citation's span in UTF-16 code units, as JavaScript indexes strings."""
        index = self._offset_index()
        return index.to_utf16(citation.start), index.to_utf16(citation.end)

    def byte_span(self, citation: Citation) -> tuple[int, int]:
        """A citation's span in UTF-8 bytes of the text."""
        index = self._offset_index()
        return index.to_bytes(citation.start), index.to_bytes(citation.end)

    def span_from_utf16(self, start: int, end: int) -> tuple[int, int]:
        """Str indices of a UTF-16 code-unit span of the text."""
        index = self._offset_index()
        return index.from_utf16(start), index.from_utf16(end, ceil=True)

    def span_from_bytes(self, start: int, end: int) -> tuple[int, int]:
        """Str indices of a UTF-8 byte span of the text."""
        index = self._offset_index()
        return index.from_bytes(start), index.from_bytes(end, ceil=True)

    def to_json(self, *, indent: int | None = None) -> str:
        """The canonical JSON form; `from_json` reads it back unchanged.

        Text with lone surrogates (which JSON escapes allow and UTF-8 cannot hold) is written
        with JSON unicode escapes. In `extras` and `raw`, a value JSON cannot hold is written as
        its ``repr`` (NaN and infinity as null) and nesting deeper than 200 levels is cut short;
        never raises.
        """
        if not _surrogate_keys(self):
            try:
                return self.model_dump_json(indent=indent)
            except (PydanticSerializationError, ValueError):
                pass
        # The free-form fields (`extras`, `raw`) may hold anything a provider sent: lone
        # surrogates in keys, bytes, NaN, nesting deeper than the serializer goes. They are
        # made plain JSON here; the typed fields are dumped as usual.
        data = self.model_dump(mode="json", exclude=_FREE_FORM, fallback=repr)
        data["extras"] = _json_safe(self.extras)
        for key in ("sources", "citations"):
            for dumped, item in zip(data[key], getattr(self, key), strict=True):
                dumped["extras"] = _json_safe(item.extras)
                dumped["raw"] = _json_safe(item.raw)
        data = _in_field_order(data, self)
        separators = (",", ":") if indent is None else (",", ": ")
        return json.dumps(data, ensure_ascii=True, indent=indent, separators=separators)

    @classmethod
    def from_json(cls, data: str | bytes) -> CitedAnswer:
        """Read an answer written by `to_json` (invariants are checked again)."""
        try:
            return cls.model_validate_json(data)
        except ValidationError as err:
            if not any(e["type"] == "json_invalid" for e in err.errors()):
                raise
            try:
                # The strict JSON parser refuses lone-surrogate escapes; the stdlib reads them.
                loaded = json.loads(data)
            except (ValueError, RecursionError):
                raise err from None
            return cls.model_validate(loaded)


# --- JSON for the free-form fields ----------------------------------------------------------------

_FREE_FORM: Any = {
    "extras": True,
    "sources": {"__all__": {"extras", "raw"}},
    "citations": {"__all__": {"extras", "raw"}},
}
_JSON_DEPTH = 200
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _surrogate_keys(answer: CitedAnswer) -> bool:
    """Whether an `extras` key holds a lone surrogate (the serializer would replace it)."""
    return any(
        isinstance(key, str) and _SURROGATE_RE.search(key) is not None
        for extras in (
            answer.extras,
            *(s.extras for s in answer.sources),
            *(c.extras for c in answer.citations),
        )
        for key in extras
    )


def _json_safe(value: Any, depth: int = 0) -> Any:
    """`value` as plain JSON data, whatever it holds.

    Non-finite floats become null, other non-JSON values their ``repr``, and anything nested
    deeper than `_JSON_DEPTH` levels a short placeholder.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (dict, list, tuple)) and depth >= _JSON_DEPTH:
        return f"<{type(value).__name__} nested too deeply>"
    if isinstance(value, dict):
        return {
            key if isinstance(key, str) else str(key): _json_safe(item, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_json_safe(item, depth + 1) for item in value]
    try:
        return _json_safe(to_jsonable_python(value), depth + 1)
    except Exception:
        return repr(value)


def _in_field_order(data: dict[str, Any], model: BaseModel) -> dict[str, Any]:
    """`data` (a dump of `model`) with its keys back in the order the fields are declared."""
    return {name: data[name] for name in type(model).model_fields if name in data}
