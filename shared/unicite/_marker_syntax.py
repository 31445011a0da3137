"""What a citation marker looks like, and what one says: the single source of marker syntax.

`MARKER_RE` finds markers, `marker_spans` drops the matches that are not markers in context
(inline code, URLs, code-like indexing), `read_token` reads one marker into a `Token`, and
`expand_ranges` turns its numbers into the sources it names, under one cap (`MAX_RANGE`).
Segmentation, parsing, streaming, renumbering and sources lists all read markers through here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

from unicite._glued import LOOKBEHIND, GluedReading, glued_reading

__all__ = [
    "BACKTICKS_RE",
    "DEFINITION_RE",
    "FOOTNOTE_LABEL",
    "INDEX_LOOKBEHIND",
    "LINK",
    "MARKER_PREFIX_RE",
    "MARKER_RE",
    "MARKER_SHAPE_RE",
    "MAX_RANGE",
    "OPENER_RE",
    "SHORT",
    "URL_PARENS_PREFIX",
    "URL_SCAN",
    "MarkerKind",
    "Token",
    "cached_when_short",
    "code_spans",
    "doc_index_before",
    "expand_ranges",
    "footnote_number",
    "glued_reading",
    "in_url",
    "looks_like_year",
    "marker_numbers",
    "marker_spans",
    "read_token",
    "without_indexes",
]

MAX_RANGE = 100
"""The most numbers one range may name (``[1-100]``); a longer one is read as a mistake."""

FOOTNOTE_LABEL = r"[^\[\]\s]{1,40}"
"""A footnote label, as in ``[^label]``."""

# Not after a URL's or a format string's punctuation; "%" only after a number (``2.4%[1]``,
# ``7,3 %[2]``).
_IDENT_GUARD = "(?<![/=&#+~@\\[\\\\])(?<!(?<![0-9])(?<![0-9][ \u00a0\u202f])%)"
_NUMS = r"\d{1,4}(?:[ \t]*[,\u2013\-][ \t]*\d{1,4}){0,40}"
_URL_PARENS = r"\((?:[^()\s]|\([^()\s]{0,300}\)){1,2048}\)"
LINK = r"\[[^\[\]\n]{1,200}\]" + _URL_PARENS
"""A Markdown inline link ``[text](url)``, the URL allowing one level of parentheses."""
_NUMERIC_SHAPES = (
    r"\[\[" + _NUMS + r"\]\](?:" + _URL_PARENS + ")?"
    r"|\[" + _NUMS + r"\](?!\()(?!:[ \t]*(?:[A-Za-z][A-Za-z0-9+.\-]{0,20}://|www\.|<))"
)
# Azure OpenAI On Your Data's ``[doc1]``: lowercase ``doc`` and a number, glued to the word
# before it or not, never running on into a word (``[doc1]s``).
_DOCS = r"\[doc\d{1,4}\](?![A-Za-z0-9_])"
_SUP_GUARD = r"(?<![0-9])(?<!(?<![A-Za-z])[A-Za-z])(?<!(?<![A-Za-z])[A-Za-z]{2})"
_SUP = r"<(?i:sup)\b[^<>\n]{0,200}>(?:[^<\n]|<(?!/(?i:sup)>)){1,200}</(?i:sup)>"
# A <sup> that says it is a citation is one wherever it stands, even after a digit.
_CITE_SUP = (
    r"<(?i:sup)\b[^<>\n]{0,200}?(?:data-sids|class=[\"']?cite)[^<>\n]{0,200}>"
    r"(?:[^<\n]|<(?!/(?i:sup)>)){1,200}</(?i:sup)>"
)
_OTHER_SHAPES = (
    r"\[\[[A-Za-z_][\w\-]{0,15}:[ \t]*" + _NUMS + r"\]\](?:" + _URL_PARENS + ")?",
    r"\[\^" + FOOTNOTE_LABEL + r"\](?!:)",
    r"\[\d{1,4}(?::\d{1,4})?\u2020[^\[\]\n]{0,80}\]",
    r"\u3010(?:[^\u3010\u3011\n\u2020]{1,80}\u2020[^\u3010\u3011\n]{0,80}"
    r"|\d{1,6}(?::\d{1,6}){0,3})\u3011",
    r"\(" + LINK + r"(?:[ \t]*[,;][ \t]*" + LINK + r"){0,9}\)",
)

# Every shape opens with one of these; testing it first spares the engine trying each shape
# (and its look-behind guards) at every position of the text.
_OPENER = "(?=[\\[(<\u3010])"
OPENER_RE = re.compile("[\\[(<\u3010]")
"""A character every `MARKER_RE` match opens with: where a marker may start."""
MARKER_RE = re.compile(
    _OPENER
    + "(?:"
    + "|".join(
        (
            f"{_IDENT_GUARD}(?:{_NUMERIC_SHAPES})",
            f"{_IDENT_GUARD}{_DOCS}",
            _CITE_SUP,
            f"{_SUP_GUARD}{_SUP}",
            *_OTHER_SHAPES,
        )
    )
    + ")"
)
"""Citation markers: ``[1]``, ``[1, 2]``, ``[2-4]``, ``[^1]``, ``[[S:1,3]]``, ``【4:0†source】``,
Azure's ``[doc1]``, ``<sup>…</sup>`` and parenthesised inline links ``([site](url))``.

