"""LLM attribution: ask a model which numbered source supports which claim, read its JSON leniently.

The reply is parsed whatever the model wraps around it (code fences, prose, trailing commas,
single quotes, Python literals, a cut-off array); each claim is located in the answer exactly,
then after whitespace and Unicode normalization, then fuzzily. What cannot be used becomes a
diagnostic.

Confidence is the model's own label as a number (`CONFIDENCE`: ``full`` 0.9, ``partial`` 0.5);
an entry without one of these labels has none. A ``threshold`` keeps only the claim–source
links whose confidence reaches it (an unlabelled link counts as 0), so 0.6 to 0.9 keeps the
``full`` ones alone; without a threshold every link the model gives is kept. A diagnostic
counts what a threshold dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from unicite._text import truncate
from unicite.attribution import _lexical as lexical
from unicite.attribution._claims import Claim
from unicite.exceptions import UsageError
from unicite.model import CharLocation, Citation, Location, Source

__all__ = [
    "CONFIDENCE",
    "Locator",
    "build_prompt",
    "llm_citations",
    "parse_reply",
]

CONFIDENCE = {"full": 0.9, "partial": 0.5}
"""The model's own support labels as numbers (its judgement, not a calibrated probability)."""
SNIPPET_CHARS = 1200
"""Characters of each source shown in the prompt (its snippet, else the start of its content)."""
FUZZY_CUTOFF = 85.0
"""Least rapidfuzz partial-ratio for a claim the model paraphrased to be located anyway."""
_MAX_DEPTH = 64

_PROMPT = """\
You attribute the claims of an answer to the numbered sources it was written from.

Sources:
{sources}

Answer:
<<<
{answer}
>>>

For every claim in the answer that one of the sources supports, give one entry per supporting \
source. "claim" must be copied exactly from the answer (a sentence or a clause, verbatim). \
"sourceIndex" is the source's number. "confidence" is "full" when the source supports the whole \
claim and "partial" when it supports only part of it. Leave out claims that no source supports.

Reply with JSON only, in exactly this shape:
{{"citations": [{{"claim": "exact text from the answer", "sourceIndex": 1, "confidence": "full"}}]}}
"""


# --- the prompt ---------------------------------------------------------------------------------


def _describe(n: int, source: Source) -> str:
    lines = [f"[{n}]"]
    if source.title:
        lines.append(f"Title: {' '.join(source.title.split())}")
    if source.url:
        lines.append(f"URL: {source.url}")
    body = source.snippet if source.snippet and source.snippet.strip() else source.content
    if body and body.strip():
        lines.append(f"Text: {truncate(' '.join(body.split()), SNIPPET_CHARS)}")
    return "\n".join(lines)


def build_prompt(answer: str, sources: Sequence[Source]) -> str:
    """The prompt for one batch of the answer; sources are numbered from 1 in the given order."""
    listed = "\n\n".join(_describe(n, s) for n, s in enumerate(sources, start=1))
    return _PROMPT.format(sources=listed, answer=answer)


# --- lenient JSON -------------------------------------------------------------------------------


class _ParseError(ValueError):
    pass


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/"}
_WORDS: dict[str, bool | None] = {"true": True, "false": False, "null": None, "none": None}


