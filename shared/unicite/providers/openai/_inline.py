r"""What OpenAI-compatible answers carry in their text beside the annotations.

Two things the annotations alone do not say:

- **Private-use markers.** OpenAI models sometimes leak the markers ChatGPT renders into text,
  with structured output and agents: ``\ue200cite\ue202turn0search0\ue201`` (several ids
  joined by ``\ue202``), ``\ue200filecite\ue202turn0file1\ue201``, ``\ue200navlist…\ue201``
  and ``\ue200entity\ue202["kind","Name",…]\ue201``. They are never shown: a marker is removed
  from the text (with the spaces before it when it ends a phrase), an entity is replaced by the
  name it displays, and the offsets of the annotations after them are moved to match (code
  points). What a ``cite`` marker names is resolved by the reader that sees the search calls
  (`unicite.providers.openai.responses`); here it becomes a `PendingCite`.
- **Placeholder spans.** OpenRouter and other gateways send ``url_citation`` annotations with
  ``start_index = end_index = 0``: sources, not citations. When the text carries numbered
  markers, they index those annotations (see `_cite_numbered`).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from unicite._marker_syntax import read_token
from unicite._segment import claim_spans, find_markers
from unicite._urls import normalize_url
from unicite.model import UrlLocation
from unicite.providers._builder import AnswerBuilder
from unicite.providers.openai._annotations import (
    annotation,
    claim_at,
    is_placeholder,
    url_source,
)

__all__ = [
    "PRIVATE_CHARS",
    "Cleaned",
    "PendingCite",
    "cite_links",
    "read_part",
    "strip_private",
]

PRIVATE_CHARS = ("\ue200", "\ue201", "\ue202")
"""The private-use characters that open, close and separate a ChatGPT marker."""

_MARKER_RE = re.compile(
    "\ue200([A-Za-z_]{1,40})((?:\ue202[^\ue200\ue201\ue202]{0,2000}){0,64})\ue201"
    # A marker cut short by the end of the text (a truncated answer).
    "|\ue200[A-Za-z_]{0,40}(?:\ue202[^\ue200\ue201\ue202\\s]{0,200}){0,64}\\Z"
    # A lone opener, closer or separator.
    "|[\ue200\ue201\ue202]"
)
_ID_RE = re.compile(r"turn\d{1,4}[a-z_]{1,20}\d{1,5}")
# After a removed marker, these keep the space before it out of the text: "groß \ue200…\ue201."
_CLOSING = frozenset(".,;:!?)]}\u00bb\u201d\u2019\u3001\u3002\uff0c\uff0e\uff01\uff1f\uff09\u300d")
_MAX_RANGE = 100
"""Numbers one ``[2-4]`` marker may expand to; longer ranges are read as a mistake."""


@dataclass(frozen=True)
class PrivateMarker:
    """A private-use marker removed from a text part."""

    kind: str
    """``cite``, ``filecite``, ``navlist``, ``entity``...; ``""`` for a broken one."""
    parts: tuple[str, ...]
    """What the ``\\ue202`` separators split its payload into."""
    at: int
    """Where it stood in the cleaned text."""
    raw: str

    @property
    def label(self) -> str:
        """A printable name for diagnostics: ``cite:turn0search0,turn0news3``."""
        return f"{self.kind or '?'}:{','.join(self.parts)}"[:120]


@dataclass
class Cleaned:
    """A text part without its private-use markers, and how its offsets moved."""

    text: str
    markers: list[PrivateMarker] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)
    _ends: list[int] = field(default_factory=list)
    _delta: list[int] = field(default_factory=lambda: [0])

    def shift(self, offset: int) -> int:
        """Where an offset into the original text lands in the cleaned one.

        An offset inside a removed marker lands where the marker stood.
        """
        k = bisect.bisect_left(self._starts, offset)
        if k and offset < self._ends[k - 1]:
            return self._starts[k - 1] + self._delta[k - 1]
        return offset + self._delta[k]

    def edit(self, start: int, end: int, replacement: int) -> None:
        self._starts.append(start)
        self._ends.append(end)
        self._delta.append(self._delta[-1] + replacement - (end - start))


def _entity_name(payload: str) -> str:
    """The name an entity marker displays: ``["city","Zürich",…]`` gives ``Zürich``."""
    try:
        value = json.loads(payload)
    except ValueError:
        return payload if payload and not payload.lstrip().startswith("[") else ""
    if isinstance(value, list):
        names = [v for v in value[1:2] + value[:1] if isinstance(v, str) and v]
        return names[0] if names else ""
    return value if isinstance(value, str) else ""


def strip_private(text: str) -> Cleaned:
    """``text`` without its private-use markers (entities keep the name they show)."""
    if not any(char in text for char in PRIVATE_CHARS):
        return Cleaned(text)
    cleaned = Cleaned(text)
    out: list[str] = []
    length = 0
    pos = 0
    for match in _MARKER_RE.finditer(text):
        start, end = match.span()
        kind = match.group(1) or ""
        payload = match.group(2) or ""
        parts = tuple(p for p in payload.split("\ue202") if p) if kind else ()
        replacement = _entity_name(parts[0]) if kind == "entity" and parts else ""
        if not replacement:
            # A marker ending a phrase takes the spaces before it along: "groß \ue200…\ue201."
            after = text[end : end + 1]
            lead = start
            while lead > pos and text[lead - 1] in " \t":
                lead -= 1
            glued = lead > 0 and text[lead - 1] not in "\r\n"
            if glued and (not after or after.isspace() or after in _CLOSING or after == "\ue200"):
                start = lead
        out.append(text[pos:start])
        length += start - pos
        cleaned.markers.append(PrivateMarker(kind, parts, length, match.group(0)))
        out.append(replacement)
        length += len(replacement)
        cleaned.edit(start, end, len(replacement))
        pos = end
    out.append(text[pos:])
    cleaned.text = "".join(out)
    return cleaned


_OFFSET_KEYS = ("start_index", "end_index", "index")


def _shifted(ann: object, cleaned: Cleaned) -> object:
    """A copy of an annotation with its offsets moved into the cleaned text."""
    if not isinstance(ann, Mapping) or not cleaned.markers:
        return ann
    out = dict(ann)
    for key in _OFFSET_KEYS:
        value = out.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = cleaned.shift(value)
    nested = out.get("url_citation")
    if isinstance(nested, Mapping):
        out["url_citation"] = _shifted(nested, cleaned)
    return out


@dataclass(frozen=True)
class PendingCite:
    """A private-use ``cite`` marker: what it names, resolved once every search call is read."""

    start: int
    end: int
    """The claim it closes, in the answer text."""
    marker: PrivateMarker
    path: str


def read_part(
    builder: AnswerBuilder,
    raw_text: str,
    annotations: list[Any],
    path: str,
    *,
    links: bool = False,
) -> list[PendingCite]:
    """Append one text part and read its annotations; return its private ``cite`` markers.

    Private-use markers leave the text first (the annotations' offsets follow); placeholder
    annotations become sources, and numbered markers cite them when they can be matched.

    With ``links`` (xAI's answers), a ``url_citation`` without any offsets is a source (xAI
    lists the sources it met so when inline citations are off), and each numbered inline link
    (``[[n]](url)``, ``[n](url)``) no annotation spans cites its URL (see `cite_links`).
    """
    cleaned = strip_private(raw_text)
    text = cleaned.text
    base = builder.append_text(text)
    placeholders: list[tuple[int, str | None, int | None]] = []
    spans: list[tuple[int, int]] = []
    for k, ann in enumerate(annotations):
        apath = f"{path}.annotations[{k}]"
        if is_placeholder(ann):
            sid, number = url_source(builder, ann, apath)
            placeholders.append((k, sid, number))
            continue
        shifted = _shifted(ann, cleaned)
        if links and isinstance(shifted, Mapping) and _positionless(shifted):
            url_source(builder, shifted, apath, raw=ann)
            continue
        if links:
            spans.extend(_span_of(shifted))
        annotation(builder, shifted, text, base, apath, raw=ann)
    if placeholders:
        _cite_numbered(builder, text, base, annotations, placeholders, path)
    elif links:
        cite_links(builder, text, base, spans, path)
    pending: list[PendingCite] = []
    for marker in cleaned.markers:
        where = f"{path}: private-use marker {marker.label} at {base + marker.at}"
        if marker.kind in ("cite", "filecite"):
            start, end = claim_at(text, marker.at)
            pending.append(PendingCite(base + start, base + end, marker, where))
        elif marker.kind == "entity":
            builder.note(f"{where}: replaced by the name it shows")
        else:
            builder.note(f"{where}: removed from the text")
    return pending


def _cite_numbered(
    builder: AnswerBuilder,
    text: str,
    base: int,
    annotations: list[Any],
    placeholders: list[tuple[int, str | None, int | None]],
    path: str,
) -> None:
    """Cite the sources of placeholder annotations where numbered markers name them.

    ``[n]`` names the annotation titled ``n`` when every placeholder's title is a distinct
    number (xAI), else the n-th annotation (OpenRouter relaying Perplexity: ``[1]`` is
    ``annotations[0]``), provided every annotation is a placeholder and every number the text
    uses names one. A link (``[[n]](url)``, ``[site](url)``, ``([site](url))``) names the
    annotation with its URL. Anything less certain is left uncited, and said; the citation's
    ``extras["placeholder_by"]`` says which rule matched (``titles``, ``order``, ``link``).
    """
    count = len(placeholders)
    builder.note(
        f"{path}: {count} url_citation annotation(s) with the placeholder span 0..0 "
        "(a gateway's sources, not spans): kept as sources"
    )
    groups = _marker_groups(text)
    if not groups:
        return
    numbers = [number for _, _, number in placeholders]
    by_number: dict[int, str | None] = {}
    if all(n is not None for n in numbers) and len(set(numbers)) == count:
        by_number = {n: sid for _, sid, n in placeholders if n is not None}
        rule = "titles"
    elif all(n is None for n in numbers) and count == len(annotations):
        by_number = {k + 1: sid for k, sid, _ in placeholders}
        rule = "order"
    else:
        rule = ""
    by_url: dict[str, str] = {}
    for _, sid, _ in placeholders:
        source = builder.ledger.get(sid) if sid is not None else None
        if source is not None and source.url and sid is not None:
            by_url.setdefault(normalize_url(source.url), sid)
    used = {n for _, _, markers in groups for n, _, url in markers if n is not None and url is None}
    unknown = sorted(n for n in used if n not in by_number)
    if rule == "order" and unknown:
        builder.note(
            f"{path}: markers {unknown} name no annotation ({count} given): "
            "numbered markers left uncited"
        )
        by_number = {}
    elif not rule and used:
        builder.note(
            f"{path}: the annotations do not say which of them [n] names (numbered and plain "
            "titles mixed, or other annotation types): numbered markers left uncited"
        )
    spans = [(start, end) for start, end, _ in groups]
    claims = claim_spans(text, spans) if builder.locates_claims else spans
    for (start, end, markers), (claim_start, claim_end) in zip(groups, claims, strict=True):
        ids: list[str] = []
        ways: list[str] = []
        for number, at, url in markers:
            where = f"{path}: marker {text[start:end][:60]!r} at {base + at}"
            if url is not None:
                # A link cites the source it links to; a link to another page is just a link.
                sid = by_url.get(normalize_url(url))
                if sid is None and number is not None:
                    builder.note(f"{where}: links a URL no annotation gives; left uncited")
                elif number is not None and by_number.get(number, sid) != sid:
                    builder.note(f"{where}: links another source than [{number}] names")
                way = "link"
            elif number is not None:
                sid = by_number.get(number)
                if sid is None and rule == "titles":
                    builder.note(f"{where}: [{number}] names no annotation title")
                way = rule
            else:
                continue
            if sid is not None and sid not in ids:
                ids.append(sid)
                ways.append(way)
        if ids:
            builder.cite(
                base + claim_start,
                base + claim_end,
                ids,
                marker_span=(base + start, base + end),
                extras={"placeholder_by": "+".join(dict.fromkeys(ways))},
                raw=text[start:end],
                where=f"{path}: marker {text[start:end][:60]!r}",
            )


_LINK_RE = re.compile(r"(?<![\[!])\[([^\[\]\n]{1,200})\]\((https?://[^\s()]{1,2048})\)")
"""A bare Markdown link, as OpenRouter's web plugin asks models to write: ``[site](url)``."""
_NUMBERED_LINK_RE = re.compile(r"\[\[(\d{1,4})\]\]\((https?://[^\s()]{1,2048})\)")
"""xAI's ``[[n]](url)``, found here too: in unspaced (CJK) text the marker parser can take the
text after a link's URL for more URL."""

_Markers = list[tuple[int | None, int, str | None]]


def _marker_groups(text: str) -> list[tuple[int, int, _Markers]]:
    """Runs of adjacent markers: ``(start, end, [(number, at, url), ...])``.

    ``[n]`` (and lists, ranges) give numbers; ``[[n]](url)`` a number and a URL; a link
    (``[site](url)``, ``([site](url))``) a URL only.
    """
    found: list[tuple[int, int, _Markers]] = []
    taken: list[tuple[int, int]] = []
    for start, end in find_markers(text):
        token = read_token(text, start, end)
        if token is None:
            continue
        taken.append((start, end))
        markers: _Markers = []
        if token.kind == "links":
            markers = [(None, start, url) for url in token.urls]
        elif token.kind == "brackets" and token.prefix in (None, "[["):
            url = token.urls[0] if token.prefix == "[[" and len(token.urls) == 1 else None
            if token.prefix == "[[" and url is None:
                continue
            markers = [
                (n, start, url)
                for first, last in token.ranges
                if last - first < _MAX_RANGE
                for n in range(first, last + 1)
            ]
        if markers:
            found.append((start, end, markers))
    for match in _NUMBERED_LINK_RE.finditer(text):
        start, end = match.span()
        if not any(a < end and start < b for a, b in taken):
            taken.append((start, end))
            found.append((start, end, [(int(match.group(1)), start, match.group(2))]))
    for match in _LINK_RE.finditer(text):
        start, end = match.span()
        if not any(a < end and start < b for a, b in taken):
            found.append((start, end, [(None, start, match.group(2))]))
    found.sort(key=lambda group: group[0])
    groups: list[tuple[int, int, _Markers]] = []
    for start, end, markers in found:
        if groups and groups[-1][1] == start:
            groups[-1] = (groups[-1][0], end, [*groups[-1][2], *markers])
        else:
            groups.append((start, end, markers))
    return groups


# --- xAI: numbered inline links -------------------------------------------------------------

_INLINE_LINK_RE = re.compile(
    r"(?<![\[!])\[(\[)?(\d{1,4})\](?(1)\])\((https?://(?:[^\s()]|\([^\s()]{0,200}\)){1,2048})\)"
)
"""A numbered inline link: xAI's ``[[n]](url)``, or ``[n](url)``; a URL may hold one level of
parentheses (``…/XAI_(company)``)."""


def _positionless(ann: object) -> bool:
    """Whether an annotation is a ``url_citation`` that gives neither offset."""
    if not isinstance(ann, Mapping) or ann.get("type") != "url_citation":
        return False
    nested = ann.get("url_citation")
    body = nested if isinstance(nested, Mapping) else ann
    return body.get("start_index") is None and body.get("end_index") is None


def _span_of(ann: object) -> list[tuple[int, int]]:
    """The ``(start, end)`` a ``url_citation`` annotates, when it gives a usable one."""
    if not isinstance(ann, Mapping) or ann.get("type") != "url_citation":
        return []
    nested = ann.get("url_citation")
    body = nested if isinstance(nested, Mapping) else ann
    start, end = body.get("start_index"), body.get("end_index")
    if type(start) is int and type(end) is int and 0 <= start < end:
        return [(start, end)]
    return []


def cite_links(
    builder: AnswerBuilder,
    text: str,
    base: int,
    annotated: list[tuple[int, int]],
    path: str,
) -> None:
    """Cite the claim before each numbered inline link no annotation spans, by its URL.

    xAI writes its inline citations as ``[[n]](url)`` after the claim they support, and on
    Chat Completions (and in text a framework kept without the annotations) the links are all
    there is. A run of adjacent links is one marker citing every URL in it; the link's URL is
    the source (merged with the same URL from ``citations`` or an annotation), its number kept
    in ``extras["marker_number"]`` (the first of a run), and ``extras["recovered_from"]`` says
    ``"inline_link"``. Links inside a span an annotation gives were cited by the annotation.
    Named links (``[site](url)``) and bare ``[n]`` are not read: nothing says what they cite.
    """
    runs: list[tuple[int, int, list[tuple[int, str]]]] = []
    for match in _INLINE_LINK_RE.finditer(text):
        start, end = match.span()
        if any(a < end and start < b for a, b in annotated):
            continue
        link = (int(match.group(2)), match.group(3))
        if runs and text[runs[-1][1] : start].strip(" ") == "":
            runs[-1] = (runs[-1][0], end, [*runs[-1][2], link])
        else:
            runs.append((start, end, [link]))
    if not runs:
        return
    spans = [(start, end) for start, end, _ in runs]
    claims = claim_spans(text, spans) if builder.locates_claims else spans
    for (start, end, found), (claim_start, claim_end) in zip(runs, claims, strict=True):
        ids = [
            builder.add_source({"kind": "web", "url": url, "raw": {"url": url, "number": n}})
            for n, url in found
        ]
        if claim_start == claim_end:
            claim_start, claim_end = start, end  # nothing to claim around it: the link itself
        builder.cite(
            base + claim_start,
            base + claim_end,
            ids,
            marker_span=(base + start, base + end),
            location=UrlLocation(url=found[0][1]) if len(found) == 1 else None,
            extras={"marker_number": found[0][0], "recovered_from": "inline_link"},
            raw=text[start:end],
            where=f"{path}: inline link {text[start:end][:60]!r} at {base + start}",
        )