Numeric brackets followed by ``(`` (link text) or used as a reference definition
(``[1]: https://…``) do not match; `marker_spans` also drops matches inside inline code and
URLs, indexing of code-like identifiers (``a[1]``, ``row_2[3]``, ``obj.items[1]``) and
bracket markers glued to a ``]`` that does not end a marker (``a[1][2]``, ``[text][1]``).
Models often glue markers to words (``France[1]``, ``OpenAI[1]``, ``CO2[1]``), and answers about
code glue indexes the same way (``arr[2]``): `glued_reading` tells them apart, and a glued
marker is a citation only when it reads as one and its numbers name given sources
(see `Token.glued`). A ``[doc1]`` glued to a word is a citation (Azure writes them so,
``challenges[doc2].``) unless the name before it reads as code (`doc_index_before`).
"""

MARKER_SHAPE_RE = re.compile("|".join((_NUMERIC_SHAPES, _DOCS, _CITE_SUP, _SUP, *_OTHER_SHAPES)))
"""`MARKER_RE` without its look-behind guards: the marker that starts at a given position."""

URL_PARENS_PREFIX = r"\((?:[^()\s]|\([^()\s]{0,300}\)){0,2048}(?:\([^()\s]{0,300})?"
"""A prefix of a parenthesised link target that more text may still complete."""
_LINK_PREFIX = r"\[[^\[\]\n]{0,200}(?:\](?:" + URL_PARENS_PREFIX + r")?)?"

# Prefixes that may still become a marker once more text arrives (supersets: holding a little
# too long is harmless, releasing too early is not).
MARKER_PREFIX_RE = re.compile(
    r"\[(?:\^[^\[\]\s]{0,40}|\[[^\[\]\n]{0,430}\]?|[^\[\]\n]{0,430})"
    r"|\((?:(?:" + LINK + r"[ \t]*[,;][ \t]*){0,9}(?:" + _LINK_PREFIX + "|" + LINK + r"[ \t]*)?)?"
    r"|<(?i:s(?:u(?:p(?:\b[^<>\n]{0,200}(?:>(?:[^<\n]|<(?!/sup>)){0,200}"
    r"(?:<(?:/(?:s(?:u(?:p)?)?)?)?)?)?)?)?)?)?"
    r"|\u3010[^\u3010\u3011\n]{0,170}"
)
"""Text at an opener (``[``, ``(``, ``<``, ``【``) that is not a marker yet but may become one."""

DEFINITION_RE = re.compile(r"(?m)^[ ]{0,3}\[\^(" + FOOTNOTE_LABEL + r")\]:([^\r\n]*)")
"""A footnote definition line ``[^label]: …``: the label, and the rest of the line."""

BACKTICKS_RE = re.compile(r"`+")
"""A run of backticks: what opens and closes inline code."""

INDEX_LOOKBEHIND = LOOKBEHIND
"""How far back from a ``[`` `read_token` may read (`glued_reading`: a word and its line)."""

URL_SCAN = 300
"""How far back from a marker `marker_spans` reads for a URL it may be part of."""


def code_spans(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Inline code spans in ``text[lo:hi]``: a backtick run closed by the next equal run."""
    if text.find("`", lo, hi) < 0:
        return []
    runs = [m.span() for m in BACKTICKS_RE.finditer(text, lo, hi)]
    if len(runs) < 2:
        return []
    nxt = [-1] * len(runs)
    last: dict[int, int] = {}
    for idx in range(len(runs) - 1, -1, -1):
        width = runs[idx][1] - runs[idx][0]
        nxt[idx] = last.get(width, -1)
        last[width] = idx
    spans: list[tuple[int, int]] = []
    idx = 0
    while idx < len(runs):
        pair = nxt[idx]
        if pair < 0:
            idx += 1
        else:
            spans.append((runs[idx][0], runs[pair][1]))
            idx = pair + 1
    return spans


def in_url(text: str, pos: int) -> bool:
    """Whether the marker at `pos` is part of a URL.

    The rule reads the token before the marker (back to a space, a quote or ``<>``) for
    ``://`` or a leading ``www.``; a token without ``/``, ``w`` or ``W`` has neither, and the
    nearest space bounds it, so most markers are settled without reading the token.
    """
    if pos > 0 and text[pos - 1] in ")]\"'\u201d\u2019":
        return False
    lo = max(0, pos - URL_SCAN)
    space = text.rfind(" ", lo, pos)
    near = text[space + 1 if space >= 0 else lo : pos]
    if "/" not in near and "w" not in near and "W" not in near:
        return False
    k = pos
    while k > lo and not text[k - 1].isspace() and text[k - 1] not in "<>\"'":
        k -= 1
    token = text[k:pos]
    scheme = token.rfind("://")
    if scheme < 0:
        return token[:4].lower() == "www."
    # A ")" that closes a parenthesis opened before the URL ended it: ``(https://a.b)文[1]``.
    rest = token[scheme:]
    return rest.count(")") <= rest.count("(")


def _glued_before(text: str, a: int) -> bool:
    """Whether the character before ``text[a]`` may glue a bracket to an expression."""
    if a == 0:
        return False
    before = text[a - 1]
    return before.isalnum() or before in "_)%\u2030]"


_DOC_NAME_RE = re.compile(r"[A-Za-z0-9_]{1,80}$")
_LOWER_CAMEL_RE = re.compile(r"[a-z][a-z0-9]*[A-Z]")


def doc_index_before(text: str, a: int) -> bool:
    """Whether the ``[docN]`` at `a` indexes a name from code rather than cites.

    Azure glues its markers to words (``challenges[doc2].``), so a plain word before one is
    prose; a snake_case or lower camelCase name (``my_docs[doc1]``, ``myDocs[doc1]``) or an
    attribute (``self.docs[doc1]``) is code. Reads only the text before the bracket.
    """
    m = _DOC_NAME_RE.search(text, max(0, a - 80), a)
    if m is None:
        return False
    name = m.group()
    if "_" in name or _LOWER_CAMEL_RE.match(name) is not None:
        return True
    k = m.start()
    # An attribute: a name after a ``.`` that ends a name or a call (not ``3.12`` nor ``docs.``).
    return (
        not name[0].isdigit()
        and k >= 2
        and text[k - 1] == "."
        and (text[k - 2].isalpha() or text[k - 2] in "_)]")
    )


def marker_spans(
    text: str,
    lo: int,
    hi: int,
    codes: list[tuple[int, int]] | None = None,
    *,
    indexing: bool = False,
) -> list[tuple[int, int]]:
    """The markers of ``text[lo:hi]`` (one block of prose), in order.

    `MARKER_RE` matches outside inline code (``codes``, found when not given) and URLs that,
    after a ``]``, continue a run of markers. A ``[n]`` glued to the text before it that does
    not read as a citation (``arr[2]``, see `glued_reading`) is left out unless ``indexing``
    is true: the parsers take it and report it.
    """
    if codes is None:
        codes = code_spans(text, lo, hi)
    out: list[tuple[int, int]] = []
    ci = 0
    for m in MARKER_RE.finditer(text, lo, hi):
        a = m.start()
        while ci < len(codes) and codes[ci][1] <= a:
            ci += 1
        if ci < len(codes) and codes[ci][0] <= a:
            continue
        if in_url(text, a):
            continue
        if not indexing and _reads_as_index(text, a):
            continue
        # After "]" only a marker continues a marker run: not a[1][2] nor [text][1].
        if a > lo and text[a - 1] == "]" and text[a] == "[" and (not out or out[-1][1] != a):
            continue
        out.append((a, m.end()))
    return out


def _reads_as_index(text: str, a: int) -> bool:
    """Whether the marker at `a` is glued to the text before it and reads as no citation."""
    if not _glued_before(text, a):
        return False
    if text[a + 1 : a + 2].isdigit():
        reading = glued_reading(text, a)
        return reading is not None and reading.reading != "citation"
    return text.startswith("[doc", a) and doc_index_before(text, a)


def without_indexes(text: str, spans: list[tuple[int, int]], lo: int) -> list[tuple[int, int]]:
    """`marker_spans` of ``text[lo:hi]`` from its result with ``indexing`` (same bounds).

    Leaving the index-like markers out only drops markers: the rest are read again in order,
    with the rule after ``]`` seeing the markers kept.
    """
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if _reads_as_index(text, a):
            continue
        if a > lo and text[a - 1] == "]" and text[a] == "[" and (not out or out[-1][1] != a):
            continue
        out.append((a, b))
    return out


# --- one marker ---------------------------------------------------------------------------------

MarkerKind = Literal["brackets", "sids", "sup", "footnotes", "assistant", "docs", "links", "usage"]
"""What one marker is; ``"docs"`` is Azure's ``[doc1]``; ``"usage"`` is a ``[[USAGE:1,3]]``
declaration, not a citation."""

_NUMBER_RE = re.compile(r"\d+")
_SEPARATOR_RE = re.compile(r"[ \t]*([,\u2013\-])[ \t]*")
_NUMS_RE = re.compile(_NUMS)
_SINGLE_RE = re.compile(r"\[(" + _NUMS + r")\]")
_DOC_RE = re.compile(r"\[doc(\d{1,4})\]")
_DOUBLE_RE = re.compile(
    r"\[\[(?:([A-Za-z_][\w\-]{0,15}):[ \t]*)?(" + _NUMS + r")\]\](?:\((.*)\))?",
    re.DOTALL,
)
_FOOTNOTE_RE = re.compile(r"\[\^(" + FOOTNOTE_LABEL + r")\]")
_ASSISTANT_RE = re.compile(
    r"[\[\u3010]([^\u2020\u3010\u3011\[\]]*)(?:\u2020(.*))?[\]\u3011]", re.DOTALL
)
_TURN_RE = re.compile(r"\d{1,6}(?::\d{1,6}){0,3}")
_LINK_RE = re.compile(r"\[([^\[\]\n]{1,200})\]\(((?:[^()\s]|\([^()\s]{0,300}\))+)\)")
_SUP_OPEN_RE = re.compile(r"<sup\b([^<>]*)>(.*)</sup>", re.IGNORECASE | re.DOTALL)
_SIDS_ATTR_RE = re.compile(r"""\bdata-sids?\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.I)
_TAG_RE = re.compile(r"<[^<>]*>")
_YEAR_LO, _YEAR_HI = 1000, 2999
_NUMBERED_KINDS = frozenset(("brackets", "sids", "sup", "footnotes", "docs"))


@dataclass(frozen=True, slots=True)
class Token:
    """One marker in the text and what it refers to, before the references are resolved."""

    start: int
    end: int
    kind: MarkerKind
    ranges: tuple[tuple[int, int], ...] = ()
    """Numbers as written, each an inclusive ``(first, last)`` range; single numbers repeat."""
    label: str | None = None
    """A footnote label, or the name after ``†`` in an assistant marker."""
    urls: tuple[str, ...] = ()
    """Link targets: the links of a ``([site](url))`` marker, the URL of ``[[1]](url)``."""
    problems: tuple[str, ...] = ()
    """What is wrong with the marker's own syntax (reversed or overlong ranges, no number)."""
    prefix: str | None = None
    """``S`` in ``[[S:1]]``; the turn (``4:``) of an assistant marker; ``[[`` for ``[[1]]``."""
    separator: str = ","
    """How the marker separates numbers (``","`` or ``", "``), kept when it is rewritten."""
    ranged: bool = False
    """The marker wrote a range (``2-4``)."""
    ascii: bool = False
    """An assistant marker written with ``[…]`` instead of ``【…】``."""
    glued: GluedReading | None = None
    """How a ``[n]`` glued to the text before it reads (``OpenAI[1]``, ``arr[2]``): a citation
    only when it reads as one and every number it writes names a given source, else text."""
    indexing: bool = False
    """Glued, and read as an index or left unsure (`glued_reading`): never a citation."""


def expand_ranges(ranges: Iterable[tuple[int, int]]) -> list[int]:
    """Every number inclusive ``(first, last)`` ranges name, in order, repeats kept.

    A reversed range, or one naming more than `MAX_RANGE` numbers, names none.
    """
    return [n for first, last in ranges if last - first < MAX_RANGE for n in range(first, last + 1)]


_Ranges = tuple[tuple[tuple[int, int], ...], tuple[str, ...], bool, str]

SHORT = 64
"""Arguments up to this long are worth caching: answers repeat a few short markers."""

_F = TypeVar("_F", bound=Callable[..., object])


def cached_when_short(fn: _F) -> _F:
    """`fn` with an LRU cache (4,096 entries) for calls whose arguments are all `SHORT` or less.

    For pure functions of short strings or tuples that answers repeat (``[3]`` read, ``[3]``
    rewritten as ``[1]``); a longer argument is read as it comes, so the cache stays small.
    Like an `functools.lru_cache` function, the result has ``cache_clear`` and ``cache_info``.
    """
    cached = functools.lru_cache(maxsize=4096)(fn)

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        if all(len(arg) <= SHORT for arg in args):
            return cached(*args)
        return fn(*args)

    call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    call.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]


@cached_when_short
def _ranges(spec: str) -> _Ranges:
    """Ranges, syntax problems, whether a range was written, and the separator of a list."""
    numbers = [int(n) for n in _NUMBER_RE.findall(spec)]
    separators = [m.group(1) for m in _SEPARATOR_RE.finditer(spec)]
    ranges: list[tuple[int, int]] = []
    problems: list[str] = []
    ranged = False
    k = 0
    while k < len(numbers):
        if k < len(separators) and separators[k] != ",":
            first, last = numbers[k], numbers[k + 1]
            ranged = True
            if first > last:
                problems.append(f"reversed range {first}-{last}")
            elif last - first >= MAX_RANGE:
                problems.append(f"range {first}-{last} names more than {MAX_RANGE} sources")
            else:
                ranges.append((first, last))
            if k + 1 < len(separators) and separators[k + 1] != ",":
                problems.append(f"range {first}-{last} runs on into another range")
            k += 2
        else:
            ranges.append((numbers[k], numbers[k]))
            k += 1
    separator = ", " if ", " in spec or " ," in spec else ","
    return tuple(ranges), tuple(problems), ranged, separator


def _numeric(start: int, end: int, kind: MarkerKind, spec: str, **fields: object) -> Token:
    ranges, problems, ranged, separator = _ranges(spec)
    if not ranges and not problems:
        problems = ("no source number",)
    return Token(
        start,
        end,
        kind,
        ranges=ranges,
        problems=problems,
        ranged=ranged,
        separator=separator,
        **fields,  # type: ignore[arg-type]
    )


def read_token(text: str, start: int, end: int) -> Token | None:
    """Read the marker ``text[start:end]`` (a `MARKER_RE` match); None when it cites nothing.

    A superscript without numbers (``<sup>th</sup>``) and Markdown link text are not markers.
    """
    marker = text[start:end]
    head = marker[:1]
    if head == "(":
        links = tuple(m.group(2) for m in _LINK_RE.finditer(marker))
        return Token(start, end, "links", urls=links) if links else None
    if head == "<":
        return _read_sup(marker, start, end)
    if marker.startswith("[^"):
        m = _FOOTNOTE_RE.fullmatch(marker)
        return None if m is None else Token(start, end, "footnotes", label=m.group(1))
    if marker.startswith("[["):
        m = _DOUBLE_RE.fullmatch(marker)
        if m is None:
            return None
        name, spec, url = m.group(1), m.group(2), m.group(3)
        urls = (url,) if url else ()
        if name is None:
            return _numeric(start, end, "brackets", spec, urls=urls, prefix="[[")
        kind: MarkerKind = "usage" if name.upper() == "USAGE" else "sids"
        return _numeric(start, end, kind, spec, urls=urls, prefix=name)
    if head == "\u3010" or "\u2020" in marker:
        return _read_assistant(marker, start, end)
    if marker.startswith("[doc"):
        return _read_doc(text, start, end)
    m = _SINGLE_RE.fullmatch(marker)
    if m is None:
        return None
    token = _numeric(start, end, "brackets", m.group(1))
    if _glued_before(text, start):
        reading = glued_reading(text, start)
        if reading is not None:
            indexing = reading.reading != "citation"
            return replace(token, glued=reading, indexing=indexing)
    return token


_DOC_INDEX = GluedReading("index", "a name from code before it")


def _read_doc(text: str, start: int, end: int) -> Token | None:
    """Azure's ``[docN]``: document N of the answer's citations (from 1)."""
    m = _DOC_RE.fullmatch(text, start, end)
    if m is None:
        return None
    number = int(m.group(1))
    token = Token(start, end, "docs", ranges=((number, number),))
    if _glued_before(text, start) and doc_index_before(text, start):
        return replace(token, glued=_DOC_INDEX, indexing=True)
    return token


def _read_sup(marker: str, start: int, end: int) -> Token | None:
    m = _SUP_OPEN_RE.fullmatch(marker)
    if m is None:
        return None
    attrs, inner = m.group(1), m.group(2)
    attr = _SIDS_ATTR_RE.search(attrs)
    if attr is not None:
        spec = next(v for v in attr.groups() if v is not None).strip()
        if not spec:
            return Token(start, end, "sup", problems=("empty data-sids",))
        if not _NUMBER_RE.search(spec):
            return Token(start, end, "sup", problems=(f"unreadable data-sids {spec[:40]!r}",))
        return _numeric(start, end, "sup", spec)
    plain = _TAG_RE.sub("", inner)
    cleaned = plain.replace("[", " ").replace("]", " ").strip()
    if not cleaned:
        return None
    compact = re.sub(r"\s*,\s*|\s+", ",", cleaned)
    if _NUMS_RE.fullmatch(compact) is None:
        return None
    return _numeric(start, end, "sup", compact)


def _read_assistant(marker: str, start: int, end: int) -> Token | None:
    m = _ASSISTANT_RE.fullmatch(marker)
    if m is None:
        return None
    head, label = m.group(1), m.group(2)
    turn = head.strip() if _TURN_RE.fullmatch(head.strip()) else None
    ranges: tuple[tuple[int, int], ...] = ()
    prefix = None
    if turn is not None:
        parts = turn.split(":")
        index = int(parts[-1])
        ranges = ((index, index),)
        prefix = ":".join(parts[:-1]) or None
    return Token(
        start,
        end,
        "assistant",
        ranges=ranges,
        label=None if label is None else label.strip(),
        prefix=prefix,
        ascii=marker.startswith("["),
    )


def looks_like_year(token: Token) -> bool:
    """``[2024]``: a lone bracketed number (or range) that only a year would write."""
    return (
        token.kind == "brackets"
        and token.prefix is None
        and bool(token.ranges)
        and all(lo >= _YEAR_LO and hi <= _YEAR_HI for lo, hi in token.ranges)
    )


def marker_numbers(text: str, start: int, end: int) -> list[int]:
    """The source numbers the marker ``text[start:end]`` writes, as written (1-based or not).

    Numbered styles only: ``[1, 3]``, ``[2-4]``, ``[[S:1]]``, ``<sup>2</sup>``, and ``[^5]``
    read as number 5; links, assistant markers and named footnotes write none.
    """
    token = read_token(text, start, end)
    if token is None or token.kind not in _NUMBERED_KINDS:
        return []
    if token.kind == "footnotes":
        number = footnote_number(token.label or "")
        return [] if number is None else [number]
    return expand_ranges(token.ranges)


def footnote_number(label: str) -> int | None:
    """The number a footnote label writes (``[^3]`` is 3), or None for a name.

    Only decimal digits count: ``int()`` rejects superscripts such as ``²``.
    """
    return int(label) if label.isdecimal() else None
