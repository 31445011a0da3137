"""Reading one citation marker: its style, the references it makes, and the sources they name."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import ValidationError

from unicite._text import sanitize_display, truncate
from unicite._urls import normalize_url
from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.sources._ledger import SourceLedger, as_source

__all__ = [
    "PARSE_STYLES",
    "MarkerKind",
    "ParseStyle",
    "SourceTable",
    "Token",
    "find_url",
    "looks_like_year",
    "read_token",
    "shown",
]

ParseStyle = Literal["auto", "brackets", "sids", "sup", "footnotes", "assistant", "links"]
"""Which markers `parse_markers` reads: every style (``"auto"``) or one of them."""

MarkerKind = Literal["brackets", "sids", "sup", "footnotes", "assistant", "links", "usage"]
"""What one marker is; ``"usage"`` is a ``[[USAGE:1,3]]`` declaration, not a citation."""

PARSE_STYLES: tuple[str, ...] = (
    "auto",
    "brackets",
    "sids",
    "sup",
    "footnotes",
    "assistant",
    "links",
)

_NUMBER_RE = re.compile(r"\d+")
_SEPARATOR_RE = re.compile(r"[ \t]*([,\u2013\-])[ \t]*")
_NUMS_RE = re.compile(r"\d{1,4}(?:[ \t]*[,\u2013\-][ \t]*\d{1,4}){0,40}")
_SINGLE_RE = re.compile(r"\[(" + _NUMS_RE.pattern + r")\]")
_DOUBLE_RE = re.compile(
    r"\[\[(?:([A-Za-z_][\w\-]{0,15}):[ \t]*)?(" + _NUMS_RE.pattern + r")\]\](?:\((.*)\))?",
    re.DOTALL,
)
_FOOTNOTE_RE = re.compile(r"\[\^([^\[\]\s]{1,40})\]")
_ASSISTANT_RE = re.compile(
    r"[\[\u3010]([^\u2020\u3010\u3011\[\]]*)(?:\u2020(.*))?[\]\u3011]", re.DOTALL
)
_TURN_RE = re.compile(r"\d{1,6}(?::\d{1,6}){0,3}")
_LINK_RE = re.compile(r"\[([^\[\]\n]{1,200})\]\(((?:[^()\s]|\([^()\s]{0,300}\))+)\)")
_SUP_OPEN_RE = re.compile(r"<sup\b([^<>]*)>(.*)</sup>", re.IGNORECASE | re.DOTALL)
_SIDS_ATTR_RE = re.compile(r"""\bdata-sids?\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.I)
_TAG_RE = re.compile(r"<[^<>]*>")
_URL_IN_TEXT_RE = re.compile(r"(?:https?://|www\.)[^\s<>\"'()\[\]]+", re.IGNORECASE)
_YEAR_LO, _YEAR_HI = 1000, 2999
_SHOWN = 60


def shown(marker: str) -> str:
    """A marker as a diagnostic shows it: sanitised, on one line, shortened."""
    return repr(truncate(sanitize_display(marker), _SHOWN))


@dataclass(frozen=True, slots=True)
class Token:
    """One marker in the text and what it refers to, before the references are resolved."""

    start: int
    end: int
    kind: MarkerKind
    ranges: tuple[tuple[int, int], ...] = ()
    """Numbers as written, each an inclusive ``(first, last)`` range; single numbers repeat."""
    label: str | None = None
    """A footnote label, or the name after ``†`` in an assistant marker."""
    urls: tuple[str, ...] = ()
    """Link targets: the links of a ``([site](url))`` marker, the URL of ``[[1]](url)``."""
    problems: tuple[str, ...] = ()
    """What is wrong with the marker's own syntax (reversed ranges, an empty list)."""
    prefix: str | None = None
    """``S`` in ``[[S:1]]``; the turn (``4:``) of an assistant marker; ``[[`` for ``[[1]]``."""
    separator: str = ","
    """How the marker separates numbers (``","`` or ``", "``), kept when it is rewritten."""
    ranged: bool = False
    """The marker wrote a range (``2-4``)."""
    ascii: bool = False
    """An assistant marker written with ``[…]`` instead of ``【…】``."""


