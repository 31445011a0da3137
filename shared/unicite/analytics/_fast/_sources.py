"""`FastSources`: the deduplicated sources of one response, as `SourceLedger` keeps them.

Reduced to what a row holds: URL, domain, TLD, redirect flag, cited flag.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from unicite._urls import is_redirect_url, source_domain
from unicite.analytics._rows import Row, tld_of
from unicite.sources import page_key

__all__ = ["FastSources", "is_redirect"]

_REDIRECT_PREFIX = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
_REDIRECT_START = len(_REDIRECT_PREFIX)
_REDIRECT_TOKEN = re.compile(r"[A-Za-z0-9_=-]+")
"""A Vertex grounding redirect in the form Gemini writes it, which `page_key` leaves as it is."""

_TITLE_DOMAINS: dict[object, str | None] = {}
"""The domain `source_domain` files a redirect under, by its title (the same few sites recur)."""


def _written_redirect(url: str) -> bool:
    return url.startswith(_REDIRECT_PREFIX) and bool(
        _REDIRECT_TOKEN.fullmatch(url, _REDIRECT_START)
    )


def is_redirect(url: str) -> bool:
    """`is_redirect_url`, without parsing the URL when it is in the form Gemini writes."""
    return _written_redirect(url) or is_redirect_url(url)


def _domain_of(url: str, title: object, redirect: bool) -> str | None:
    """`source_domain`: a redirect's from its title, cached by title."""
    if not redirect:
        return source_domain(url, title, False)
    try:
        return _TITLE_DOMAINS[title]
    except KeyError:
        if len(_TITLE_DOMAINS) >= 4096:
            _TITLE_DOMAINS.clear()
        domain = _TITLE_DOMAINS[title] = source_domain(url, title, True)
        return domain
    except TypeError:  # an unhashable title: nothing to cache it by
        return source_domain(url, title, True)


class FastSources:
    """The sources of one response as `SourceLedger` keeps them, reduced to a row's columns.

    A source is found again by the ledger's keys, in the ledger's order: its provider id, its
    URL's `page_key`, or, with neither, a hash of its title and text. A later sighting fills
    the URL and the domain the first one lacked; the first sighting's redirect flag stays.
    A web source (a URL, no provider id) is found by its page key alone: its id is a hash of
    its normalized URL, and the ledger always files that id and the page key together.
    """

    __slots__ = ("cited", "domains", "index", "redirects", "urls")

    def __init__(self) -> None:
        self.index: dict[object, int] = {}
        self.urls: list[str | None] = []
        self.domains: list[str | None] = []
        self.redirects: list[bool] = []
        self.cited: list[bool] = []

    def web(self, url: str, title: object = None, domain: str | None = None) -> int:
        """Add a source with a (non-empty) URL and no provider id; return its position.

        `domain` is the domain the reader gives explicitly, when it gives one (else it is
        derived from the URL, or for a redirect from a domain-like title, as `Source` does).
        """
        if _written_redirect(url):
            key, redirect = url, True
        else:
            key, redirect = page_key(url), is_redirect_url(url)
        position = self.index.get(key)
        if position is not None:
            if self.domains[position] is None:
                self.domains[position] = domain or _domain_of(url, title, redirect)
            return position
        position = self.index[key] = len(self.urls)
        self.urls.append(url)
        self.domains.append(domain or _domain_of(url, title, redirect))
        self.redirects.append(redirect)
        self.cited.append(False)
        return position

    def keyed(
        self,
        keys: Sequence[object],
        url: str | None = None,
        title: object = None,
        domain: str | None = None,
    ) -> int:
        """Add a source the ledger finds by `keys` (in order); return its position.

        `keys` are ``("id", source id)``, the URL's `page_key`, ``("text", hash)``: whichever
        the source has, as the ledger tries them. The entry found first is merged into, and
        every key is filed under it.
        """
        redirect = is_redirect_url(url) if url else False
        if domain is None and url:
            domain = source_domain(url, title, redirect)
        position = None
        for key in keys:
            position = self.index.get(key)
            if position is not None:
                break
        if position is not None:
            if self.urls[position] is None and url:
                self.urls[position] = url
            if self.domains[position] is None and domain is not None:
                self.domains[position] = domain
            for key in keys:
                self.index.setdefault(key, position)
            return position
        position = len(self.urls)
        for key in keys:
            self.index[key] = position
        self.urls.append(url or None)
        self.domains.append(domain)
        self.redirects.append(redirect)
        self.cited.append(False)
        return position

    def cite(self, position: int) -> None:
        """Mark a source as named by a citation."""
        self.cited[position] = True

    def __len__(self) -> int:
        return len(self.urls)

    def row(
        self,
        *,
        provider: str,
        model: str | None,
        grounded: bool | None,
        citations: int,
        diagnostics: int = 0,
    ) -> Row:
        """The row of a response with these sources, in first-seen order (`canonical` sorts)."""
        domains = self.domains
        return Row(
            provider=provider,
            model=model,
            day=None,
            grounded=grounded,
            citations=citations,
            sources=len(domains),
            urls=self.urls,
            domains=domains,
            tlds=[tld_of(domain) for domain in domains],
            redirects=self.redirects,
            cited=self.cited,
            diagnostics=diagnostics,
            error=None,
        )
