"""`FastSources`: the deduplicated sources of one response, as `SourceLedger` keeps them.

Reduced to what a row holds: URL, domain, TLD, redirect flag, cited flag.
"""

from __future__ import annotations

from unicite._urls import is_redirect_url, source_domain
from unicite.analytics._rows import Row, tld_of
from unicite.sources import page_key

__all__ = ["FastSources"]


class FastSources:
    """Sources with a URL, deduplicated by `page_key` in first-seen order.

    Two sightings of one page (equal `page_key`) are one source, as in `SourceLedger`: the
    first sighting's URL and redirect flag stay, its domain stays unless it had none (a
    redirect without a domain-like title), in which case a later sighting's fills it.
    """

    __slots__ = ("_index", "cited", "domains", "redirects", "urls")

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self.urls: list[str | None] = []
        self.domains: list[str | None] = []
        self.redirects: list[bool] = []
        self.cited: list[bool] = []

    def add(self, url: str, title: object = None, *, domain: str | None = None) -> int:
        """Add a web source by its URL (and title); return its position.

        `domain` is the domain the reader gives explicitly, when it gives one (else it is
        derived from the URL, or for a redirect from a domain-like title, as `Source` does).
        """
        key = page_key(url)
        position = self._index.get(key)
        redirect = is_redirect_url(url)
        if domain is None:
            domain = source_domain(url, title, redirect)
        if position is not None:
            if self.domains[position] is None and domain is not None:
                self.domains[position] = domain
            return position
        position = self._index[key] = len(self.urls)
        self.urls.append(url)
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
        """The row of a response with these sources."""
        return Row(
            provider=provider,
            model=model,
            day=None,
            grounded=grounded,
            citations=citations,
            sources=len(self.urls),
            urls=list(self.urls),
            domains=list(self.domains),
            tlds=[tld_of(domain) for domain in self.domains],
            redirects=list(self.redirects),
            cited=list(self.cited),
            diagnostics=diagnostics,
            error=None,
        )
