"""`renumber`: sources in first-cited order, and the markers in the text rewritten to match."""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence

from unicite._marker_syntax import (
    MARKER_RE,
    Token,
    cached_when_short,
    expand_ranges,
    marker_spans,
    read_token,
)
from unicite._marks import format_marker
from unicite._segment import cached_segments
from unicite.exceptions import UsageError
from unicite.markers._edit import Edit, EditedText
from unicite.model import Citation, CitedAnswer

__all__ = ["keeps_numbers", "named_sources", "renumber", "rewrite_marker"]

# Where a bracketed number may start: the cheap test before reading the text's markers.
_NUMBER_OPEN_RE = re.compile(r"\[\[?\d")


def renumber(answer: CitedAnswer, *, keep_unused: bool = False, escape: bool = True) -> CitedAnswer:
    r"""Number the sources in the order the text first cites them, and rewrite the markers.

    The first source cited becomes ``[1]``, the next new one ``[2]``, and so on, in reading
    order: citations by where their marker starts (a citation without one by where it ends),
    and within a citation its sources in the order the marker writes them, so ``[3, 1]``
    makes source 3 number 1 and reads ``[1, 2]``. That is the order in which a reader meets
    the markers, and it needs nothing after a marker to number it: `MarkerStream` numbers
    markers this way while the text streams. A footnote reference counts where it stands,
    not where its definition is. Sources the model declared in ``sources_used`` follow,
    then, with ``keep_unused=True``, the remaining sources in their old order.

    Each citation lists its sources by their new number. Every marker in the text (a
    citation's ``marker_span``) is rewritten in its own style with the new numbers,
    ascending and 1-based, so ``[5] … [2]`` becomes ``[1] … [2]``, adjacent markers that
    make one citation are written as one (``[3] [1]`` becomes ``[1][2]``) and
    ``【4:3†source】`` becomes ``【4:0†source】``; ``[^label]`` footnotes become ``[^n]``;
    inline links name their source by URL and stay as they are. A range stays a range where
    the new numbers still run on (``[2-4]`` after ``[3]`` becomes ``[1-3]``) and is listed
    where they do not (after ``[3]`` and ``[5]`` it becomes ``[1,3,4]``). Offsets move with
    the text. Applying it twice changes nothing more.

    A ``[n]`` in prose that is no citation's marker (text the parser was not asked to read,
    a ``[1, 9]`` glued to a code-like word, an answer built by hand) could silently name
    another source once the numbers move: unless the citations before it already gave ``n``
    to the same source, it is escaped as Markdown text (``\[n]``, which no parser reads as a
    marker and Markdown shows as ``[n]``) and a diagnostic says so. The test reads nothing
    after the number, so `MarkerStream` escapes the same numbers as it shows them. With
    ``escape=False`` nothing is escaped and a diagnostic reports each number that now names
    another source (`unicite.cite` does so for a provider's text, which it never edits). Code
    and URLs are left alone.

    Args:
        answer: The answer to renumber; it is not modified.
        keep_unused: Keep sources nothing cites (after the cited ones) instead of dropping them.
        escape: Escape bracketed numbers that are not citations and would name another source.

    Returns:
        A new, validated `CitedAnswer`.

    Raises:
        UsageError: ``answer`` is not a `CitedAnswer`, or ``keep_unused`` or ``escape`` is not
            a bool.
    """
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"renumber expects a CitedAnswer, got {type(answer).__name__}")
    if not isinstance(keep_unused, bool):
        raise UsageError(f"keep_unused must be a bool, got {keep_unused!r}")
    if not isinstance(escape, bool):
        raise UsageError(f"escape must be a bool, got {escape!r}")
    return renumbered(answer, keep_unused=keep_unused, escape=escape)


