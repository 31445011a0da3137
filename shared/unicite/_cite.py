"""`cite`: the one decision of how an answer is cited, and the `CitePolicy` that tunes it.

Every path ends here: a provider response, a model's text with ``[n]`` markers, an answer that
cites nothing. Adapters, generation and the wire translate their inputs into `cite`'s and its
result back; none of them decides anything about citations.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, get_args

from unicite._telemetry import record_answer
from unicite.attribution import Scorer, attribute
from unicite.exceptions import GroundingRequiredError, UsageError
from unicite.markers import MarkerStyle, ParseStyle, parse_markers, renumber
from unicite.model import Citation, CitedAnswer, Source
from unicite.providers import extract
from unicite.sources import (
    SourceLedger,
    as_source,
    from_tool_output,
    page_key,
    seed_sid,
    shown_numbers,
)

__all__ = [
    "AttributeOption",
    "CitePolicy",
    "Require",
    "SourcesOption",
    "cite",
    "cite_parsed",
]

AttributeOption = Literal["lexical", "llm"] | Scorer | None
"""Post-hoc attribution when nothing is cited: off, local lexical, an LLM, or a `Scorer`."""

Require = Literal["citations", "grounding"] | None
"""What the grounding policy demands of the final answer."""

SourcesOption = Literal["cited", "all"]
"""Which sources the answer lists: only those cited, or every one it was given."""

OnInvalidMarker = Literal["drop", "keep"]

_MARKER_STYLES: tuple[str, ...] = ("auto", *get_args(MarkerStyle))
# A provider's own answer may carry links and assistant-style markers of its own making;
# the markers added to it for the sources given are the numeric ones.
_NUMERIC_STYLES: tuple[ParseStyle, ...] = ("brackets", "sids", "sup", "footnotes")

SourcesInput = Iterable[Source | Mapping[str, Any]] | SourceLedger | Mapping[int, Source]
"""What `cite` accepts as the sources a model was shown: `Source` objects or dicts in prompt
order (``[1]`` is the first), a `SourceLedger` (``[n]`` is sid n), or a map from the numbers
shown to their sources."""


@dataclass(frozen=True)
class CitePolicy:
    """How `cite` turns an answer into citations. Every field is also a keyword of `cite`.

    The defaults cite what can be cited with certainty: native citations, then valid markers;
    sources listed in first-cited order with the markers rewritten to match; nothing attributed
    post hoc unless asked.
    """

    enabled: bool = True
    """Cite at all. Disabled, `cite` returns the answer text uncited and logs nothing."""
    markers: Literal["auto"] | MarkerStyle = "auto"
    """Which markers the text is read for: every style, or one `MarkerStyle`."""
    renumber: bool = True
    """Number sources in first-cited order and rewrite the markers in the text to match."""
    attribute: AttributeOption = None
    """When nothing is cited: ``"lexical"`` (local), ``"llm"`` (asks `llm`), or a `Scorer`
    re-scoring the lexical attributor's passages; None leaves the answer uncited."""
    llm: Callable[[str], Any] | None = None
    """For ``attribute="llm"``: any callable from a prompt to the model's reply."""
    require: Require = None
    """``"citations"``: raise `GroundingRequiredError` when the final answer cites nothing;
    ``"grounding"``: raise when the answer rests on no source at all."""
    exclude_inline: bool = True
    """With ``sources="all"``, leave out uncited sources the reader already sees: those a tool
    listed inline in its own output, and those whose URL the answer text shows."""
    sources: SourcesOption = "cited"
    """When the answer cites something, list only the cited sources (the default), or all of
    them (uncited ones after). An answer citing nothing keeps every source it rests on; without
    renumbering every given source stays listed, so ``[n]`` keeps naming the n-th."""
    keep: int = 100
    """How many finished runs a framework handler keeps answers for."""
    on_invalid: OnInvalidMarker = "drop"
    """A marker naming no given source is removed from the text, or kept as plain text. Either
    way a diagnostic says so."""
    all_supporting: bool = False
    """For ``attribute="lexical"`` or a `Scorer`: cite a claim to every source that reaches the
    threshold, not only to its strongest and those as probable (the weaker ones are the likeliest
    wrong citations; a diagnostic counts them)."""

    def __post_init__(self) -> None:
        if not isinstance(self.enabled, bool):
            raise UsageError(f"enabled must be a bool, got {self.enabled!r}")
        if self.markers not in _MARKER_STYLES:
            raise UsageError(f"markers must be one of {_MARKER_STYLES}, got {self.markers!r}")
        if not isinstance(self.renumber, bool):
            raise UsageError(f"renumber must be a bool, got {self.renumber!r}")
        if self.attribute not in (None, "lexical", "llm") and not isinstance(
            self.attribute, Scorer
        ):
            raise UsageError(
                "attribute must be None, 'lexical', 'llm' or a Scorer, "
                f"got {type(self.attribute).__name__}"
            )
        if self.llm is not None and not callable(self.llm):
            raise UsageError("llm must be callable: a prompt in, the model's reply out")
        if self.attribute == "llm" and self.llm is None:
            raise UsageError("attribute='llm' needs llm=, a callable from a prompt to the reply")
        if self.require not in (None, "citations", "grounding"):
            raise UsageError(
                f"require must be None, 'citations' or 'grounding', got {self.require!r}"
            )
        if not isinstance(self.exclude_inline, bool):
            raise UsageError(f"exclude_inline must be a bool, got {self.exclude_inline!r}")
        if self.sources not in ("cited", "all"):
            raise UsageError(f"sources must be 'cited' or 'all', got {self.sources!r}")
        if isinstance(self.keep, bool) or not isinstance(self.keep, int) or self.keep < 1:
            raise UsageError(f"keep must be a positive integer, got {self.keep!r}")
        if not isinstance(self.all_supporting, bool):
            raise UsageError(f"all_supporting must be a bool, got {self.all_supporting!r}")
        if self.on_invalid not in ("drop", "keep"):
            raise UsageError(f"on_invalid must be 'drop' or 'keep', got {self.on_invalid!r}")

    def replace(self, **changes: Any) -> CitePolicy:
        """A copy with `changes` applied (validated); an unknown name is a `UsageError`."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise UsageError(f"unknown citation option(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **changes) if changes else self


def cite(
    answer: object,
    sources: SourcesInput = (),
    *,
    policy: CitePolicy | None = None,
    **options: Any,
) -> CitedAnswer:
    """Decide how an answer is cited: the one place every path goes through.

    `answer` is the answer text (a `str`: always read as text, never as JSON), a provider
    response or stream that `unicite.extract` reads, or a `CitedAnswer`. `sources` are the
    sources the model was shown, numbered as the prompt numbered them.

    The rule, in order:

    1. Citations the answer already carries (native provider citations, or those of a given
       `CitedAnswer`) are kept. A provider source with the same normalized URL as a given
       source becomes that source. Numeric markers (``[n]``, ``[[S:n]]``, ``<sup>``,
       ``[^n]``) that name given sources and are not already part of a citation are added;
       the provider's text is never edited, so markers naming nothing stay as text.
    2. Otherwise the markers of the text are read against the given sources (`parse_markers`
       with the policy's ``markers`` style); invalid ones are dropped or kept (``on_invalid``),
       each with a diagnostic.
    3. Otherwise, when ``attribute`` is set, the answer is attributed post hoc against the
       given sources (else the provider's). If sources were given and still nothing is cited, a
       diagnostic says why and what to do.
    4. Sources are numbered in first-cited order and markers rewritten (``renumber``); the
       answer lists the cited sources, or all of them (``sources="all"``, without those already
       shown inline when ``exclude_inline``).
    5. ``require`` is checked last.

    Disabled (``enabled=False``) it returns the text alone, uncited, and logs nothing.

    Args:
        answer: Text, a provider response (object, dict, bytes, events), or a `CitedAnswer`.
        sources: What the model was shown: `Source` objects or dicts in prompt order, a
            `SourceLedger`, a map from the numbers shown to sources, or a Bedrock Knowledge
            Bases ``Retrieve`` response (its results in their order).
        policy: A `CitePolicy`; defaults to ``CitePolicy()``.
        **options: `CitePolicy` fields overriding ``policy``'s (all but ``sources``, whose
            name the argument above takes: set it with ``policy=CitePolicy(sources="all")``).

    Returns:
        The cited answer.

    Raises:
        UsageError: An unknown option, a bad option value, or sources that are not sources.
        GroundingRequiredError: ``require`` was not met.
    """
    if policy is not None and not isinstance(policy, CitePolicy):
        raise UsageError(f"policy must be a CitePolicy, got {type(policy).__name__}")
    return _cite(answer, sources, (policy or CitePolicy()).replace(**options), None)


def cite_parsed(
    text: str, sources: SourcesInput, policy: CitePolicy, parsed: CitedAnswer
) -> CitedAnswer:
    """`cite` of the answer text `text`, whose markers were already read into `parsed`.

    `parsed` must be ``parse_markers(text, sources, style=policy.markers,
    on_invalid=policy.on_invalid)``: what `cite` would read, so the answer is the same.
    """
    return _cite(text, sources, policy, parsed)


def _cite(
    answer: object, sources: SourcesInput, policy: CitePolicy, parsed: CitedAnswer | None
) -> CitedAnswer:
    table = _table(sources)
    if not policy.enabled:
        with _quiet():
            base = _base(answer)
        return CitedAnswer(text=base.text, provider=base.provider, model=base.model)
    base = _base(answer)
    shown = _distinct(table)
    notes: list[str] = []
    if base.citations:
        cited = _adopt(base, shown)
        if shown:
            cited = _add_markers(cited, table, notes)
    else:
        cited = _markers(base, table, policy, parsed)
        if not cited.citations and policy.attribute is not None:
            cited = _attribute(cited, shown or base.sources, policy, notes)
    cited = _with_sources(cited, [*shown, *base.sources])
    if shown and not cited.citations and policy.attribute is None:
        notes.append(
            f"{len(shown)} source(s) were given but the answer cites none: number the sources "
            "in the prompt and ask for [n] markers, or pass attribute='lexical'"
        )
    # Bracketed numbers are escaped only in text this call read them in; a provider's text
    # (or a given answer's) is never edited.
    read_brackets = not base.citations and policy.markers in ("auto", "brackets")
    cited = _number(cited, policy, escape=read_brackets)
    if notes:
        # Diagnostics touch no invariant: no second validation.
        cited = cited.model_copy(update={"diagnostics": _unique([*cited.diagnostics, *notes])})
    grounded = bool(shown or base.sources)
    read = not isinstance(answer, (str, CitedAnswer))
    record_answer(cited, base, read=read, grounded=grounded, markers=policy.markers)
    _check_require(cited, policy.require, grounded=grounded)
    return cited


# --- inputs --------------------------------------------------------------------------------


def _table(sources: object) -> list[Source] | SourceLedger | dict[int, Source]:
    if isinstance(sources, SourceLedger):
        return sources
    if isinstance(sources, (str, bytes)):
        raise UsageError("sources must be Source objects or dicts, not a string")
    if isinstance(sources, Mapping):
        if isinstance(sources.get("retrievalResults"), list):
            # A knowledge base's Retrieve response: its results, numbered in its order.
            return from_tool_output("retrieve", sources)
        return shown_numbers(sources) or {}
    if not isinstance(sources, Iterable):
        raise UsageError(f"sources must be an iterable of sources, got {type(sources).__name__}")
    listed = [as_source(source) for source in sources]
    sids = [seed_sid(source) for source in listed]
    if all(sid is None for sid in sids) or sids == list(range(1, len(sids) + 1)):
        # Numbered by position: the marker parser reads the list so (its `shown_numbers` is
        # the one call), and the list is what this call needs.
        return listed
    # Seed-004 rows are shown under their sids: [3] is the row with sid 3. The map given to
    # the parser is `shown_numbers`' own, which it does not check again.
    return shown_numbers(listed) or listed


def _distinct(table: list[Source] | SourceLedger | dict[int, Source]) -> list[Source]:
    if isinstance(table, SourceLedger):
        return table.sources
    items = table.values() if isinstance(table, dict) else table
    seen: set[str] = set()
    out = []
    for source in items:
        if source.id not in seen:
            seen.add(source.id)
            out.append(source)
    return out


def _base(answer: object) -> CitedAnswer:
    if isinstance(answer, CitedAnswer):
        return answer
    if isinstance(answer, str):
        return CitedAnswer(text=answer)
    return extract(answer)


# --- the steps -----------------------------------------------------------------------------


def _parse(
    text: str,
    table: list[Source] | SourceLedger | dict[int, Source],
    style: ParseStyle | tuple[ParseStyle, ...],
    on_invalid: OnInvalidMarker,
) -> CitedAnswer:
    """`parse_markers` over any table; numbers a sparse map does not show cite nothing."""
    return parse_markers(text, table, style=style, on_invalid=on_invalid)


def _markers(
    base: CitedAnswer,
    table: list[Source] | SourceLedger | dict[int, Source],
    policy: CitePolicy,
    parsed: CitedAnswer | None = None,
) -> CitedAnswer:
    """The answer cited by the markers of its text (the text loses invalid markers).

    `parsed`: those markers, already read by the caller (see `cite_parsed`).
    """
    if parsed is None:
        style: ParseStyle = policy.markers
        parsed = _parse(base.text, table, style, policy.on_invalid)
    # The parsed answer holds every field an invariant binds (text, sources, citations,
    # sources_used), checked when it was built: what the base adds needs no new validation.
    # Its diagnostics come before renumbering's, as in renumber(parse_markers(...)).
    return parsed.model_copy(
        update={
            "provider": base.provider,
            "model": base.model,
            "diagnostics": [*base.diagnostics, *parsed.diagnostics],
            "extras": {**base.extras, **parsed.extras},
        }
    )


def _adopt(answer: CitedAnswer, shown: list[Source]) -> CitedAnswer:
    """Cite a given source instead of a provider source for the same page or document.

    A web search often finds the very page a retrieved document came from; one source per
    page, with the document's text, is what a reader (and attribution) needs. Pages compare
    as the ledger compares them (`unicite.sources.page_key`). A provider source known only by
    the ``reference_id`` the request gave its document (``reference:N``) becomes the given
    source with that ``reference_id`` (in its extras, or in the raw result it was read from).
    """
    by_url = {page_key(s.url): s for s in shown if s.url}
    by_reference = {ref: s for s in shown if (ref := _reference_id(s)) is not None}
    if not by_url and not by_reference:
        return answer
    mapping: dict[str, Source] = {}
    for source in answer.sources:
        if source.url and (match := by_url.get(page_key(source.url))) is not None:
            mapping[source.id] = match
        elif (
            source.id.startswith("reference:")
            and (ref := _reference_id(source)) is not None
            and (match := by_reference.get(ref)) is not None
        ):
            # A document the provider names only by the id the request gave it (Mistral's
            # reference chunks): the given source with that id is the document.
            mapping[source.id] = match
    if not mapping:
        return answer
    sources: dict[str, Source] = {}
    for source in answer.sources:
        kept = mapping.get(source.id, source)
        sources.setdefault(kept.id, kept)
    return answer.replace(
        sources=list(sources.values()),
        citations=[
            _reassign(c, lambda sid: mapping[sid].id if sid in mapping else sid)
            for c in answer.citations
        ],
        sources_used=None
        if answer.sources_used is None
        else list(dict.fromkeys(mapping[s].id if s in mapping else s for s in answer.sources_used)),
    )


def _reference_id(source: Source) -> str | None:
    """The id a request gave a document (``reference_id``: in extras, or the raw item)."""
    ref = source.extras.get("reference_id")
    if ref is None and isinstance(source.raw, Mapping):
        ref = source.raw.get("reference_id")
    if isinstance(ref, bool) or not isinstance(ref, (int, str)):
        return None
    return str(ref).strip() or None


def _add_markers(
    answer: CitedAnswer,
    table: list[Source] | SourceLedger | dict[int, Source],
    notes: list[str],
) -> CitedAnswer:
    """Add citations for numeric markers of given sources to an answer already cited."""
    parsed = _parse(answer.text, table, _NUMERIC_STYLES, "keep")
    if not parsed.citations:
        return answer
    if parsed.text != answer.text:
        notes.append("markers were not read: reading them would change the provider's text")
        return answer
    taken = [c.marker_span for c in answer.citations if c.marker_span is not None]
    # The added citations are new to this answer: their ids (places in the parsed text) are
    # dropped, so the answer's own keep theirs and the added ones get the next free ones.
    added = [
        c.model_copy(update={"id": None})
        for c in parsed.citations
        if c.marker_span is not None and not any(_overlap(c.marker_span, t) for t in taken)
    ]
    if not added:
        return answer
    notes.extend(parsed.diagnostics)
    known = {s.id for s in answer.sources}
    return answer.replace(
        sources=[*answer.sources, *(s for s in parsed.sources if s.id not in known)],
        citations=[*answer.citations, *added],
        sources_used=parsed.sources_used
        if parsed.sources_used is not None
        else answer.sources_used,
    )


def _attribute(
    answer: CitedAnswer, sources: list[Source], policy: CitePolicy, notes: list[str]
) -> CitedAnswer:
    if not sources or not answer.text.strip():
        return answer
    if isinstance(policy.attribute, str):
        method, scorer = policy.attribute, None
    else:  # a Scorer re-scores the lexical attributor's passages
        method, scorer = "lexical", policy.attribute
    attributed = attribute(
        answer.text,
        sources,
        method,
        llm=policy.llm if method == "llm" else None,
        scorer=scorer,
        all_supporting=policy.all_supporting,
    )
    notes.extend(attributed.diagnostics)
    if not attributed.citations or attributed.text != answer.text:
        return answer
    return answer.replace(sources=attributed.sources, citations=attributed.citations)


def _with_sources(answer: CitedAnswer, extra: list[Source]) -> CitedAnswer:
    """The answer with `extra` sources after its own (merged into equal ones, by URL or text)."""
    known = {source.id for source in answer.sources}
    if all(source.id in known for source in extra):
        return answer
    ledger = SourceLedger()
    for source in answer.sources:
        ledger.add(source)
    for source in extra:
        ledger.add(source)
    return answer.replace(
        sources=ledger.sources,
        citations=[_reassign(c, lambda sid: ledger.resolve(sid) or sid) for c in answer.citations],
        sources_used=None
        if answer.sources_used is None
        else list(dict.fromkeys(ledger.resolve(s) or s for s in answer.sources_used)),
    )


def _number(answer: CitedAnswer, policy: CitePolicy, *, escape: bool) -> CitedAnswer:
    """Sources in first-cited order with markers rewritten; the listed sources chosen."""
    if not policy.renumber:
        return answer
    if not answer.citations:
        return answer
    keep_all = policy.sources == "all"
    numbered = renumber(answer, keep_unused=keep_all, escape=escape)
    if not keep_all or not policy.exclude_inline:
        return numbered
    cited = {sid for c in numbered.citations for sid in c.source_ids}
    cited.update(numbered.sources_used or ())
    uncited = [s for s in numbered.sources if s.id not in cited]
    if not uncited:
        return numbered
    tail = SourceLedger()
    for source in uncited:
        tail.add(source)
    shown = {s.id for s in tail.footnotes(exclude_inline=True)} & {
        s.id for s in tail.footnotes(exclude_inline=numbered.text)
    }
    listed = [s for s in numbered.sources if s.id in cited or s.id in shown]
    return numbered if len(listed) == len(numbered.sources) else numbered.replace(sources=listed)


def _check_require(answer: CitedAnswer, require: Require, *, grounded: bool) -> None:
    if require is None or answer.citations:
        return
    if require == "grounding" and grounded:
        return
    who = answer.provider or "the answer"
    if grounded:
        reason, why = "no citations", "sources were there but the answer cites none"
    else:
        reason, why = "no grounding", "the answer rests on no source and carries no citations"
    raise GroundingRequiredError(
        f"{who}: {why}", provider=answer.provider, reason=reason, answer=answer
    )


# --- small helpers -------------------------------------------------------------------------


def _reassign(citation: Citation, to: Callable[[str], str]) -> Citation:
    ids = list(dict.fromkeys(to(sid) for sid in citation.source_ids))
    return (
        citation if ids == citation.source_ids else citation.model_copy(update={"source_ids": ids})
    )


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _unique(notes: list[str]) -> list[str]:
    return list(dict.fromkeys(notes))


_QUIET: ContextVar[bool] = ContextVar("unicite_quiet", default=False)


class _QuietFilter(logging.Filter):
    """Drops unicite's log records while citing is disabled in this thread or task."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _QUIET.get()


logging.getLogger("unicite").addFilter(_QuietFilter())
# Filters do not pass down to child loggers: extraction forensics must stay quiet too.
logging.getLogger("unicite.grounding").addFilter(_QuietFilter())


@contextmanager
def _quiet() -> Iterator[None]:
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)
