"""One answer's citations: native when the provider gave them, else markers, else attribution."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from unicite import CitedAnswer, Source, UsageError, normalize_url
from unicite.attribution import AttributionMethod, attribute
from unicite.markers import ParseStyle, parse_markers, renumber
from unicite.sources import SourceLedger

__all__ = [
    "CiteOptions",
    "Table",
    "check_options",
    "cite",
    "origin_of",
    "parse_table",
    "table_sources",
]

Table = list[Source] | SourceLedger | dict[int, Source]
"""The sources a prompt numbered: a list (``[1]`` is the first), a ledger (by sid), or a map
from the numbers shown to their sources."""

OnInvalidMarker = Literal["drop", "keep"]

# Markers a model may add to an answer that also carries provider citations; links and
# assistant-style markers there are the provider's own.
_NUMERIC_STYLES: tuple[ParseStyle, ...] = ("brackets", "sids", "sup", "footnotes")
_PLACEHOLDER = "unicite:unshown:"


@dataclass(frozen=True)
class CiteOptions:
    """How an adapter turns an answer into citations."""

    attribute: AttributionMethod | None = None
    """Attribute post hoc (``"lexical"`` or ``"llm"``) when the answer cites nothing."""
    attribution_llm: Callable[[str], Any] | None = None
    """For ``attribute="llm"``: a callable from a prompt to the model's reply."""
    on_invalid: OnInvalidMarker = "drop"
    """A marker naming no shown source is removed from the text, or kept as text."""
    renumber: bool = True
    """Number the sources in first-cited order and rewrite the markers to match."""


def check_options(
    attribute: object, attribution_llm: object, on_invalid: object, renumber: object
) -> CiteOptions:
    """Validate adapter options once, at construction, with `UsageError` for mistakes."""
    if attribute not in (None, "lexical", "llm"):
        raise UsageError(f"attribute must be None, 'lexical' or 'llm', got {attribute!r}")
    if attribution_llm is not None and not callable(attribution_llm):
        raise UsageError("attribution_llm must be callable (a prompt in, the reply out)")
    if on_invalid not in ("drop", "keep"):
        raise UsageError(f"on_invalid must be 'drop' or 'keep', got {on_invalid!r}")
    if not isinstance(renumber, bool):
        raise UsageError(f"renumber must be a bool, got {renumber!r}")
    return CiteOptions(
        attribute=attribute,
        attribution_llm=attribution_llm,
        on_invalid=on_invalid,
        renumber=renumber,
    )


def table_sources(table: Table) -> list[Source]:
    """The distinct sources of a table, in number order."""
    if isinstance(table, SourceLedger):
        return table.sources
    items = [table[n] for n in sorted(table)] if isinstance(table, Mapping) else table
    seen: set[str] = set()
    out = []
    for source in items:
        if source.id not in seen:
            seen.add(source.id)
            out.append(source)
    return out


def parse_table(
    text: str,
    table: Table,
    on_invalid: OnInvalidMarker,
    style: ParseStyle | tuple[ParseStyle, ...] = "auto",
) -> CitedAnswer:
    """`parse_markers` over any table; numbers a sparse map does not show cite nothing."""
    if not isinstance(table, Mapping):
        return parse_markers(text, table, style=style, on_invalid=on_invalid)
    last = max(table, default=0)
    if set(table) == set(range(1, last + 1)):
        return parse_markers(
            text, [table[n] for n in range(1, last + 1)], style=style, on_invalid=on_invalid
        )
    # Labels such as ledger sids 4, 7, 9: fill the gaps so positions match, then take out
    # whatever cites a number the prompt never showed.
    dense = [table.get(n) or Source(id=f"{_PLACEHOLDER}{n}") for n in range(1, last + 1)]
    answer = parse_markers(text, dense, style=style, on_invalid=on_invalid)
    notes = list(answer.diagnostics)
    citations = []
    for citation in answer.citations:
        ids = [sid for sid in citation.source_ids if not sid.startswith(_PLACEHOLDER)]
        if len(ids) < len(citation.source_ids):
            notes.append(f"marker at {citation.marker_span} cites a number the prompt did not show")
        if ids:
            citations.append(citation.model_copy(update={"source_ids": ids}))
    sources = [s for s in answer.sources if not s.id.startswith(_PLACEHOLDER)]
    return CitedAnswer(
        text=answer.text,
        sources=sources,
        citations=citations,
        diagnostics=notes,
        extras=answer.extras,
        sources_used=[s for s in answer.sources_used or () if not s.startswith(_PLACEHOLDER)]
        if answer.sources_used is not None
        else None,
    )