def renumbered(answer: CitedAnswer, *, keep_unused: bool, escape: bool) -> CitedAnswer:
    """`renumber` on checked arguments.

    `MarkerStream` passes ``escape=False`` when bracket markers were not read (another marker
    style was asked for): the diagnostic is given, the text left as written, as live.
    """
    size = len(answer.text)

    def marker_of(citation: Citation) -> tuple[int, int] | None:
        span = citation.marker_span
        return span if span is not None and 0 <= span[0] < span[1] <= size else None

    def reading_order(citation: Citation) -> tuple[int, int, int]:
        span = marker_of(citation)
        return (span[0] if span is not None else citation.end, citation.start, citation.end)

    order: dict[str, int] = {}
    reading = sorted(answer.citations, key=reading_order)
    for citation in reading:
        for sid in citation.source_ids:
            order.setdefault(sid, len(order))
    for sid in answer.sources_used or ():
        order.setdefault(sid, len(order))
    if keep_unused:
        for source in answer.sources:
            order.setdefault(source.id, len(order))
    sources = sorted((s for s in answer.sources if s.id in order), key=lambda s: order[s.id])
    number = {source.id: n for n, source in enumerate(sources, start=1)}

    # Citations sharing a marker (or overlapping ones) share one rewritten marker.
    marked = [(span, c.source_ids) for c in answer.citations if (span := marker_of(c))]
    spans: list[tuple[int, int, set[int]]] = []
    for span, ids in sorted(marked):
        numbers = {number[sid] for sid in ids if sid in number}
        if spans and span[0] < spans[-1][1]:
            start, end, merged = spans[-1]
            spans[-1] = (start, max(end, span[1]), merged | numbers)
        else:
            spans.append((span[0], span[1], numbers))
    edits: list[Edit] = []
    for start, end, numbers in spans:
        old = answer.text[start:end]
        new = rewrite_marker(old, sorted(numbers))
        if new is not None and new != old:
            edits.append(Edit(start, end, new))
    diagnostics = answer.diagnostics
    read = [(reading_order(c)[0], c.source_ids) for c in reading]
    stray = _stray_numbers(answer, [(a, b) for a, b, _ in spans], number, read)
    if not escape:
        stray = [(start, end, moved) for start, end, moved in stray if moved]
    if stray:
        diagnostics = [*diagnostics]
        for start, end, moved in stray:
            if moved:
                why = "its number now names another source"
            else:
                why = "no citation before it gives its number to that source"
            if escape:
                edits.append(Edit(start, start + 1, "\\["))
                why += ": escaped as text"
            else:
                why += "; read it as text, not as that source"
            diagnostics.append(
                f"text {answer.text[start:end]!r} at {start} is not a citation and {why}"
            )
        edits.sort(key=lambda e: e.start)
    edited = EditedText(answer.text, edits)

    citations = []
    for citation in answer.citations:
        start, end = edited.span(citation.start, citation.end)
        span = marker_of(citation)
        update = {
            "start": start,
            "end": end,
            "text": edited.text[start:end],
            "source_ids": sorted(citation.source_ids, key=number.__getitem__),
            "marker_span": None if span is None else edited.span(*span),
        }
        citations.append(citation.model_copy(update=update))
    return answer.replace(
        text=edited.text, sources=sources, citations=citations, diagnostics=diagnostics
    )


def _stray_numbers(
    answer: CitedAnswer,
    markers: list[tuple[int, int]],
    number: dict[str, int],
    reading: list[tuple[int, list[str]]],
) -> list[tuple[int, int, bool]]:
    """Bracketed numbers in prose, outside every marker, that may not keep their source.

    ``[n]`` reads as the n-th source of ``answer``; after renumbering it reads as the source
    numbered n. Returned are those for which the citations read before them (``reading``:
    where each is read, its sources, in reading order) do not already give every number its
    source, each with whether it now names another source. Numbers naming no source before
    (``[0]``, a year, ``arr[9]``) keep their meaning.
    """
    text = answer.text
    starts = [a for a, _ in markers]

    def in_marker(position: int) -> bool:
        k = bisect.bisect_right(starts, position) - 1
        return k >= 0 and position < markers[k][1]

    if all(in_marker(m.start()) for m in _NUMBER_OPEN_RE.finditer(text)):
        return []
    old = [source.id for source in answer.sources]
    segments, _ = cached_segments(text)
    known: dict[str, int] = {}  # the numbers the citations read so far give
    read = 0
    stray: list[tuple[int, int, bool]] = []
    for seg in segments:
        if seg.kind == "code":
            continue
        for start, end in marker_spans(text, seg.start, seg.end, indexing=True):
            if in_marker(start):
                continue
            token = read_token(text, start, end)
            if token is None:
                continue
            named = named_sources(token, old)
            while read < len(reading) and reading[read][0] < start:
                for sid in reading[read][1]:
                    known.setdefault(sid, len(known) + 1)
                read += 1
            if not keeps_numbers(named, known):
                moved = not keeps_numbers(named, number)
                stray.append((start, end, moved))
    return stray