def _ranges(spec: str) -> tuple[tuple[tuple[int, int], ...], tuple[str, ...], bool, str]:
    """Ranges, syntax problems, whether a range was written, and the separator of a list."""
    numbers = [int(n) for n in _NUMBER_RE.findall(spec)]
    separators = [m.group(1) for m in _SEPARATOR_RE.finditer(spec)]
    ranges: list[tuple[int, int]] = []
    problems: list[str] = []
    ranged = False
    k = 0
    while k < len(numbers):
        if k < len(separators) and separators[k] != ",":
            first, last = numbers[k], numbers[k + 1]
            ranged = True
            if first > last:
                problems.append(f"reversed range {first}-{last}")
            else:
                ranges.append((first, last))
            if k + 1 < len(separators) and separators[k + 1] != ",":
                problems.append(f"range {first}-{last} runs on into another range")
            k += 2
        else:
            ranges.append((numbers[k], numbers[k]))
            k += 1
    separator = ", " if ", " in spec or " ," in spec else ","
    return tuple(ranges), tuple(problems), ranged, separator


def _numeric(start: int, end: int, kind: MarkerKind, spec: str, **fields: Any) -> Token:
    ranges, problems, ranged, separator = _ranges(spec)
    if not ranges and not problems:
        problems = ("no source number",)
    return Token(
        start,
        end,
        kind,
        ranges=ranges,
        problems=problems,
        ranged=ranged,
        separator=separator,
        **fields,
    )


def read_token(text: str, start: int, end: int) -> Token | None:
    """Read the marker ``text[start:end]`` (a `MARKER_RE` match); None when it cites nothing.

    A superscript without numbers (``<sup>th</sup>``) and Markdown link text are not markers.
    """
    marker = text[start:end]
    head = marker[:1]
    if head == "(":
        links = tuple(m.group(2) for m in _LINK_RE.finditer(marker))
        return Token(start, end, "links", urls=links) if links else None
    if head == "<":
        return _read_sup(marker, start, end)
    if marker.startswith("[^"):
        m = _FOOTNOTE_RE.fullmatch(marker)
        return None if m is None else Token(start, end, "footnotes", label=m.group(1))
    if marker.startswith("[["):
        m = _DOUBLE_RE.fullmatch(marker)
        if m is None:
            return None
        name, spec, url = m.group(1), m.group(2), m.group(3)
        urls = (url,) if url else ()
        if name is None:
            return _numeric(start, end, "brackets", spec, urls=urls, prefix="[[")
        kind: MarkerKind = "usage" if name.upper() == "USAGE" else "sids"
        return _numeric(start, end, kind, spec, urls=urls, prefix=name)
    if head == "\u3010" or "\u2020" in marker:
        return _read_assistant(marker, start, end)
    m = _SINGLE_RE.fullmatch(marker)
    return None if m is None else _numeric(start, end, "brackets", m.group(1))


def _read_sup(marker: str, start: int, end: int) -> Token | None:
    m = _SUP_OPEN_RE.fullmatch(marker)
    if m is None:
        return None
    attrs, inner = m.group(1), m.group(2)
    attr = _SIDS_ATTR_RE.search(attrs)
    if attr is not None:
        spec = next(v for v in attr.groups() if v is not None).strip()
        if not spec:
            return Token(start, end, "sup", problems=("empty data-sids",))
        if not _NUMBER_RE.search(spec):
            return Token(start, end, "sup", problems=(f"unreadable data-sids {spec[:40]!r}",))
        return _numeric(start, end, "sup", spec)
    plain = _TAG_RE.sub("", inner)
    cleaned = plain.replace("[", " ").replace("]", " ").strip()
    if not cleaned:
        return None
    compact = re.sub(r"\s*,\s*|\s+", ",", cleaned)
    if _NUMS_RE.fullmatch(compact) is None:
        return None
    return _numeric(start, end, "sup", compact)


def _read_assistant(marker: str, start: int, end: int) -> Token | None:
    m = _ASSISTANT_RE.fullmatch(marker)
    if m is None:
        return None
    head, label = m.group(1), m.group(2)
    turn = head.strip() if _TURN_RE.fullmatch(head.strip()) else None
    ranges: tuple[tuple[int, int], ...] = ()
    prefix = None
    if turn is not None:
        parts = turn.split(":")
        index = int(parts[-1])
        ranges = ((index, index),)
        prefix = ":".join(parts[:-1]) or None
    return Token(
        start,
        end,
        "assistant",
        ranges=ranges,
        label=None if label is None else label.strip(),
        prefix=prefix,
        ascii=marker.startswith("["),
    )


def looks_like_year(token: Token) -> bool:
    """``[2024]``: a lone bracketed number (or range) that only a year would write."""
    return (
        token.kind == "brackets"
        and token.prefix is None
        and bool(token.ranges)
        and all(lo >= _YEAR_LO and hi <= _YEAR_HI for lo, hi in token.ranges)
    )


# --- sources ------------------------------------------------------------------------------------


def _name_keys(source: Source) -> Iterable[str]:
    for value in (source.title, source.id, source.provider_id):
        if value:
            yield value.strip().casefold()
    if source.url:
        path = urlsplit(source.url).path if "://" in source.url else source.url
        name = unquote(path.rstrip("/").rsplit("/", 1)[-1])
        if name:
            yield name.casefold()


