"""Helpers shared by the tool-output extractors: the call context, field readers, HTML and dates.

Pages: a retrieved chunk that knows its page keeps it in ``extras["page_number"]`` as a 1-based
int (seed 001's ``pageNumber``), read by `page_number` from the loader's metadata; the loader's
own values stay beside it (``extras["page"]``, ``extras["page_label"]``) as they were given.
Post-hoc attribution points a citation of such a source that locates nothing finer at that
page (``PageLocation(start_page=p, end_page=p + 1)``).
"""

from __future__ import annotations

import contextlib
import email.utils
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from typing import Any

from pydantic import ValidationError

from unicite._text import int_of
from unicite.model import Source, SourceKind, SourceOrigin

__all__ = [
    "CONTENT_KEYS",
    "MCP_TOOL_RE",
    "MODIFIED_KEYS",
    "PUBLISHED_KEYS",
    "SNIPPET_KEYS",
    "TITLE_KEYS",
    "ToolCall",
    "as_mapping",
    "clean_snippet",
    "collect",
    "compact_json",
    "first_str",
    "first_value",
    "heading_title",
    "html_page",
    "is_url",
    "looks_like_html",
    "page_number",
    "parse_date",
    "score_of",
    "strip_tags",
    "url_in",
]

_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#]+\S*")


def is_url(value: object) -> bool:
    """Whether `value` is an absolute URL with a scheme and a host (any scheme)."""
    return isinstance(value, str) and _URL_RE.fullmatch(value.strip()) is not None


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """`value` when it is a mapping, else None."""
    return value if isinstance(value, Mapping) else None


def first_str(data: Mapping[str, Any], *keys: str) -> str | None:
    """The first non-blank string among `keys` of `data`, stripped."""
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


# --- HTML -------------------------------------------------------------------------------------

_TAG_RE = re.compile(r"<[A-Za-z/!][^<>]{0,500}>")
_SPACES_RE = re.compile(r"[ \t\r\f\v]+")
_BLANK_LINES_RE = re.compile(r"\n\s*\n(?:\s*\n)+")


def strip_tags(text: str) -> str:
    """Plain text of an HTML fragment such as a search snippet (``<strong>``, entities)."""
    return _SPACES_RE.sub(" ", html.unescape(_TAG_RE.sub("", text))).strip()


def clean_snippet(text: str | None) -> str | None:
    """A snippet without the HTML highlighting some APIs put in (``<strong>``, ``&amp;``)."""
    if text is None or ("<" not in text and "&" not in text):
        return text
    return strip_tags(text) or None


_HEADING_RE = re.compile(r"\s*#{1,2}[ \t]+(\S[^\n]*)")


def heading_title(text: str) -> str | None:
    """The title of a Markdown page: its leading ``#`` heading, when it starts with one."""
    match = _HEADING_RE.match(text)
    return match.group(1).strip().strip("#").strip() or None if match else None


def looks_like_html(text: str) -> bool:
    """Whether `text` is a whole HTML document rather than text that mentions a tag."""
    head = text.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html", "<?xml")) or (
        head.startswith("<") and "<body" in text[:5000].lower()
    )


_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object"})
_BLOCK = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "dd",
        "div",
        "dl",
        "dt",
        "figcaption",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "td",
        "th",
        "tr",
        "ul",
    }
)
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)


