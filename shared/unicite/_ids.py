"""Stable source ids: the same source gets the same id on every run and machine."""

from __future__ import annotations

import functools
import hashlib

from unicite._urls import normalize_url

__all__ = ["content_hash", "stable_source_id"]


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