class SourceTable:
    """The sources an answer may cite, addressed by number, URL, id or name.

    Input positions are kept even when two entries share an id: both numbers then cite the
    first entry, and the answer lists it once.
    """

    def __init__(self, sources: object, base: int) -> None:
        self.base = base
        self.notes: list[str] = []
        self.sources: list[Source] = []
        self.by_position: list[str] = []
        self.by_id: dict[str, str] = {}
        self._by_url: dict[str, str] | None = None
        self._by_name: dict[str, str] | None = None
        first_position: dict[str, int] = {}
        for position, item in enumerate(_source_list(sources)):
            source = _as_source(item, position)
            if source.id in self.by_id:
                first = first_position[source.id] + base
                self.notes.append(
                    f"sources {first} and {position + base} have the same id {source.id!r}; "
                    "both numbers cite it"
                )
            else:
                first_position[source.id] = position
                self.by_id[source.id] = source.id
                self.sources.append(source)
            self.by_position.append(source.id)

    # URL and name lookups are built on first use: most answers cite by number only.
    @property
    def by_url(self) -> dict[str, str]:
        """Source ids by normalized URL."""
        if self._by_url is None:
            self._by_url = {}
            for source in self.sources:
                if source.url:
                    self._by_url.setdefault(normalize_url(source.url), source.id)
        return self._by_url

    @property
    def by_name(self) -> dict[str, str]:
        """Source ids by casefolded title, id, provider id or file name."""
        if self._by_name is None:
            self._by_name = {}
            for source in self.sources:
                for key in _name_keys(source):
                    self._by_name.setdefault(key, source.id)
        return self._by_name

    def __len__(self) -> int:
        return len(self.by_position)

    def number(self, n: int) -> str | None:
        """The id of source number ``n`` (counted from `base`), or None."""
        index = n - self.base
        return self.by_position[index] if 0 <= index < len(self.by_position) else None

    def url(self, url: str) -> str | None:
        """The id of the source with this URL (compared normalized), or None."""
        return self.by_url.get(normalize_url(url.strip().strip("<>")))

    def name(self, name: str) -> str | None:
        """The id of the source with this title, id or file name (case-insensitive), or None."""
        return self.by_name.get(name.strip().casefold())

    def resolve_ranges(self, ranges: Sequence[tuple[int, int]], problems: list[str]) -> list[str]:
        """Ids named by numbered ranges; what cannot be resolved goes to ``problems``."""
        ids: list[str] = []
        seen: set[int] = set()
        count = len(self.by_position)
        last = self.base + count - 1
        for lo, hi in ranges:
            if lo < self.base:
                if self.base == 1 and lo == 0:
                    problems.append(
                        "source 0 in 1-based numbering (use base=0 for 0-based producers)"
                    )
                else:
                    problems.append(f"source {lo} is below {self.base}")
            if hi > last:
                problems.append(_out_of_range(max(lo, last + 1), hi, count))
            duplicated = False
            for n in range(max(lo, self.base), min(hi, last) + 1):
                if n in seen:
                    duplicated = True
                    continue
                seen.add(n)
                sid = self.by_position[n - self.base]
                if sid not in ids:
                    ids.append(sid)
            if duplicated:
                problems.append(f"cites {lo if lo == hi else f'{lo}-{hi}'} twice")
        return ids


def _out_of_range(lo: int, hi: int, count: int) -> str:
    which = f"source {lo}" if lo == hi else f"sources {lo}-{hi}"
    return f"{which} out of range ({count} source{'' if count == 1 else 's'} given)"


def _source_list(sources: object) -> list[Source | Mapping[str, Any]]:
    if isinstance(sources, SourceLedger):
        return list(sources.sources)
    if isinstance(sources, (str, bytes, Mapping)) or not isinstance(sources, Iterable):
        raise UsageError(
            f"sources must be a list of Source objects or dicts, got {type(sources).__name__}"
        )
    items = list(sources)
    for item in items:
        if not isinstance(item, (Source, Mapping)):
            raise UsageError(f"expected a Source or a dict, got {type(item).__name__}")
    return items


def _as_source(item: Source | Mapping[str, Any], position: int) -> Source:
    try:
        return as_source(item)
    except (UsageError, ValidationError) as err:
        raise UsageError(f"sources[{position}]: {err}") from err


def find_url(text: str) -> str | None:
    """The first http(s) or ``www.`` URL in ``text``, trailing punctuation removed."""
    m = _URL_IN_TEXT_RE.search(text)
    return None if m is None else m.group().rstrip(".,;:!?")
