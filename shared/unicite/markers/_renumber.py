"""`renumber`: sources in first-cited order, and the markers in the text rewritten to match."""

from __future__ import annotations

from collections.abc import Sequence

from unicite._marker_syntax import MARKER_RE, Token, read_token
from unicite._marks import format_marker
from unicite.exceptions import UsageError
from unicite.markers._edit import Edit, EditedText
from unicite.model import Citation, CitedAnswer

__all__ = ["renumber", "rewrite_marker"]


def renumber(answer: CitedAnswer, *, keep_unused: bool = False) -> CitedAnswer:
    """Number the sources in the order the text first cites them, and rewrite the markers.

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

    Args:
        answer: The answer to renumber; it is not modified.
        keep_unused: Keep sources nothing cites (after the cited ones) instead of dropping them.

    Returns:
        A new, validated `CitedAnswer`.

    Raises:
        UsageError: ``answer`` is not a `CitedAnswer`, or ``keep_unused`` is not a bool.
    """
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"renumber expects a CitedAnswer, got {type(answer).__name__}")
    if not isinstance(keep_unused, bool):
        raise UsageError(f"keep_unused must be a bool, got {keep_unused!r}")
    size = len(answer.text)

    def marker_of(citation: Citation) -> tuple[int, int] | None:
        span = citation.marker_span
        return span if span is not None and 0 <= span[0] < span[1] <= size else None

    def reading_order(citation: Citation) -> tuple[int, int, int]:
        span = marker_of(citation)
        return (span[0] if span is not None else citation.end, citation.start, citation.end)

    order: dict[str, int] = {}
    for citation in sorted(answer.citations, key=reading_order):
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
    return answer.replace(text=edited.text, sources=sources, citations=citations)


def rewrite_marker(marker: str, numbers: Sequence[int]) -> str | None:
    """``marker`` (one or more adjacent markers) written again for 1-based ``numbers``.

    The style, and for lists their separator, name (``S``), turn (``4:``) and bracket shape,
    come from the first marker; None when the text holds no numbered marker (a link).
    """
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