class _Lenient:
    """A forgiving JSON reader: single quotes, trailing or missing commas, bare keys, comments."""

    _BARE = re.compile(r"[A-Za-z_$][\w$\-]*")
    _NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def _skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch.isspace():
                self.pos += 1
            elif text.startswith("//", self.pos) or ch == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                self.pos = len(text) if end < 0 else end + 2
            else:
                return

    def value(self, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise _ParseError("nested too deeply")
        self._skip()
        if self.pos >= len(self.text):
            raise _ParseError("unexpected end")
        ch = self.text[self.pos]
        if ch == "{":
            return self._object(depth)
        if ch == "[":
            return self._array(depth)
        if ch in "\"'\u201c\u2018":
            return self._string()
        m = self._NUMBER.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
            number = m.group()
            try:
                return int(number)
            except ValueError:
                return float(number)
        m = self._BARE.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
            word = m.group()
            return _WORDS.get(word.lower(), word)
        raise _ParseError(f"unexpected {ch!r}")

    def _string(self) -> str:
        text = self.text
        opening = text[self.pos]
        closing = {"\u201c": "\u201d", "\u2018": "\u2019"}.get(opening, opening)
        self.pos += 1
        out: list[str] = []
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == closing:
                self.pos += 1
                return "".join(out)
            if ch == "\\" and self.pos + 1 < len(text):
                nxt = text[self.pos + 1]
                if nxt == "u" and re.fullmatch(
                    r"[0-9a-fA-F]{4}", text[self.pos + 2 : self.pos + 6]
                ):
                    out.append(chr(int(text[self.pos + 2 : self.pos + 6], 16)))
                    self.pos += 6
                    continue
                out.append(_ESCAPES.get(nxt, nxt))
                self.pos += 2
                continue
            out.append(ch)
            self.pos += 1
        raise _ParseError("unterminated string")

    def _object(self, depth: int) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        while True:
            self._skip()
            if self.pos >= len(self.text):
                raise _ParseError("unterminated object")
            ch = self.text[self.pos]
            if ch == "}":
                self.pos += 1
                return out
            if ch == ",":
                self.pos += 1
                continue
            key = self.value(depth + 1)
            self._skip()
            if self.pos >= len(self.text) or self.text[self.pos] not in ":=":
                raise _ParseError("expected ':' after a key")
            self.pos += 1
            out[str(key)] = self.value(depth + 1)

    def _array(self, depth: int) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while True:
            self._skip()
            if self.pos >= len(self.text):
                raise _ParseError("unterminated array")
            ch = self.text[self.pos]
            if ch == "]":
                self.pos += 1
                return out
            if ch == ",":
                self.pos += 1
                continue
            out.append(self.value(depth + 1))


_FENCE_RE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_OBJECT_START_RE = re.compile(
    r"\{\s*[\"'\u201c]?(?:claim|text|sentence)[\"'\u201d]?\s*:", re.IGNORECASE
)


def _loads(candidate: str) -> Any:
    """The first JSON-ish value in `candidate` (from its first ``{`` or ``[``)."""
    starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
    if not starts:
        raise _ParseError("no JSON object or array")
    return _Lenient(candidate, min(starts)).value()


def _salvage(text: str) -> list[Any]:
    """Every complete citation object in a reply whose overall JSON is broken or cut off."""
    found = []
    for m in _OBJECT_START_RE.finditer(text):
        try:
            found.append(_Lenient(text, m.start()).value())
        except _ParseError:
            continue
    return found


def _entries(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("citations", "Citations", "attributions", "results"):
            if isinstance(value.get(key), list):
                return list(value[key])
        if any(k in value for k in ("claim", "text", "sentence")):
            return [value]
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
    return None


def _reply_text(reply: Any) -> str:
    if isinstance(reply, str):
        return reply
    for attribute in ("content", "text"):
        value = getattr(reply, attribute, None)
        if isinstance(value, str):
            return value
    raise UsageError(
        f"llm must return a str (or an object with a str .content), got {type(reply).__name__}"
    )


def parse_reply(reply: str, diagnostics: list[str]) -> list[Any]:
    """The citation entries of a model reply; what cannot be read goes to `diagnostics`."""
    candidates = [m.group(1) for m in _FENCE_RE.finditer(reply)] + [reply]
    for candidate in candidates:
        try:
            entries = _entries(_loads(candidate))
        except _ParseError:
            continue
        if entries is not None:
            return entries
    salvaged = _salvage(reply)
    if salvaged:
        diagnostics.append(
            f"the LLM reply is not valid JSON; {len(salvaged)} citation object(s) recovered"
        )
        return salvaged
    if reply.strip():
        diagnostics.append(
            f"the LLM reply holds no citations JSON: {truncate(' '.join(reply.split()), 80)!r}"
        )
    else:
        diagnostics.append("the LLM reply is empty")
    return []


# --- locating claims ----------------------------------------------------------------------------

_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00a0": " ",
        "\u2026": "...",
    }
)
_DROP = frozenset("*_`\u200b\u200c\u200d\u2060\ufeff")


