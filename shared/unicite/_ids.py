"""Stable ids: the same source, or citation of an answer, gets the same id on every run."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

from unicite._urls import normalize_url

__all__ = ["citation_id", "citation_ids", "content_hash", "stable_source_id"]


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def content_hash(*parts: str | None) -> str:
    """A short deterministic hash of text parts (used for URL-less documents)."""
    return _digest("\x1f".join(part or "" for part in parts))


def stable_source_id(
    *,
    provider_id: str | None = None,
    url: str | None = None,
    title: str | None = None,
    content: str | None = None,
) -> str:
    """Derive a source id: the provider's id, else the normalized URL, else a content hash.

    URL ids are ``u-`` plus a hash of the normalized URL, so URLs that differ only in tracking
    parameters, case of the host, default port or fragment share an id. Content ids are ``h-``
    plus a hash of title and text.
    """
    if provider_id:
        # An id must be valid text: lone surrogates (from broken JSON escapes) are spelled out.
        return provider_id.encode("utf-8", "backslashreplace").decode("utf-8")
    if url:
        return _url_id(url)
    return "h-" + content_hash(title, content)


@functools.lru_cache(maxsize=8192)
def _url_id(url: str) -> str:
    return "u-" + _digest(normalize_url(url))


def citation_id(place: int) -> str:
    """The id a citation gets from its place among its answer's citations: ``ref-0``, ..."""
    return f"ref-{place}"


def citation_ids(given: Sequence[str | None]) -> list[str]:
    """The ids of an answer's citations, in their order, from the ids they were given.

    A given id stays with the first citation holding it. A citation without one, or repeating
    an id held before it, gets `citation_id` of its place, or of the next place whose id is
    free. So an answer built from the same input gets the same ids, ids are unique, and ids a
    citation keeps through later copies stay as they were.
    """
    if all(g is None for g in given):
        return [citation_id(n) for n in range(len(given))]
    taken: set[str] = set()
    kept: list[str | None] = []
    for value in given:
        if value is not None and value not in taken:
            taken.add(value)
            kept.append(value)
        else:
            kept.append(None)
    ids: list[str] = []
    after = 0  # the places before it have taken ids: where the next search starts
    for n, value in enumerate(kept):
        if value is not None:
            ids.append(value)
            continue
        k = max(n, after)
        while citation_id(k) in taken:
            k += 1
        taken.add(citation_id(k))
        ids.append(citation_id(k))
        after = k + 1
    return ids
