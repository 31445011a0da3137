"""`SourceLedger`: sources collected across a run, with stable ids, dedup and prompt numbers."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from unicite._ids import content_hash
from unicite._urls import normalize_url
from unicite.exceptions import UsageError
from unicite.model import Source

__all__ = ["SourceLedger", "as_source"]


def as_source(value: Source | Mapping[str, Any]) -> Source:
    """Accept a `Source` or a plain dict with the same keys."""
    if isinstance(value, Source):
        return value
    if isinstance(value, Mapping):
        return Source.model_validate(dict(value))
    raise UsageError(f"expected a Source or a dict, got {type(value).__name__}")


def _merge(kept: Source, new: Source) -> Source:
    """Fill what the earlier sighting lacks from a later one; the earliest rank wins."""
    update: dict[str, Any] = {}
    for field in ("title", "url", "domain", "content", "provider_id"):
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

    Duplicates are recognised by id, by normalized URL, and (for sources without a URL) by a hash
    of their text. `add` returns the id of the surviving entry, so callers can map their own
    references (a chunk index, a tool call) to it. Each entry also gets an integer ``sid``
    (1, 2, ...) for prompts that ask a model to cite ``[n]``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: list[Source] = []
        self._position: dict[str, int] = {}
        self._by_key: dict[str, str] = {}

    @staticmethod
    def _keys(source: Source) -> list[str]:
        keys = [f"id:{source.id}"]
        if source.url:
            keys.append(f"url:{normalize_url(source.url)}")
        else:
            text = source.content or source.snippet
            if text:
                keys.append(f"text:{content_hash(source.title, text)}")
        return keys

    def add(self, source: Source | Mapping[str, Any]) -> str:
        """Add a source; return its id, or the id of the entry it duplicates."""
        new = as_source(source)
        keys = self._keys(new)
        with self._lock:
            for key in keys:
                existing = self._by_key.get(key)
                if existing is not None:
                    position = self._position[existing]
                    self._sources[position] = _merge(self._sources[position], new)
                    for other in keys:
                        self._by_key.setdefault(other, existing)
                    return existing
            self._position[new.id] = len(self._sources)
            self._sources.append(new)
            for key in keys:
                self._by_key[key] = new.id
            return new.id

    def add_all(self, sources: list[Source] | list[Mapping[str, Any]]) -> list[str]:
        """Add several sources; return the surviving id of each, in order."""
        return [self.add(source) for source in sources]

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

    def __len__(self) -> int:
        with self._lock:
            return len(self._sources)

    def __contains__(self, source_id: object) -> bool:
        with self._lock:
            return source_id in self._position