def named_sources(token: Token, ids: Sequence[str]) -> list[tuple[int, str]]:
    """What a bracketed number that is no citation names, read as ``[n]`` naming ``ids[n - 1]``."""
    if token.kind != "brackets":
        return []
    return [(n, ids[n - 1]) for n in expand_ranges(token.ranges) if 1 <= n <= len(ids)]


def keeps_numbers(named: Sequence[tuple[int, str]], numbers: Mapping[str, int]) -> bool:
    """Whether ``numbers`` gives each number of `named_sources` to the source it names.

    Given the numbers the citations before a bracketed number give, this decides whether it is
    escaped: it reads nothing after it, so `MarkerStream` decides the same as the text streams.
    """
    return all(numbers.get(sid) == n for n, sid in named)


def rewrite_marker(marker: str, numbers: Sequence[int]) -> str | None:
    """``marker`` (one or more adjacent markers) written again for 1-based ``numbers``.

    The style, and for lists their separator, name (``S``), turn (``4:``) and bracket shape,
    come from the first marker; None when the text holds no numbered marker (a link).
    """
    return _rewritten(marker, tuple(numbers))


@cached_when_short
def _rewritten(marker: str, numbers: tuple[int, ...]) -> str | None:
    tokens: list[Token] = []
    for m in MARKER_RE.finditer(marker):
        token = read_token(marker, m.start(), m.end())
        if token is not None and token.kind not in ("links", "usage"):
            tokens.append(token)
    if not tokens or not numbers:
        return None
    first = tokens[0]
    kind = first.kind
    if kind == "footnotes":
        return format_marker(tuple(numbers), "footnotes")
    if kind == "sup":
        return format_marker(tuple(numbers), "sup")
    if kind == "assistant":
        turn = f"{first.prefix}:" if first.prefix else ""
        opening, closing = ("[", "]") if first.ascii else ("\u3010", "\u3011")
        return "".join(f"{opening}{turn}{n - 1}\u2020source{closing}" for n in numbers)
    listed = _listed(numbers, first.separator, ranged=first.ranged)
    if kind == "sids":
        return f"[[{first.prefix}:{listed}]]"
    if kind == "docs":
        return "".join(f"[doc{n}]" for n in numbers)
    if first.prefix == "[[":
        if len(tokens) == 1 and len(numbers) == 1 and first.urls:
            return f"[[{numbers[0]}]]({first.urls[0]})"
        return "".join(f"[[{n}]]" for n in numbers)
    if len(tokens) > 1 or (len(first.ranges) <= 1 and not first.ranged):
        return "".join(f"[{n}]" for n in numbers)
    return f"[{listed}]"


def _listed(numbers: Sequence[int], separator: str, *, ranged: bool) -> str:
    """``1, 3`` or, when the marker wrote ranges, ``1, 3-5`` for runs of three or more."""
    parts: list[str] = []
    k = 0
    while k < len(numbers):
        j = k
        while ranged and j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        if j - k >= 2:
            parts.append(f"{numbers[k]}-{numbers[j]}")
        else:
            parts.extend(str(n) for n in numbers[k : j + 1])
        k = j + 1
    return separator.join(parts)