def _fold_char(ch: str) -> str:
    if ch in _DROP:
        return ""
    if ch.isspace():
        return " "
    folded = unicodedata.normalize("NFKC", ch).translate(_FOLD).casefold()
    return folded


def _fold(text: str) -> str:
    return " ".join("".join(_fold_char(ch) for ch in text).split())


class Locator:
    """Finds claims quoted by a model in the answer: exactly, normalized, then fuzzily."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._norm: str | None = None
        self._map: list[int] = []

    def _normalized(self) -> str:
        if self._norm is None:
            chars: list[str] = []
            index: list[int] = []
            pending_space = False
            for position, ch in enumerate(self.text):
                folded = _fold_char(ch)
                for out in folded:
                    if out == " ":
                        pending_space = bool(chars)
                        continue
                    if pending_space:
                        chars.append(" ")
                        index.append(position)
                        pending_space = False
                    chars.append(out)
                    index.append(position)
            self._norm = "".join(chars)
            self._map = index
        return self._norm

    def _span(self, a: int, b: int) -> tuple[int, int]:
        """Original span of normalized ``[a, b)``."""
        start = self._map[a]
        end = self._map[b - 1] + 1
        return start, end

    def find(self, claim: str, lo: int, hi: int) -> tuple[int, int, str] | None:
        """Where `claim` is in the answer, preferring ``[lo, hi)``: ``(start, end, how)``."""
        claim = claim.strip()
        if not claim:
            return None
        for a, b in ((lo, hi), (0, len(self.text))):
            at = self.text.find(claim, a, b)
            if at >= 0:
                return at, at + len(claim), "exact"
        needle = _fold(claim)
        if not needle:
            return None
        norm = self._normalized()
        n_lo = _lower_bound(self._map, lo)
        n_hi = _lower_bound(self._map, hi)
        for a, b in ((n_lo, n_hi), (0, len(norm))):
            at = norm.find(needle, a, b)
            if at >= 0:
                start, end = self._span(at, at + len(needle))
                return start, end, "normalized"
        for a, b in ((n_lo, n_hi), (0, len(norm))):
            if b <= a:
                continue
            got = fuzz.partial_ratio_alignment(needle, norm[a:b], score_cutoff=FUZZY_CUTOFF)
            if got is not None and got.dest_end > got.dest_start:
                s, e = _word_bounds(norm, a + got.dest_start, a + got.dest_end)
                if e > s:
                    start, end = self._span(s, e)
                    return start, end, "fuzzy"
        return None


def _lower_bound(values: list[int], target: int) -> int:
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _word_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a fuzzy span to whole words, then trim spaces."""
    while start > 0 and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while end < len(text) and text[end - 1].isalnum() and text[end].isalnum():
        end += 1
    while start < end and text[start] == " ":
        start += 1
    while end > start and text[end - 1] == " ":
        end -= 1
    return start, end


# --- entries to citations -----------------------------------------------------------------------


@dataclass
class _Entry:
    claim: str
    indices: list[int]
    label: str | None


_INDEX_RE = re.compile(r"-?\d+")


def _indices(value: Any) -> list[int] | None:
    items = value if isinstance(value, list) else [value]
    out: list[int] = []
    for item in items:
        if isinstance(item, bool):
            return None
        if isinstance(item, int):
            out.append(item)
        elif isinstance(item, float) and item.is_integer():
            out.append(int(item))
        elif isinstance(item, str) and (m := _INDEX_RE.search(item)) is not None:
            out.append(int(m.group()))
        else:
            return None
    return out or None