class _PageText(HTMLParser):
    """Collects the visible text and the title of an HTML page in one linear pass."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.h1_parts: list[str] = []
        self.meta: dict[str, str] = {}
        self._skip: list[str] = []
        self._in_title = False
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            values = dict(attrs)
            key = (values.get("property") or values.get("name") or "").lower()
            content = values.get("content")
            if key and content and key not in self.meta:
                self.meta[key] = content
            return
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP and tag not in _VOID:
            self._skip.append(tag)
        elif tag == "h1":
            self._in_h1 = True
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif self._skip and tag == self._skip[-1]:
            self._skip.pop()
        elif tag == "h1":
            self._in_h1 = False
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip:
            self.parts.append(data)
            if self._in_h1:
                self.h1_parts.append(data)


def html_page(text: str) -> tuple[str | None, str, dict[str, str]]:
    """Title, visible text and ``<meta>`` values of an HTML page; never raises."""
    parser = _PageText()
    # html.parser raises on a few malformed constructs; what it read until then is kept.
    with contextlib.suppress(Exception):
        parser.feed(text)
        parser.close()
    title = " ".join("".join(parser.title_parts).split()) or None
    if title is None:
        title = parser.meta.get("og:title") or " ".join("".join(parser.h1_parts).split()) or None
    lines = (_SPACES_RE.sub(" ", line).strip() for line in "".join(parser.parts).split("\n"))
    body = _BLANK_LINES_RE.sub("\n\n", "\n".join(lines)).strip()
    return title, body, parser.meta


# --- dates ------------------------------------------------------------------------------------

_ISO_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_MONTH_FIRST_RE = re.compile(r"([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})")
_DAY_FIRST_RE = re.compile(r"(\d{1,2})\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})")
_SLASH_RE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})")


def _zone(text: str | None) -> timezone:
    if not text or text.upper() == "Z":
        return timezone.utc
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def parse_date(value: object) -> datetime | None:
    """A timezone-aware datetime from what tools put in date fields, or None.

    Reads ISO 8601 (any number of fractional digits, ``Z`` or an offset), RFC 2822 (HTTP
    ``Last-Modified``), ``Mar 2, 2024``, ``2 March 2024`` and ``2024/03/02``; naive values are
    taken as UTC. Relative dates (``3 days ago``) give None: they cannot be pinned down
    without the time of the search.
    """
    if isinstance(value, datetime):
        return _aware(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 64:
        return None
    try:
        match = _ISO_RE.fullmatch(text)
        if match:
            year, month, day, hour, minute, second, fraction, zone = match.groups()
            micro = int((fraction or "0")[:6].ljust(6, "0"))
            return datetime(
                int(year),
                int(month),
                int(day),
                int(hour or 0),
                int(minute or 0),
                int(second or 0),
                micro,
                tzinfo=_zone(zone),
            )
        match = _SLASH_RE.fullmatch(text)
        if match:
            year, month, day = (int(g) for g in match.groups())
            return datetime(year, month, day, tzinfo=timezone.utc)
        for regex, order in ((_MONTH_FIRST_RE, (1, 2, 3)), (_DAY_FIRST_RE, (2, 1, 3))):
            match = regex.fullmatch(text)
            if match:
                month_name, day_text, year_text = (match.group(i) for i in order)
                month_number = _MONTHS.get(month_name.lower())
                if month_number is None:
                    return None
                return datetime(int(year_text), month_number, int(day_text), tzinfo=timezone.utc)
        if "," in text or text[-3:].upper() in {"GMT", "UTC"}:
            return _aware(email.utils.parsedate_to_datetime(text))
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    return None


def _text(value: object) -> str | None:
    """A stripped non-blank string, or None for blanks and whatever is not a string."""
    return value.strip() or None if isinstance(value, str) else None


# --- pages ------------------------------------------------------------------------------------


def _count(value: object) -> int | None:
    """A page count or index given as an int or as digits (``11``, ``"11"``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and len(value.strip()) <= 9:
        return int_of(value)
    return None


def page_number(metadata: Mapping[str, Any], *, bare_page: bool = True) -> int | None:
    """The 1-based page a retrieved chunk lies on, from its loader's metadata; None if unknown.

    - ``page_number`` is 1-based (Unstructured, LlamaParse, Gemini File Search): taken as it is.
    - ``page`` is the 0-based page index of LangChain's PDF loaders (PyPDF, PyMuPDF,
      PDFPlumber, PyPDFium2): page 11 is the 12th page, so 12. With ``bare_page=False`` it is
      only read beside a ``page_label`` (the PyPDF loader's pair): a lone ``page`` in free-form
      data (a Cohere document) may count from 0 or from 1, and is not guessed.
    - ``page_label`` is the label printed on the page (LlamaIndex's PDF reader, where it is the
      1-based page unless the PDF numbers its pages otherwise): used when it is a plain number
      and nothing above is given. Roman numerals and other labels give None.
    """
    given = _count(metadata.get("page_number"))
    if given is not None:
        return given if given >= 1 else None
    index = _count(metadata.get("page"))
    label = metadata.get("page_label")
    if index is not None and index >= 0 and (bare_page or isinstance(label, (str, int))):
        return index + 1
    from_label = _count(label)
    return from_label if from_label is not None and from_label >= 1 else None


# --- the call being read ----------------------------------------------------------------------

MCP_TOOL_RE = re.compile(r"^mcp(?:\.|__).", re.IGNORECASE)
"""Names of MCP tools as agents expose them: seed 001's ``mcp.<server>__<tool>`` and
``mcp__<server>__<tool>`` (Claude Code, Claude Agent SDK)."""


@dataclass
class ToolCall:
    """One tool call being read: who made it, with what arguments, and what went wrong.

    ``raw_kind`` is the kind of a source that holds the call's output as it is (output no
    reader recognised): ``"tool"``, ``"mcp"`` for an MCP tool's result (a tool named like
    `MCP_TOOL_RE`, or output that is an MCP ``CallToolResult``), ``"api"`` for an HTTP API's
    response. Recognised web pages and documents keep their own kinds whatever the transport.
    """

    tool: str
    call_id: str | None
    arguments: dict[str, Any]
    diagnostics: list[str] = field(default_factory=list)
    _origin: SourceOrigin | None = field(default=None, repr=False, compare=False)
    raw_kind: SourceKind = "tool"

    def __post_init__(self) -> None:
        if self.raw_kind == "tool" and MCP_TOOL_RE.match(self.tool):
            self.raw_kind = "mcp"

    @property
    def origin(self) -> SourceOrigin:
        """The `SourceOrigin` every source of this call carries (one shared object)."""
        if self._origin is None or self._origin.call_id != self.call_id:
            # The call id can be learned late, from a tool-message envelope.
            self._origin = SourceOrigin(tool=self.tool, call_id=self.call_id)
        return self._origin

    def note(self, message: str) -> None:
        """Record a diagnostic, prefixed with the tool's name."""
        self.diagnostics.append(f"{self.tool}: {message}")

    def argument_url(self) -> str | None:
        """The URL the call was asked to read, when its arguments name one."""
        for key in ("url", "uri", "link", "href", "page_url", "website_url"):
            value = self.arguments.get(key)
            if isinstance(value, str) and is_url(value):
                return value.strip()
        return None

    def source(
        self,
        *,
        kind: SourceKind,
        raw: Any,
        url: object = None,
        title: object = None,
        snippet: object = None,
        content: object = None,
        rank: object = None,
        provider_id: object = None,
        published: object = None,
        modified: object = None,
        extras: dict[str, Any] | None = None,
    ) -> Source | None:
        """Build a `Source` from fields read off tool output; None (with a diagnostic) if invalid.

        Fields come straight from untrusted output: blank strings and values of the wrong type
        count as missing; a date that cannot be parsed is kept as text in ``extras``.
        """
        title = _text(title)
        extras = {k: v for k, v in (extras or {}).items() if v is not None}
        published_at = parse_date(published)
        if published is not None and published_at is None:
            extras.setdefault("date", published)
        modified_at = parse_date(modified)
        if modified is not None and modified_at is None:
            extras.setdefault("modified", modified)
        fields: dict[str, Any] = {
            "kind": kind,
            "url": _text(url),
            "title": " ".join(title.split()) if title else None,
            "snippet": _text(snippet),
            "content": _text(content),
            "rank": rank if isinstance(rank, int) and not isinstance(rank, bool) else None,
            "provider_id": _text(provider_id),
            "published_at": published_at,
            "modified_at": modified_at,
            "origin": self.origin,
            "extras": extras,
            "raw": raw,
        }
        if not any(fields[key] for key in ("url", "title", "snippet", "content")):
            return None
        try:
            return Source(**fields)
        except ValidationError as err:
            self.note(f"dropped a result that is not a valid source: {err.errors()[0]['msg']}")
            return None


def shown(value: object) -> str:
    """``str(value)``, or a placeholder naming its type when even that fails."""
    try:
        return str(value)
    except RecursionError:
        return f"({type(value).__name__} nested too deeply to show)"
    except Exception:
        return f"({type(value).__name__} that cannot be shown)"


def compact_json(data: object) -> str:
    """Data as compact, readable JSON text (non-ASCII kept) for a raw tool-output source."""
    try:
        return json.dumps(data, ensure_ascii=False, separators=(", ", ": "), default=shown)
    except (TypeError, ValueError):
        pass
    except RecursionError:
        return f"({type(data).__name__} nested too deeply to show)"
    return shown(data)


# --- reading one result -----------------------------------------------------------------------

# The field names tools use, most specific first.
_URL_KEYS = ("url", "link", "href", "uri", "source_url", "sourceURL", "sourceUrl", "source")
TITLE_KEYS = ("title", "name", "heading", "page_title", "headline")
SNIPPET_KEYS = ("snippet", "description", "summary", "excerpt", "body", "abstract")
CONTENT_KEYS = ("raw_content", "page_content", "full_content", "markdown", "text", "full_text")
PUBLISHED_KEYS = (
    "published_date",
    "publishedDate",
    "datePublished",
    "published_at",
    "publishedAt",
    "published",
    "publishedTime",
    "page_age",
    "date",
    "created_at",
    "creation_date",
)
MODIFIED_KEYS = (
    "modified_at",
    "dateModified",
    "last_modified",
    "lastModified",
    "last_modified_date",
    "modifiedTime",
    "updated_at",
    "last_updated",
)
_SCORE_KEYS = ("score", "relevance_score", "similarity")


def url_in(data: Mapping[str, Any]) -> str | None:
    """The first absolute URL among the usual URL fields of a result."""
    for key in _URL_KEYS:
        value = data.get(key)
        if is_url(value):
            return str(value).strip()
    return None


def score_of(data: Mapping[str, Any]) -> float | None:
    """The tool's own relevance score of a result, when it gives one."""
    for key in _SCORE_KEYS:
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def first_value(data: Mapping[str, Any], keys: Sequence[str]) -> Any:
    """The first non-empty value among `keys`."""
    return next((data[key] for key in keys if data.get(key) not in (None, "")), None)


def collect(items: Iterable[Source | None]) -> list[Source]:
    """The sources that could be built, in order."""
    return [s for s in items if s is not None]
