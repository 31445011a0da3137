"""The sources an answer's markers may cite, and how problems with a marker are shown.

Marker syntax itself (the pattern, `Token`, `read_token`) lives in `unicite._marker_syntax`;
it is re-exported here for the modules of this package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import ValidationError

from unicite._marker_syntax import MarkerKind, Token, expand_ranges, looks_like_year, read_token
from unicite._text import sanitize_display, truncate
from unicite._urls import normalize_url
from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.sources import SourceLedger, as_source, shown_numbers

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

ParseStyle = Literal["auto", "brackets", "sids", "sup", "footnotes", "assistant", "docs", "links"]
"""Which markers `parse_markers` reads: every style (``"auto"``) or one of them."""

PARSE_STYLES: tuple[str, ...] = (
    "auto",
    "brackets",
    "sids",
    "sup",
    "footnotes",
    "assistant",
    "docs",
    "links",
)

_URL_IN_TEXT_RE = re.compile(r"(?:https?://|www\.)[^\s<>\"'()\[\]]+", re.IGNORECASE)
_SHOWN = 60


def shown(marker: str) -> str:
    """A marker as a diagnostic shows it: sanitised, on one line, shortened."""
    return repr(truncate(sanitize_display(marker), _SHOWN))


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
        # Source ids by number (counted from `base`); None for a number the prompt never showed.
        self.by_position: list[str | None] = []
        self.by_id: dict[str, str] = {}
        self._by_url: dict[str, str] | None = None
        self._by_name: dict[str, str] | None = None
        self.numbered = False
        if isinstance(sources, Mapping):
            numbered = shown_numbers(sources)
        else:
            items = [_as_source(item, k) for k, item in enumerate(_source_list(sources))]
            numbered = None if isinstance(sources, SourceLedger) else shown_numbers(items)
        if numbered is None:
            entries: list[tuple[int, Source | None]] = [
                (k + base, source) for k, source in enumerate(items)
            ]
        else:
            # Numbers as the prompt showed them ({n: source}, or seed rows by sid): the gaps
            # are numbers no source answers to.
            self.numbered = True
            last = max(numbered, default=base - 1)
            entries = [(n, numbered.get(n)) for n in range(base, last + 1)]
        first_number: dict[str, int] = {}
        for n, source in entries:
            if source is None:
                self.by_position.append(None)
                continue
            if source.id in self.by_id:
                self.notes.append(
                    f"sources {first_number[source.id]} and {n} have the same id {source.id!r}; "
                    "both numbers cite it"
                )
            else:
                first_number[source.id] = n
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

    @property
    def results(self) -> list[str]:
        """Source ids in the order given (positions, for producers that count results)."""
        if self.numbered:
            return [source.id for source in self.sources]
        return [sid for sid in self.by_position if sid is not None]

    def number(self, n: int) -> str | None:
        """The id of source number ``n`` (counted from `base`), or None (not shown)."""
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
            for n in expand_ranges(((max(lo, self.base), min(hi, last)),)):
                if n in seen:
                    duplicated = True
                    continue
                seen.add(n)
                sid = self.by_position[n - self.base]
                if sid is None:
                    problems.append(f"source {n} was not shown")
                elif sid not in ids:
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
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Iterable):
        raise UsageError(
            "sources must be a list of Source objects or dicts, or a map from the numbers "
            f"shown to them, got {type(sources).__name__}"
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