def _adopt(native: CitedAnswer, shown: list[Source]) -> CitedAnswer:
    """Cite the shown source instead of a provider source with the same (normalized) URL.

    A web search often finds the very page a retrieved node came from; one source per page,
    with the node's text, is what a reader (and attribution) needs.
    """
    by_url = {normalize_url(s.url): s for s in shown if s.url}
    if not by_url:
        return native
    mapping: dict[str, Source] = {}
    for source in native.sources:
        if source.url:
            match = by_url.get(normalize_url(source.url))
            if match is not None:
                mapping[source.id] = match
    if not mapping:
        return native
    sources: dict[str, Source] = {}
    for source in native.sources:
        kept = mapping.get(source.id, source)
        sources.setdefault(kept.id, kept)
    citations = []
    for citation in native.citations:
        ids = list(dict.fromkeys(mapping[s].id if s in mapping else s for s in citation.source_ids))
        citations.append(citation.model_copy(update={"source_ids": ids}))
    fields = {name: getattr(native, name) for name in type(native).model_fields}
    fields.update(sources=list(sources.values()), citations=citations)
    return CitedAnswer(**fields)


def _merge_markers(native: CitedAnswer, table: Table) -> CitedAnswer:
    """Add ``[N]`` citations of the shown sources to an answer with provider citations."""
    shown = table_sources(table)
    if not shown:
        return native
    native = _adopt(native, shown)
    parsed = parse_table(native.text, table, "keep", _NUMERIC_STYLES)
    if not parsed.citations or parsed.text != native.text:
        return native
    known = {s.id for s in native.sources}
    return CitedAnswer(
        text=native.text,
        sources=[*native.sources, *(s for s in parsed.sources if s.id not in known)],
        citations=[*native.citations, *parsed.citations],
        provider=native.provider,
        model=native.model,
        diagnostics=[*native.diagnostics, *parsed.diagnostics],
        extras=native.extras,
        sources_used=parsed.sources_used,
    )


def cite(
    text: str,
    table: Table,
    native: CitedAnswer | None,
    options: CiteOptions,
    notes: list[str],
) -> CitedAnswer:
    """The citations of one answer.

    Provider-native citations win (with any ``[N]`` markers of the shown sources added); else
    the markers of `text` are parsed and validated against `table`; else, when configured,
    the answer is attributed post hoc against the table's sources. Sources end up in
    first-cited order with the markers rewritten to match (uncited ones after them), unless
    ``options.renumber`` is off. `notes` are added to the diagnostics.
    """
    if native is not None and native.citations:
        answer = _merge_markers(native, table)
    else:
        answer = parse_table(text, table, options.on_invalid)
        if native is not None:
            # What the provider's response said was odd (a stream cut short) still holds.
            update = {
                "provider": native.provider,
                "model": native.model,
                "diagnostics": [*native.diagnostics, *answer.diagnostics],
            }
            answer = answer.model_copy(update=update)
        sources = table_sources(table)
        if not answer.citations and options.attribute is not None and sources:
            attributed = attribute(
                answer.text, sources, options.attribute, llm=options.attribution_llm
            )
            answer = attributed.model_copy(
                update={
                    "provider": answer.provider,
                    "model": answer.model,
                    "diagnostics": [*answer.diagnostics, *attributed.diagnostics],
                }
            )
    if options.renumber and answer.citations:
        answer = renumber(answer, keep_unused=True)
    if notes:
        answer = answer.model_copy(update={"diagnostics": [*notes, *answer.diagnostics]})
    return answer


def origin_of(answer: CitedAnswer) -> str | None:
    """The origin of an answer's citations: the first citation's, None without citations."""
    return answer.citations[0].origin if answer.citations else None
