"""`parse_markers`: citation markers written in answer text, turned into a `CitedAnswer`.

The work is split so that `MarkerStream` can run the same steps on a prefix of the text:
`scan` finds markers outside code, `Context.resolve` says which sources each names, and
`plan_removals` decides which spans leave the text (``[[USAGE:…]]`` tags, footnote definitions
naming sources, invalid markers when ``on_invalid="drop"``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from unicite._marker_syntax import DEFINITION_RE, OPENER_RE, footnote_number
from unicite._segment import Segmentation, claims_in
from unicite.exceptions import CitationError, UsageError
from unicite.markers._edit import Edit, EditedText, merge
from unicite.markers._tokens import (
    PARSE_STYLES,
    MarkerKind,
    ParseStyle,
    SourceTable,
    Token,
    find_url,
    looks_like_year,
    read_token,
    shown,
)
from unicite.model import Citation, CitedAnswer

__all__ = [
    "DEFINITION_RE",
    "REMOVAL_CONTEXT",
    "Context",
    "Definition",
    "OnInvalid",
    "Region",
    "Scan",
    "build_answer",
    "is_removable",
    "parse_markers",
    "plan_removals",
    "run_region",
    "scan",
]

OnInvalid = Literal["drop", "keep", "raise"]
"""What happens to a marker that names no valid source: removed from the text, left in it as
plain text, or a `CitationError`. Either of the first two records a diagnostic."""

_ON_INVALID = ("drop", "keep", "raise")
_ALL_KINDS: frozenset[MarkerKind] = frozenset(
    ("brackets", "sids", "sup", "footnotes", "assistant", "docs", "links")
)
# Links and footnote references are content (a working link; a label whose definition may come
# later), so they stay in the text even when they name no source.
_REMOVABLE_KINDS: frozenset[MarkerKind] = frozenset(
    ("brackets", "sids", "sup", "assistant", "docs")
)
_GENERIC_LABELS = frozenset(("", "source", "sources"))
_CLOSING = frozenset(
    ".,;:!?)]}\"'\u2026\u3002\uff0c\uff1b\uff1a\uff01\uff1f\u3001\uff09\u300d\u300f"
)
_NUMBER_ONLY_RE = re.compile(r"\s*\[?(\d{1,4})\]?\.?\s*")
_NAME_TRIM = " \t\"'*_`\u201c\u201d\u2018\u2019<>."


@dataclass(frozen=True, slots=True)
class Definition:
    """A footnote definition line ``[^label]: …`` and the source it names, if any."""

    start: int
    """Start of the line."""
    end: int
    """End of the line, before its line break."""
    label: str
    source_id: str | None
    problem: str | None
    """Why a definition that looks like a source reference names none (an unknown URL)."""


@dataclass(frozen=True, slots=True)
class Region:
    """Text that leaves the answer; `last` is where the decision stops depending on the text."""

    start: int
    end: int
    last: int
    """Position of the first character after it that the decision looked at."""


@dataclass(frozen=True, slots=True)
class Scan:
    """Markers and footnote definitions found outside code, in text order."""

    tokens: list[Token]
    definitions: list[Definition]
    left: list[Token] = field(default_factory=list)
    """``[n]`` glued to a word that reads as no citation, or names no source: left as text."""


class Context:
    """Parsing options and the sources, checked once."""

    def __init__(
        self,
        sources: object,
        *,
        style: ParseStyle | Sequence[ParseStyle] = "auto",
        on_invalid: OnInvalid = "drop",
        base: int = 1,
    ) -> None:
        if isinstance(base, bool) or base not in (0, 1):
            raise UsageError(f"base must be 0 or 1, got {base!r}")
        if not isinstance(on_invalid, str) or on_invalid not in _ON_INVALID:
            raise UsageError(f"on_invalid must be 'drop', 'keep' or 'raise', got {on_invalid!r}")
        self.kinds = _kinds(style)
        self.on_invalid: OnInvalid = on_invalid
        self.table = SourceTable(sources, base)

    @property
    def last_number(self) -> int:
        """The highest valid source number."""
        return self.table.base + len(self.table) - 1

    def accepts(self, token: Token) -> bool:
        """Whether `token` is a marker under these options.

        Years, other styles, and a ``[n]`` glued to a word that reads as an index (``arr[2]``)
        or whose numbers do not all name a source are text.
        """
        if token.kind != "usage" and token.kind not in self.kinds:
            return False
        if token.indexing or (token.glued is not None and not self.names_sources(token)):
            return False
        return not (looks_like_year(token) and all(lo > self.last_number for lo, _ in token.ranges))

    def names_sources(self, token: Token) -> bool:
        """Whether every number `token` writes names a source, and its syntax is sound."""
        base, last = self.table.base, self.last_number
        return (
            bool(token.ranges)
            and not token.problems
            and all(base <= lo <= hi <= last for lo, hi in token.ranges)
        )

    def define(self, label: str, content: str) -> tuple[str | None, str | None]:
        """The source a footnote definition names, and a problem when it names an unknown one."""
        url = find_url(content)
        if url is not None:
            sid = self.table.url(url)
            if sid is None:
                return None, f"footnote [^{label}] is defined as {url}, which is not a source"
            return sid, None
        m = _NUMBER_ONLY_RE.fullmatch(content)
        if m is not None:
            n = int(m.group(1))
            sid = self.table.number(n)
            return (sid, None) if sid else (None, f"footnote [^{label}] is defined as source {n}")
        return self.table.name(content.strip(_NAME_TRIM)), None

    def resolve(
        self, token: Token, footnotes: dict[str, tuple[str | None, str | None]] | None = None
    ) -> tuple[list[str], list[str]]:
        """The ids a marker names, and what is wrong with it.

        ``footnotes`` maps definition labels to `define` results; without it footnote labels
        resolve by number only.
        """
        problems = list(token.problems)
        table = self.table
        kind = token.kind
        if kind == "links":
            ids: list[str] = []
            for url in token.urls:
                sid = table.url(url)
                if sid is None:
                    problems.append(f"links to {shown(url)}, which is not a source")
                elif sid not in ids:
                    ids.append(sid)
            return ids, problems
        if kind == "footnotes":
            label = token.label or ""
            sid, problem = (footnotes or {}).get(label, (None, None))
            if sid is not None:
                return [sid], problems
            if problem is not None:
                return [], [*problems, problem]
            number = footnote_number(label)
            if number is not None:
                return table.resolve_ranges([(number, number)], problems), problems
            if label not in (footnotes or {}):
                problems.append(f"footnote [^{label}] has no definition naming a source")
            return [], problems
        if kind == "assistant":
            label = token.label or ""
            if label.casefold() not in _GENERIC_LABELS:
                sid = table.name(label)
                if sid is not None:
                    return [sid], problems
            if not token.ranges:
                problems.append(f"names no source ({label!r} is not a source title)")
                return [], problems
            # The tool's results in the order given, whatever numbers the prompt showed.
            index = token.ranges[0][0]
            results = table.results
            if index >= len(results):
                problems.append(f"search result {index} out of range ({len(results)} given)")
                return [], problems
            return [results[index]], problems
        ids = table.resolve_ranges(token.ranges, problems)
        for url in token.urls:
            sid = table.url(url)
            if sid is not None:
                if ids and ids != [sid]:
                    problems.append("its number and its link name different sources; the link wins")
                return [sid], problems
        return ids, problems


def _kinds(style: object) -> frozenset[MarkerKind]:
    styles = [style] if isinstance(style, str) else style
    if not isinstance(styles, Iterable):
        raise UsageError(f"style must be a marker style or a list of them, got {style!r}")
    kinds: set[MarkerKind] = set()
    for one in styles:
        if not isinstance(one, str) or one not in PARSE_STYLES:
            allowed = ", ".join(repr(s) for s in PARSE_STYLES)
            raise UsageError(f"style must be one of {allowed}, got {one!r}")
        if one == "auto":
            kinds |= _ALL_KINDS
        else:
            kinds.add(one)  # type: ignore[arg-type]
    if not kinds:
        raise UsageError("style names no marker style")
    return frozenset(kinds)


def scan(text: str, context: Context, segments: Segmentation | None = None) -> Scan:
    """Markers and footnote definitions of `text`, outside code blocks, inline code and URLs.

    Markers are read segment by segment (see `marker_spans`); only the segments that hold a
    character a marker opens with (`OPENER_RE`) are looked at, and only they are split.
    """
    if segments is None:
        segments = Segmentation(text)
    tokens: list[Token] = []
    left: list[Token] = []
    pos = 0
    while True:
        opener = OPENER_RE.search(text, pos)
        if opener is None:
            break
        seg = segments.at(opener.start())
        if seg is None:  # every character but whitespace lies in a segment
            pos = opener.end()
            continue
        pos = seg.end
        if seg.kind == "code":
            continue
        for start, end in segments.markers(seg, indexing=True):
            token = read_token(text, start, end)
            if token is None:
                continue
            if context.accepts(token):
                tokens.append(token)
            elif token.glued is not None and token.kind in context.kinds:
                left.append(token)
    definitions: list[Definition] = []
    if "footnotes" in context.kinds:
        for m in DEFINITION_RE.finditer(text):
            if segments.in_code(m.start(1)):
                continue
            label = m.group(1)
            sid, problem = context.define(label, m.group(2))
            definitions.append(Definition(m.start(), m.end(), label, sid, problem))
    return Scan(tokens, definitions, left)


REMOVAL_CONTEXT = 16
"""How much text before a marker `is_removable` is shown (both parsers show the same)."""


def is_removable(token: Token, context: Context, ids: list[str], before: str = "") -> bool:
    """Whether a marker leaves the text: a usage tag, or (when dropping) one naming nothing.

    ``before`` is the text just before the marker (a few characters are enough). An invalid
    marker right after a backtick (spaces between allowed) stays: removing it could join two
    backtick runs and change which text is code, after a stream had already shown it.
    """
    if token.kind == "usage":
        return True
    if context.on_invalid != "drop" or token.kind not in _REMOVABLE_KINDS or ids:
        return False
    return before.rstrip(" \t")[-1:] != "`"


def plan_removals(
    text: str, scanned: Scan, removable: Sequence[bool], *, trim_end: bool
) -> list[Region]:
    """The spans that leave the text, sorted and disjoint.

    A run of removed markers takes the spaces before it when punctuation, a space or a line
    break follows (``claim [9].`` becomes ``claim.``); a run alone on its line takes the line.
    A footnote definition naming a source takes its line. With ``trim_end``, whitespace left at
    the end of the text by a removal at the end goes too.
    """
    n = len(text)
    regions: list[Region] = []
    stripped = [d for d in scanned.definitions if d.source_id is not None]
    lines = [d.start for d in stripped]
    for d in stripped:
        if d.end < n:
            brk = d.end + (2 if text.startswith("\r\n", d.end) else 1)
            regions.append(Region(d.start, brk, brk))
        else:
            regions.append(Region(_space_before(text, d.start), n, n))

    def in_definition(position: int) -> bool:
        k = bisect.bisect_right(lines, position) - 1
        return k >= 0 and position < stripped[k].end

    run: list[Token] = []
    for token, remove in zip(scanned.tokens, removable, strict=True):
        if not remove or in_definition(token.start):
            if run:
                regions.append(run_region(text, run[0].start, run[-1].end))
                run = []
            continue
        if run and text[run[-1].end : token.start].strip(" \t"):
            regions.append(run_region(text, run[0].start, run[-1].end))
            run = []
        run.append(token)
    if run:
        regions.append(run_region(text, run[0].start, run[-1].end))

    merged: list[Region] = []
    for region in sorted(regions, key=lambda r: (r.start, r.end)):
        if merged and region.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = Region(last.start, max(last.end, region.end), max(last.last, region.last))
        else:
            merged.append(region)
    if trim_end and merged and merged[-1].end == n:
        start = merged.pop().start
        while True:
            start = _space_before(text, start)
            if not merged or merged[-1].end < start:
                break
            start = merged.pop().start
        merged.append(Region(start, n, n))
    return merged


def _space_before(text: str, position: int) -> int:
    while position > 0 and text[position - 1].isspace():
        position -= 1
    return position


def run_region(text: str, a: int, b: int) -> Region:
    """What removing the markers ``text[a:b]`` takes with them (see `plan_removals`)."""
    n = len(text)
    ls = a
    while ls > 0 and text[ls - 1] in " \t":
        ls -= 1
    re_ = b
    while re_ < n and text[re_] in " \t":
        re_ += 1
    line_start = ls == 0 or text[ls - 1] in "\r\n"
    line_end = re_ == n or text[re_] in "\r\n"
    if line_start and line_end:
        if re_ == n:
            return Region(_space_before(text, ls), n, n)
        brk = re_ + (2 if text.startswith("\r\n", re_) else 1)
        # After a "\r" the next character decides whether the break is "\r\n".
        return Region(ls, brk, re_ + 1 if text[re_] == "\r" else re_)
    if line_start:
        return Region(a, re_, re_)
    if re_ > b or line_end or text[b] in _CLOSING:
        return Region(ls, b, re_)
    return Region(a, b, re_)


# --- the whole text -----------------------------------------------------------------------------


def parse_markers(
    text: str,
    sources: object,
    *,
    style: ParseStyle | Sequence[ParseStyle] = "auto",
    on_invalid: OnInvalid = "drop",
    base: int = 1,
) -> CitedAnswer:
    """Read the citation markers of an answer into a `CitedAnswer`.

    Every marker becomes a citation (origin ``"marker"``) of the claim it closes: the sentence
    or clause before it, or, for a marker leading a bullet or line, the text after it (see
    `unicite.claim_span`); ``marker_span`` is the marker itself. Markers written next to each
    other (``[1][2]``, ``[1] [3]``) make one citation. Styles, all read by ``style="auto"``:

    - ``"brackets"``: ``[1]``, ``[1, 3]``, ``[2-4]``, ``[1][2]``, ``[[1]]``, ``[[1]](url)``;
    - ``"sids"``: ``[[S:1,3]]``, ``[[S:2-4]]`` (any name other than ``USAGE`` before the colon);
    - ``"sup"``: ``<sup class="cite" data-sids="1,3">…</sup>``, else the numbers inside
      ``<sup>…</sup>``;
    - ``"footnotes"``: ``[^1]`` or ``[^label]``, resolved through one-line definitions
      ``[^label]: …`` (by the URL in the definition, a source number, or a source title;
      otherwise a numeric label is a source number). Definitions that name a source are
      removed from the text (the answer's sources replace them; their text is kept in
      ``extras["footnote_definitions"]``); other footnotes stay as they are;
    - ``"assistant"``: OpenAI-assistant ``【4:0†source】``: the name after ``†`` when it is a
      source's title or file name, else the last number, counted from 0 like the tool's
      search results (whatever ``base`` says);
    - ``"docs"``: Azure OpenAI On Your Data's ``[doc1]``, ``[doc1][doc2]``: the number counts
      from 1 like ``[1]`` (glued to a word or not; after a name from code, ``my_docs[doc1]``,
      it is text);
    - ``"links"``: inline links in parentheses, ``([site](url))``, matched to sources by
      normalized URL.

    Markers in fenced or indented code blocks, inline code and URLs, code-like indexing
    (``a[1]``), link text (``[1](…)``) and year-like numbers out of range (``[2024]``) are text.
    ``[[USAGE:1,3]]`` tags are removed and reported in ``sources_used``. A citation whose first
    source is a page of a file (``extras["page_number"]``) has that page as its ``location``.

    Validation records a diagnostic for ``[0]`` in 1-based numbering, numbers out of range,
    reversed ranges (``[4-2]``), empty markers, numbers repeated within a marker, unknown
    URLs, labels and titles. A marker naming no valid source makes no citation; with
    ``on_invalid="drop"`` a numbered one is removed from the text, with ``"keep"`` it stays,
    and ``"raise"`` raises `CitationError` on any such problem. Links and footnote
    references always stay in the text.

    The answer lists the sources in the order given, so ``[3]`` cites ``sources[2]`` and footnote
    numbers match the text; `unicite.renumber` reorders them by first citation. Sources sharing
    an id are listed once. Runs in time linear in the text and the number of markers.

    Args:
        text: The answer, as the model wrote it.
        sources: The sources the model was shown, in their prompt order: `Source` objects,
            dicts with the same keys, or a `SourceLedger`.
        style: ``"auto"``, one style, or a list of styles to read; markers of other styles are
            left as text.
        on_invalid: ``"drop"``, ``"keep"`` or ``"raise"`` (see above).
        base: 1 when the first source is ``[1]`` (the default), 0 for producers that count
            from 0.

    Returns:
        The answer, with ``diagnostics`` and ``sources_used`` filled in.

    Raises:
        UsageError: Wrong argument types or unknown options.
        CitationError: With ``on_invalid="raise"``, when a marker is invalid.
    """
    if not isinstance(text, str):
        raise UsageError(f"text must be a str, got {type(text).__name__}")
    context = Context(sources, style=style, on_invalid=on_invalid, base=base)
    return build_answer(text, context)


def build_answer(text: str, context: Context) -> CitedAnswer:
    """Parse the whole of `text` under `context`."""
    segments = Segmentation(text)
    scanned = scan(text, context, segments)
    diagnostics = list(context.table.notes)
    footnotes: dict[str, tuple[str | None, str | None]] = {}
    for definition in scanned.definitions:
        if definition.label in footnotes:
            diagnostics.append(f"footnote [^{definition.label}] is defined twice; the first wins")
            continue
        footnotes[definition.label] = (definition.source_id, definition.problem)
        if definition.problem is not None:
            diagnostics.append(definition.problem)
    resolved = [context.resolve(token, footnotes) for token in scanned.tokens]
    problems: list[str] = []
    for token, (_, token_problems) in zip(scanned.tokens, resolved, strict=True):
        if token_problems:
            marker = shown(text[token.start : token.end])
            problems.extend(f"marker {marker} at {token.start}: {p}" for p in token_problems)
    diagnostics.extend(problems)
    for token in scanned.left:
        if any(hi >= max(context.table.base, 1) for _, hi in token.ranges):
            marker = shown(text[token.start : token.end])
            if token.indexing and token.glued is not None:
                diagnostics.append(
                    f"marker {marker} at {token.start} may be an index, not a citation"
                    f" ({token.glued.why}); left as text"
                )
            else:
                diagnostics.append(
                    f"marker {marker} at {token.start} is glued to a word and names no"
                    " given source; left as text"
                )
    if context.on_invalid == "raise" and (problems or any(d.problem for d in scanned.definitions)):
        raise CitationError(
            f"invalid citation markers: {(problems or diagnostics)[0]}", diagnostics=diagnostics
        )

    removable = [
        is_removable(token, context, ids, text[max(0, token.start - REMOVAL_CONTEXT) : token.start])
        for token, (ids, _) in zip(scanned.tokens, resolved, strict=True)
    ]
    regions = plan_removals(text, scanned, removable, trim_end=True)
    edited = EditedText(text, merge([Edit(r.start, r.end) for r in regions]))
    new_text = edited.text
    removed_starts = [r.start for r in regions]

    def removed(position: int) -> bool:
        k = bisect.bisect_right(removed_starts, position) - 1
        return k >= 0 and position < regions[k].end

    used: list[str] | None = None
    groups: list[tuple[int, int, list[str]]] = []
    previous_cites = False
    for token, (ids, _) in zip(scanned.tokens, resolved, strict=True):
        if token.kind == "usage":
            used = used if used is not None else []
            used.extend(sid for sid in ids if sid not in used)
            continue
        if removed(token.start):
            continue
        start, end = edited.span(token.start, token.end)
        if not ids:
            previous_cites = False
            continue
        if previous_cites and not new_text[groups[-1][1] : start].strip(" \t"):
            first, _, members = groups[-1]
            groups[-1] = (first, end, members + [sid for sid in ids if sid not in members])
        else:
            groups.append((start, end, list(dict.fromkeys(ids))))
        previous_cites = True

    if new_text != text:
        segments = Segmentation(new_text, segments)
    claims = claims_in(segments, [(start, end) for start, end, _ in groups])
    # A marker citing a page of a file (a paged chunk) points at that page.
    first_ids = {ids[0] for _, _, ids in groups}
    pages = {
        s.id: page
        for s in context.table.sources
        if s.id in first_ids and (page := s.page_location()) is not None
    }
    citations = [
        # model_validate is several times faster than model_construct in pydantic 2.
        Citation.model_validate(
            {
                "start": claim_start,
                "end": claim_end,
                "text": new_text[claim_start:claim_end],
                "source_ids": ids,
                "origin": "marker",
                "marker_span": (start, end),
                "location": pages.get(ids[0]),
            }
        )
        for (start, end, ids), (claim_start, claim_end) in zip(groups, claims, strict=True)
    ]
    extras: dict[str, object] = {}
    stripped = {d.label: text[d.start : d.end].strip() for d in scanned.definitions if d.source_id}
    if stripped:
        extras["footnote_definitions"] = stripped
    return CitedAnswer(
        text=new_text,
        sources=list(context.table.sources),
        citations=citations,
        diagnostics=diagnostics,
        extras=extras,
        sources_used=used,
    )
