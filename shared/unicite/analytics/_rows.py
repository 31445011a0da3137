"""One row per logged response: the figures citation analytics count, read from a `CitedAnswer`.

A row is a plain dict with the keys of `ROW_FIELDS`, so that a batch of rows becomes an Arrow
record batch column by column (`row_schema`) and pickles cheaply between processes. The lists
run parallel, one entry per source: ``urls[i]``, ``domains[i]``, ``tlds[i]``, ``redirects[i]``
and ``cited[i]`` describe one source. They are sorted by URL (then domain), not listed in the
answer's order: that order follows where each claim sits in the text, which counting needs
no segmenter to know, and a fixed order makes equal answers give equal rows.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any, TypedDict

from unicite.model import CitedAnswer, Source

__all__ = [
    "ROW_FIELDS",
    "Row",
    "canonical",
    "day_of",
    "read_row",
    "row_of",
    "tld_of",
    "unreadable_row",
]


class Row(TypedDict):
    """The figures of one response."""

    provider: str | None
    """The provider that answered (``openai``, ``anthropic``, ...); None when unreadable."""
    model: str | None
    """The model the response names, when it names one."""
    day: str | None
    """The UTC day the response was created (``2026-11-26``), when the response or its log
    envelope says."""
    grounded: bool | None
    """Whether grounding (web search, retrieval, tools) ran, when the provider tells
    (``extras["grounded_effective"]``)."""
    citations: int
    """Number of citations in the answer."""
    sources: int
    """Number of distinct sources."""
    urls: list[str | None]
    """Each source's URL (None for documents)."""
    domains: list[str | None]
    """Each source's registrable domain (the real site's, for a redirect named by its title)."""
    tlds: list[str | None]
    """The last label of each domain (``uk`` for ``bbc.co.uk``)."""
    redirects: list[bool]
    """Whether each source's URL is a redirect that hides the site."""
    cited: list[bool]
    """Whether a citation names each source."""
    diagnostics: int
    """Number of diagnostics the reader recorded."""
    error: str | None
    """Why the response could not be read (then every count is zero), else None."""


ROW_FIELDS: tuple[str, ...] = tuple(Row.__annotations__)
"""The keys of every row, in column order."""


def tld_of(domain: str | None) -> str | None:
    """The top-level domain: the last label (``uk`` for ``bbc.co.uk``), as DNS names it."""
    if not domain:
        return None
    return domain.rsplit(".", 1)[-1]


def row_of(answer: CitedAnswer, *, day: str | None = None) -> Row:
    """The row of an answer `extract()` built: what the analytics sink's row must equal."""
    if answer.provider is None and not answer.text and answer.diagnostics:
        return unreadable_row(answer.diagnostics[0], day=day)
    return read_row(
        provider=answer.provider,
        model=answer.model,
        day=day,
        extras=answer.extras,
        citations=len(answer.citations),
        sources=answer.sources,
        cited={sid for citation in answer.citations for sid in citation.source_ids},
        diagnostics=len(answer.diagnostics),
    )


def read_row(
    *,
    provider: str | None,
    model: str | None,
    day: str | None,
    extras: Mapping[str, Any],
    citations: int,
    sources: list[Source],
    cited: set[str],
    diagnostics: int,
) -> Row:
    """The row of a read response, from what both sinks know: its answer's or its reading's."""
    grounded = extras.get("grounded_effective")
    domains = [source.domain for source in sources]
    return canonical(
        Row(
            provider=provider,
            model=model,
            day=day,
            grounded=grounded if isinstance(grounded, bool) else None,
            citations=citations,
            sources=len(sources),
            urls=[source.url for source in sources],
            domains=domains,
            tlds=[tld_of(domain) for domain in domains],
            redirects=[source.redirect for source in sources],
            cited=[source.id in cited for source in sources],
            diagnostics=diagnostics,
            error=None,
        )
    )


_PER_SOURCE = ("urls", "domains", "tlds", "redirects", "cited")


def canonical(row: Row) -> Row:
    """The row with its per-source lists sorted by URL, then domain, redirect and cited flags.

    Every path that makes rows ends here, so equal sources give equal rows whatever order a
    reader met them in.
    """
    if row["sources"] > 1:
        entries = sorted(
            zip(
                row["urls"],
                row["domains"],
                row["tlds"],
                row["redirects"],
                row["cited"],
                strict=True,
            ),
            key=_entry_key,
        )
        for name, values in zip(_PER_SOURCE, zip(*entries, strict=True), strict=True):
            row[name] = list(values)  # type: ignore[literal-required]
    return row


def _entry_key(
    entry: tuple[str | None, str | None, str | None, bool, bool],
) -> tuple[str, str, bool, bool]:
    url, domain, _, redirect, cited = entry
    return (url or "", domain or "", redirect, cited)


def unreadable_row(reason: str, *, day: str | None = None) -> Row:
    """The row of a line that holds no readable response."""
    return Row(
        provider=None,
        model=None,
        day=day,
        grounded=None,
        citations=0,
        sources=0,
        urls=[],
        domains=[],
        tlds=[],
        redirects=[],
        cited=[],
        diagnostics=0,
        error=reason,
    )


_EPOCH_KEYS = ("created_at", "created")
"""Unix seconds: OpenAI Responses (``created_at``), Chat Completions and Perplexity
(``created``)."""
_ISO_KEYS = ("createTime", "create_time", "timestamp", "time", "date", "created_at", "logged_at")
"""RFC 3339 text: Vertex AI (``createTime``) and what log envelopes usually call the time."""


def day_of(data: Mapping[str, Any]) -> str | None:
    """The UTC day a response (or the log record wrapping it) was created, as ``YYYY-MM-DD``.

    Unix seconds (int or float) and RFC 3339 / ISO 8601 text are read; anything else gives
    None rather than a guess.
    """
    for key in _EPOCH_KEYS:
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _day_of_epoch(value)
    for key in _ISO_KEYS:
        value = data.get(key)
        if isinstance(value, str):
            day = _day_of_iso(value)
            if day is not None:
                return day
        elif (
            key in ("timestamp", "time")
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            return _day_of_epoch(value)
    return None


_MAX_EPOCH = 253_402_300_799  # 9999-12-31T23:59:59Z
_EPOCH_MS = 100_000_000_000  # past 5138 in seconds: such values are milliseconds


def _day_of_epoch(value: float) -> str | None:
    if value != value or value < 0:  # NaN or before 1970
        return None
    if value >= _EPOCH_MS:
        value /= 1000
    if value > _MAX_EPOCH:
        return None
    return _dt.datetime.fromtimestamp(value, _dt.timezone.utc).strftime("%Y-%m-%d")


def _day_of_iso(value: str) -> str | None:
    text = value.strip()
    if len(text) < 10:
        return None
    if len(text) == 10:
        try:
            return _dt.date.fromisoformat(text).isoformat()
        except ValueError:
            return None
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python before 3.11 reads at most six fractional digits; Vertex writes nine.
    head, dot, rest = text.partition(".")
    if dot:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        rest = rest[: min(digits, 6)] + rest[digits:]
        text = f"{head}.{rest}" if rest[:1].isdigit() else head + rest
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(_dt.timezone.utc)
    return moment.strftime("%Y-%m-%d")
