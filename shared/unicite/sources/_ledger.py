"""`SourceLedger`: sources collected across a run, with stable ids, dedup and prompt numbers."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from unicite._ids import content_hash
from unicite._urls import normalize_url, simple_normalized_parts
from unicite.exceptions import UsageError
from unicite.model import Source, SourceOrigin
from unicite.sources._inline import listed_urls
from unicite.sources._registry import ExtractorRegistry, from_tool_output

__all__ = [
    "SourceLedger",
    "as_source",
    "current_ledger",
    "ledger_scope",
    "page_key",
    "seed_sid",
    "shown_numbers",
]


@functools.lru_cache(maxsize=8192)
def page_key(url: str) -> str:
    """The key under which `SourceLedger` takes two URLs for the same page.

    `unicite.normalize_url` stays conservative: it only drops what never changes the page
    (letter case of scheme and host, default ports, fragments, tracking parameters), so it can
    be used to compare URLs anywhere. The ledger goes further, since a source listed twice is
    worse than two near-identical URLs merged: on top of `normalize_url` this drops a leading
    ``www.`` of the host (when a dotted name remains), a trailing dot of the host
    (``example.com.``) and trailing slashes of the path (``/a/`` is ``/a``, ``/`` is the empty
    path). Scheme, port, path case and query are kept. A URL `normalize_url` cannot parse is
    its own key.
    """
    simple = simple_normalized_parts(url) if isinstance(url, str) else None
    if simple is not None:
        scheme, host, path, query = simple
        if host.startswith("www.") and "." in host[4:].strip("."):
            host = host[4:]
        return f"{scheme}://{host}{path.rstrip('/')}{'?' if query else ''}{query}"
    normalized = normalize_url(url)
    try:
        parts = urlsplit(normalized)
    except ValueError:
        return normalized
    if not parts.scheme or not parts.netloc:
        return normalized
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if hostport.startswith("["):  # an IPv6 literal: nothing to drop
        host, port = hostport, ""
    else:
        host, colon, port = hostport.partition(":")
        port = colon + port
        host = host.rstrip(".")
        if host.startswith("www.") and "." in host[4:].strip("."):
            host = host[4:]
    netloc = f"{userinfo}{at}{host}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), parts.query, ""))


def as_source(value: Source | Mapping[str, Any]) -> Source:
    """Accept a `Source` or a plain dict with the same keys.

    Seed-004 rows are dicts with the same keys too: ``text`` is the snippet, the
    ``*_time_iso`` dates and ``objective_relevance`` fill their fields, and ``sid``,
    ``query_relevance``, ``reasoning`` (with any other key of the row) go to ``extras``
    (see `Source`).

    Raises:
        UsageError: `value` is neither, or the dict's fields do not make a valid `Source`.
    """
    if isinstance(value, Source):
        return value
    if isinstance(value, Mapping):
        try:
            return Source.model_validate(dict(value))
        except ValidationError as err:
            error = err.errors()[0]
            where = ".".join(str(part) for part in error["loc"]) or "source"
            raise UsageError(f"not a valid source: {where}: {error['msg']}") from err
    raise UsageError(f"expected a Source or a dict, got {type(value).__name__}")


def seed_sid(source: Source) -> int | None:
    """The number a seed-004 row was shown under (its ``sid``), when it is a positive int."""
    sid = source.extras.get("sid")
    if isinstance(sid, int) and not isinstance(sid, bool) and sid >= 1:
        return sid
    return None


def shown_numbers(sources: object) -> dict[int, Source] | None:
    """The numbers a prompt shows for ``sources`` when they are not their positions.

    A map ``{n: source}`` names its numbers; a list of seed-004 rows names them by ``sid``
    (``[3]`` is the row with sid 3, wherever it stands). Anything else (a list numbered by
    position, a `SourceLedger` numbered by its own sids) gives None.

    Raises:
        UsageError: A map whose keys are not the numbers shown (1, 2, ...), an entry that is
            not a source, or a list whose sids do not number its rows one to one (a repeated
            sid, or sids on some rows only): reading ``[n]`` against it could name the wrong
            source.
    """
    if type(sources) is _Shown and sources.checked:
        return sources  # this function's own answer, unchanged since: read once is enough
    if isinstance(sources, (SourceLedger, str, bytes)):
        return None
    if isinstance(sources, Mapping):
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in sources):
            raise UsageError("a map of sources must map the numbers shown (1, 2, ...) to sources")
        return _Shown((n, as_source(sources[n])) for n in sorted(sources))
    if not isinstance(sources, (list, tuple)):
        return None
    items = [as_source(item) for item in sources]
    sids = [seed_sid(source) for source in items]
    if not items or all(sid is None for sid in sids):
        return None
    if sids == list(range(1, len(items) + 1)):
        return None  # numbered by position already
    if any(sid is None for sid in sids) or len(set(sids)) != len(sids):
        shown = ", ".join(str(sid) for sid in sids[:8])
        raise UsageError(
            f"the sources' sids ({shown}) do not number them one to one: give each a distinct "
            "sid, or none"
        )
    return _Shown((sid, source) for sid, source in zip(sids, items, strict=True) if sid is not None)


class _Shown(dict[int, Source]):
    """What `shown_numbers` returns: a dict it gives back as it is, when given it unchanged.

    `unicite.cite` reads the numbers, then hands them to the marker parser, which asks for
    them too: they are checked once. Any change makes it a map to check again.
    """

    checked = True

    def _changed(self) -> None:
        self.checked = False

    def __setitem__(self, key: int, value: Source) -> None:
        self._changed()
        super().__setitem__(key, value)

    def __delitem__(self, key: int) -> None:
        self._changed()
        super().__delitem__(key)

    def __ior__(self, other: Any) -> _Shown:  # type: ignore[override,misc]
        self._changed()
        return super().__ior__(other)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._changed()
        super().update(*args, **kwargs)

    def setdefault(self, key: int, default: Any = None) -> Any:
        self._changed()
        return super().setdefault(key, default)

    def pop(self, key: int, *default: Any) -> Any:
        self._changed()
        return super().pop(key, *default)

    def popitem(self) -> tuple[int, Source]:
        self._changed()
        return super().popitem()

    def clear(self) -> None:
        self._changed()
        super().clear()


def _merge(kept: Source, new: Source) -> Source:
    """Fill what the earlier sighting lacks from a later one; the earliest rank wins."""
    update: dict[str, Any] = {}
    for field in (
        "title",
        "url",
        "domain",
        "content",
        "provider_id",
        "published_at",
        "modified_at",
        "relevance",
        "origin",
    ):
        if getattr(kept, field) is None and getattr(new, field) is not None:
            update[field] = getattr(new, field)
    if new.snippet and len(new.snippet) > len(kept.snippet or ""):
        update["snippet"] = new.snippet
    if new.content and len(new.content) > len(kept.content or ""):
        update["content"] = new.content
    if new.rank is not None and (kept.rank is None or new.rank < kept.rank):
        update["rank"] = new.rank
    missing = {k: v for k, v in new.extras.items() if k not in kept.extras}
    if missing:
        update["extras"] = {**kept.extras, **missing}
    return kept.model_copy(update=update) if update else kept


class SourceLedger:
    """Deduplicated sources in first-seen order, safe to share between threads.

    Duplicates are recognised by id, by URL (compared by `page_key`: normalized, and with
    ``www.``, a trailing dot of the host and a trailing slash ignored), and (for sources
    without a URL) by a hash of their text. `add` returns the id of the surviving entry, so
    callers can map their own references (a chunk index, a tool call) to it; a later sighting
    fills in what the entry lacks (title, dates), keeps the longer snippet and content and the
    earliest rank, and adds its `origin` to `origins`. Each entry also gets an integer ``sid``
    (1, 2, ...) for prompts that ask a model to cite ``[n]`` or ``[[S:n]]``: the ledger's own
    numbering, in first-seen order. A seed-004 row's ``sid`` (a number another tool gave it)
    is not that number; it stays in the entry's ``extras["sid"]``.

    Use one ledger per run (an agent invocation, a request): `ledger_scope` makes it the
    `current_ledger` of that thread or asyncio task, so concurrent runs never share sources.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: list[Source] = []
        self._position: dict[str, int] = {}
        # ("id" | "url" | "text", value) -> surviving id; tuples share their strings with the
        # sources and the URL cache instead of building a new key string per sighting.
        self._by_key: dict[tuple[str, str], str] = {}
        self._origins: list[list[SourceOrigin]] = []
        self._diagnostics: list[str] = []

    @staticmethod
    def _keys(source: Source) -> list[tuple[str, str]]:
        keys = [("id", source.id)]
        if source.url:
            keys.append(("url", page_key(source.url)))
        elif not source.provider_id:
            # Equal text is the same source only when nothing else names it: two documents a
            # provider gave different ids stay two sources, as their citations say.
            text = source.content or source.snippet
            if text:
                keys.append(("text", content_hash(source.title, text)))
        return keys

    def add(self, source: Source | Mapping[str, Any]) -> str:
        """Add a source; return its id, or the id of the entry it duplicates."""
        new = as_source(source)
        keys = self._keys(new)
        with self._lock:
            return self._add_locked(new, keys)

    def _add_locked(self, new: Source, keys: list[tuple[str, str]]) -> str:
        """`add` of a source and its keys; the caller holds the lock."""
        for key in keys:
            existing = self._by_key.get(key)
            if existing is not None:
                position = self._position[existing]
                self._sources[position] = _merge(self._sources[position], new)
                origins = self._origins[position]
                if new.origin is not None and new.origin not in origins:
                    origins.append(new.origin)
                for other in keys:
                    self._by_key.setdefault(other, existing)
                return existing
        self._position[new.id] = len(self._sources)
        self._sources.append(new)
        self._origins.append([new.origin] if new.origin is not None else [])
        for key in keys:
            self._by_key[key] = new.id
        return new.id

    def add_all(self, sources: list[Source] | list[Mapping[str, Any]]) -> list[str]:
        """Add several sources; return the surviving id of each, in order.

        They are added together: another thread's sources come before or after them all.
        """
        keyed: list[tuple[Source, list[tuple[str, str]]]] = []
        try:
            for source in sources:
                new = as_source(source)
                keyed.append((new, self._keys(new)))
        finally:
            # Those before one that is no source are added, as `add` one by one would.
            with self._lock:
                ids = [self._add_locked(source, keys) for source, keys in keyed]
        return ids

    def add_tool_output(
        self,
        tool_name: str,
        output: Any,
        *,
        call_id: str | None = None,
        arguments: Mapping[str, Any] | str | None = None,
        registry: ExtractorRegistry | None = None,
    ) -> list[str]:
        """Read one tool output with `from_tool_output` and add its sources.

        Returns the surviving id of each source found, in the tool's order; what was odd or
        dropped goes to `diagnostics`.
        """
        notes: list[str] = []
        found = from_tool_output(
            tool_name,
            output,
            call_id=call_id,
            arguments=arguments,
            diagnostics=notes,
            registry=registry,
        )
        if notes:
            with self._lock:
                self._diagnostics.extend(notes)
        return self.add_all(found)

    @property
    def sources(self) -> list[Source]:
        """The deduplicated sources, in first-seen order (a copy)."""
        with self._lock:
            return list(self._sources)

    def get(self, source_id: str) -> Source | None:
        """The source with this id, or None."""
        with self._lock:
            position = self._position.get(source_id)
            return None if position is None else self._sources[position]

    def sid(self, source_id: str) -> int | None:
        """The 1-based prompt number of a source, stable for the ledger's life."""
        with self._lock:
            position = self._position.get(source_id)
            return None if position is None else position + 1

    def by_sid(self, sid: int) -> Source | None:
        """The source with prompt number `sid`, or None when out of range."""
        with self._lock:
            return self._sources[sid - 1] if 1 <= sid <= len(self._sources) else None

    def resolve(self, source_id: str) -> str | None:
        """The surviving id for any id ever added (a merged duplicate's id included), or None."""
        with self._lock:
            return self._by_key.get(("id", source_id))

    def origins(self, source_id: str) -> list[SourceOrigin]:
        """Every tool call that returned the source, first sighting first."""
        with self._lock:
            position = self._position.get(source_id)
            return [] if position is None else list(self._origins[position])

    @property
    def diagnostics(self) -> list[str]:
        """What was odd or dropped while reading tool outputs with `add_tool_output` (a copy)."""
        with self._lock:
            return list(self._diagnostics)

    def footnotes(self, *, exclude_inline: bool | str = False) -> list[Source]:
        """The sources to list under an answer, in first-seen order.

        Args:
            exclude_inline: Leave out sources the reader already sees. ``True`` drops those a
                tool already presented inline in its own output (its ``[n]`` markers with a
                ``Sources:`` list or a citations array; they carry ``extras["inline_marker"]``),
                for interfaces that show tool output as it is. A string (the answer text, or
                tool output passed through verbatim) drops every source whose URL it already
                shows: in a ``Sources:`` block, a reference definition, a Markdown link or bare.
        """
        if not isinstance(exclude_inline, (bool, str)):
            raise UsageError("exclude_inline must be a bool or the text already shown")
        sources = self.sources
        if exclude_inline is True:
            return [s for s in sources if s.extras.get("inline_marker") is None]
        if isinstance(exclude_inline, str) and exclude_inline:
            # The same page however the text writes it: compared as the ledger dedups.
            shown = {page_key(url) for url in listed_urls(exclude_inline)}
            return [s for s in sources if s.url is None or page_key(s.url) not in shown]
        return sources

    def __len__(self) -> int:
        with self._lock:
            return len(self._sources)

    def __contains__(self, source_id: object) -> bool:
        with self._lock:
            return source_id in self._position


_CURRENT: ContextVar[SourceLedger | None] = ContextVar("unicite_source_ledger", default=None)


def current_ledger() -> SourceLedger | None:
    """The ledger of the run in progress in this thread or asyncio task, if any."""
    return _CURRENT.get()


@contextmanager
def ledger_scope(ledger: SourceLedger | None = None) -> Iterator[SourceLedger]:
    """Make `ledger` (a new one by default) the `current_ledger` for the ``with`` block.

    The scope lives in a context variable: each thread and each asyncio task sees its own, so
    concurrent runs never see each other's sources. Tasks created inside the block inherit it.
    """
    if ledger is None:
        ledger = SourceLedger()
    elif not isinstance(ledger, SourceLedger):
        raise UsageError(f"expected a SourceLedger, got {type(ledger).__name__}")
    token = _CURRENT.set(ledger)
    try:
        yield ledger
    finally:
        _CURRENT.reset(token)
