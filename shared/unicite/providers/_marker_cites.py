"""Citations from the numbered markers a provider writes into its own answer text.

Perplexity writes ``[n]`` and Azure OpenAI On Your Data ``[docN]``, each counting from 1 into
a list the response carries. Both are read here, with the markers package's syntax
(`unicite._marker_syntax`) and claim rule (`unicite._segment.claim_spans`): a run of adjacent
markers is one citation of the claim it closes, with ``marker_span`` on the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from unicite._marker_syntax import MAX_RANGE, read_token
from unicite._segment import claim_spans, find_markers
from unicite.providers._builder import AnswerBuilder

__all__ = ["NumberedKind", "cite_markers", "marker_groups"]

NumberedKind = Literal["brackets", "docs"]
"""Which markers a provider writes: ``[n]`` (and lists, ranges) or Azure's ``[docN]``."""


def marker_groups(
    text: str, builder: AnswerBuilder, kind: NumberedKind = "brackets"
) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """Runs of adjacent markers of one kind: ``(start, end, [(number, marker start), ...])``.

    Lists and ranges (``[1, 3]``, ``[2-4]``) expand to every number they name; markers of
    other kinds (``[[1]]``, ``[^1]``, ``[doc1]`` when reading ``[n]``) are text.
    """
    groups: list[tuple[int, int, list[tuple[int, int]]]] = []
    for start, end in find_markers(text):
        token = read_token(text, start, end)
        if token is None or token.kind != kind or token.prefix is not None or token.indexing:
            continue
        for problem in token.problems:
            builder.note(f"marker {text[start:end]} at {start}: {problem}")
        numbers: list[tuple[int, int]] = []
        for first, last in token.ranges:
            if last - first >= MAX_RANGE:
                builder.note(
                    f"marker {text[start:end]} at {start}: range {first}-{last} is too long"
                )
                continue
            numbers.extend((n, start) for n in range(first, last + 1))
        if not numbers:
            continue
        if groups and groups[-1][1] == start:
            groups[-1] = (groups[-1][0], end, [*groups[-1][2], *numbers])
        else:
            groups.append((start, end, numbers))
    return groups


def cite_markers(
    builder: AnswerBuilder,
    text: str,
    source_of: Callable[[int], str | None],
    given: str,
    *,
    kind: NumberedKind = "brackets",
    base: int = 0,
    quote_of: Callable[[int], str | None] | None = None,
    skip_empty: bool = False,
) -> None:
    """Cite what each run of markers in `text` names; say which numbers name nothing.

    Args:
        builder: Where the citations go; `text` starts at ``base`` in its answer text.
        text: The text the markers are in.
        source_of: The source id a number names, or None.
        given: What the numbers count into, for diagnostics (``"3 given"``).
        kind: Which markers to read.
        base: Where `text` starts in the answer.
        quote_of: The quote of the source a number names, used when a run names one source.
        skip_empty: Leave a run that closes no claim (a marker alone on its line) uncited,
            with a diagnostic, instead of citing an empty span.
    """
    groups = marker_groups(text, builder, kind)
    spans = [(start, end) for start, end, _ in groups]
    # An empty claim leaves a run uncited under `skip_empty`: then the claims count.
    claims = claim_spans(text, spans) if builder.locates_claims or skip_empty else spans
    for (start, end, markers), (claim_start, claim_end) in zip(groups, claims, strict=True):
        ids: list[str] = []
        quotes: list[str | None] = []
        for number, at in markers:
            sid = source_of(number)
            if sid is None:
                shown = f"[doc{number}]" if kind == "docs" else f"[{number}]"
                builder.note(f"marker {shown} at {base + at} names no source ({given})")
            elif sid not in ids:
                ids.append(sid)
                quotes.append(quote_of(number) if quote_of is not None else None)
        if not ids:
            continue
        where = f"marker {text[start:end]} at {base + start}"
        if skip_empty and claim_start == claim_end:
            builder.note(f"{where}: closes no claim (nothing before it to cite); left uncited")
            continue
        builder.cite(
            base + claim_start,
            base + claim_end,
            ids,
            quote=quotes[0] if len(quotes) == 1 else None,
            marker_span=(base + start, base + end),
            raw=text[start:end],
            where=where,
        )