def _read_entry(n: int, raw: Any, diagnostics: list[str]) -> _Entry | None:
    if not isinstance(raw, dict):
        diagnostics.append(f"LLM citation {n}: expected an object, got {type(raw).__name__}")
        return None
    claim = next(
        (raw[k] for k in ("claim", "text", "sentence") if isinstance(raw.get(k), str)), None
    )
    if claim is None or not claim.strip():
        diagnostics.append(f"LLM citation {n}: no claim")
        return None
    key = next(
        (
            k
            for k in ("sourceIndex", "source_index", "sourceIndices", "source", "sources", "index")
            if k in raw
        ),
        None,
    )
    indices = _indices(raw[key]) if key is not None else None
    if indices is None:
        diagnostics.append(f"LLM citation {n}: no usable sourceIndex for {_show(claim)}")
        return None
    label = raw.get("confidence")
    label = label.strip().lower() if isinstance(label, str) else None
    return _Entry(claim, indices, label)


def _show(claim: str) -> str:
    return repr(truncate(" ".join(claim.split()), 80))


def _batches(claims: list[Claim], batch_chars: int) -> list[tuple[int, int]]:
    """Answer ranges, each holding whole claims and at most about `batch_chars` characters."""
    out: list[tuple[int, int]] = []
    start = end = -1
    for claim in claims:
        if start < 0:
            start, end = claim.start, claim.end
        elif claim.end - start > batch_chars:
            out.append((start, end))
            start, end = claim.start, claim.end
        else:
            end = claim.end
    if start >= 0:
        out.append((start, end))
    return out


def llm_citations(
    text: str,
    claims: list[Claim],
    sources: list[Source],
    llm: Callable[[str], Any],
    batch_chars: int,
    diagnostics: list[str],
    threshold: float | None = None,
    max_sources: int | None = None,
) -> list[Citation]:
    """Ask `llm` about each batch of the answer and turn its replies into citations.

    With a `threshold`, a claim keeps only the sources whose label's confidence reaches it
    (see the module's docstring); a claim left with none is not cited. With `max_sources`, a
    claim keeps at most that many: the strongest labels first, in the model's order within a
    label; a diagnostic counts what was left out.
    """
    locator = Locator(text)
    merged: dict[tuple[int, int], dict[str, Any]] = {}
    for lo, hi in _batches(claims, batch_chars):
        reply = _reply_text(llm(build_prompt(text[lo:hi], sources)))
        for n, raw in enumerate(parse_reply(reply, diagnostics)):
            entry = _read_entry(n, raw, diagnostics)
            if entry is None:
                continue
            found = locator.find(entry.claim, lo, hi)
            if found is None:
                diagnostics.append(f"LLM claim not found in the answer: {_show(entry.claim)}")
                continue
            start, end, how = found
            for index in entry.indices:
                if not 1 <= index <= len(sources):
                    diagnostics.append(
                        f"LLM citation {n}: sourceIndex {index} is out of range "
                        f"1..{len(sources)} for {_show(entry.claim)}"
                    )
                    continue
                slot = merged.setdefault((start, end), {"ids": [], "labels": [], "how": how})
                source_id = sources[index - 1].id
                if source_id not in slot["ids"]:
                    slot["ids"].append(source_id)
                    slot["labels"].append(entry.label)
    if threshold is not None:
        merged = _above(merged, threshold, diagnostics)
    if max_sources is not None:
        merged = _strongest(merged, max_sources, diagnostics)
    return [_citation(text, span, slot, sources) for span, slot in sorted(merged.items())]


def _strongest(
    merged: dict[tuple[int, int], dict[str, Any]], limit: int, diagnostics: list[str]
) -> dict[tuple[int, int], dict[str, Any]]:
    """At most `limit` sources per claim, strongest label first; a diagnostic counts the rest."""
    cut = 0
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for span, slot in merged.items():
        pairs = list(zip(slot["ids"], slot["labels"], strict=True))
        if len(pairs) <= limit:
            out[span] = slot
            continue
        ranked = sorted(range(len(pairs)), key=lambda k: (-_confidence(pairs[k][1]), k))[:limit]
        keep = [pairs[k] for k in sorted(ranked, key=lambda k: (-_confidence(pairs[k][1]), k))]
        cut += len(pairs) - limit
        out[span] = {**slot, "ids": [i for i, _ in keep], "labels": [lab for _, lab in keep]}
    if cut:
        diagnostics.append(
            f"max_sources {limit}: left out {cut} weaker claim-source link(s) the LLM gave"
        )
    return out


def _confidence(label: str | None) -> float:
    """The confidence of a model's label; 0 for a missing or unknown one."""
    return CONFIDENCE.get(label, 0.0) if label is not None else 0.0


def _above(
    merged: dict[tuple[int, int], dict[str, Any]], threshold: float, diagnostics: list[str]
) -> dict[tuple[int, int], dict[str, Any]]:
    """The claim-source links whose confidence reaches `threshold`; a diagnostic counts the rest."""
    kept: dict[tuple[int, int], dict[str, Any]] = {}
    total = 0
    dropped: dict[str, int] = {}  # by label ("" for a missing or unknown one)
    for span, slot in merged.items():
        pairs = list(zip(slot["ids"], slot["labels"], strict=True))
        total += len(pairs)
        keep = [(sid, label) for sid, label in pairs if _confidence(label) >= threshold]
        for _, label in pairs:
            if _confidence(label) < threshold:
                key = label if label in CONFIDENCE else ""
                dropped[key] = dropped.get(key, 0) + 1
        if keep:
            kept[span] = {
                **slot,
                "ids": [sid for sid, _ in keep],
                "labels": [label for _, label in keep],
            }
    if dropped:
        why = [
            f"{n} {label!r} ({CONFIDENCE[label]})" for label, n in sorted(dropped.items()) if label
        ]
        if "" in dropped:
            why.append(f"{dropped['']} with no 'full' or 'partial' label")
        lost = len(merged) - len(kept)
        diagnostics.append(
            f"threshold {threshold}: dropped {sum(dropped.values())} of {total} claim-source "
            f"link(s) the LLM gave below it: {', '.join(why)}"
            + (f"; {lost} claim(s) left uncited" if lost else "")
        )
    return kept


def _citation(
    text: str, span: tuple[int, int], slot: dict[str, Any], sources: list[Source]
) -> Citation:
    start, end = span
    labels = [label for label in slot["labels"] if label in CONFIDENCE]
    confidence = max((CONFIDENCE[label] for label in labels), default=None)
    extras: dict[str, Any] = {"llm_confidence": dict(zip(slot["ids"], slot["labels"], strict=True))}
    if slot["how"] != "exact":
        extras["located"] = slot["how"]
    quote = None
    location: Location | None = None
    first = next(s for s in sources if s.id == slot["ids"][0])
    body = first.content if first.content and first.content.strip() else first.snippet
    if body and body.strip():
        # Point at the passage of the first cited source that best matches the claim.
        match = lexical.score(
            [lexical.claim_terms(text[start:end])], [lexical.index_source(body)], exhaustive=True
        )[0][0]
        if match is not None:
            quote = body[match.start : match.end]
            location = CharLocation(start=match.start, end=match.end)
    if location is None:
        # No passage found: the page of a paged document's chunk is still where it points.
        location = first.page_location()
    return Citation(
        start=start,
        end=end,
        text=text[start:end],
        source_ids=list(slot["ids"]),
        quote=quote,
        location=location,
        origin="posthoc-llm",
        confidence=confidence,
        extras=extras,
    )
