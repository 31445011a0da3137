"""Sources a text already lists: ``Sources:`` blocks, reference definitions, bare URLs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from unicite._marker_syntax import marker_numbers
from unicite._segment import claim_spans, find_markers
from unicite._urls import normalize_url

__all__ = ["ListedSource", "claims_by_number", "listed_urls", "split_sources_block"]

_HEADING_RE = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*"
    r"(?:sources|references|citations|links|bibliography|works cited|further reading)"
    r"[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*(?P<rest>.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_REF_DEF_RE = re.compile(
    r"^[ \t]*\[\^?(?P<n>\d{1,4})\]:[ \t]*<?(?P<url>[A-Za-z][A-Za-z0-9+.\-]*://[^\s>]+)>?"
    r"(?:[ \t]+[\"'(](?P<title>[^\n]*?)[\"')])?[ \t]*$",
    re.MULTILINE,
)
_NUMBER_RE = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\[\^?(\d{1,4})\]:?|(\d{1,4})[.)])[ \t]*")
_BULLET_RE = re.compile(r"^[ \t]*[-*+][ \t]+")
_LINE_RE = re.compile(r"[^\n]+")  # the lines after a heading, read lazily
_MD_LINK_RE = re.compile(r"\[([^\[\]\n]{1,300})\]\((\S+?)(?:[ \t]+\"[^\"\n]*\")?\)")
# A URL may hold balanced parentheses (Wikipedia titles); trailing punctuation is not part of it.
URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://(?:[^\s<>\"'()\[\]{}]|\([^\s<>\"'()]*\))+")
_TRAILING = ".,;:!?*_"
_SEPARATORS = " \t-–—:|·•\"'“”"


@dataclass(frozen=True)
class ListedSource:
    """One entry of a sources list: the number the text uses for it, its URL and its title."""

    number: int | None
    url: str
    title: str | None


def _clean_url(url: str) -> str:
    url = url.strip("<>")
    while url and url[-1] in _TRAILING:
        url = url[:-1]
    if url.endswith(")") and url.count("(") < url.count(")"):
        url = url[:-1]
    return url


def _entry(line: str) -> ListedSource | None:
    """Read one line of a sources list; None when it names no URL."""
    number: int | None = None
    match = _NUMBER_RE.match(line)
    if match:
        number = int(match.group(1) or match.group(2))
        rest = line[match.end() :]
    else:
        rest = _BULLET_RE.sub("", line, count=1)
    link = _MD_LINK_RE.search(rest)
    if link and URL_RE.fullmatch(_clean_url(link.group(2))):
        title = link.group(1).strip()
        return ListedSource(number, _clean_url(link.group(2)), title or None)
    bare = URL_RE.search(rest)
    if bare is None:
        return None
    url = _clean_url(bare.group())
    before = rest[: bare.start()].strip(_SEPARATORS + "(<[")
    after = rest[bare.start() + len(url) :].strip(_SEPARATORS + ".)>]")
    return ListedSource(number, url, before or after or None)


def split_sources_block(text: str) -> tuple[str, list[ListedSource]]:
    """Split a text into its body and the sources it lists at the end.

    Reads a trailing ``Sources:`` / ``References:`` / ``Citations:`` block (Markdown heading,
    bold or plain, entries numbered ``[1]``, ``1.`` or bulleted, each with a bare URL or a
    Markdown link; entries may also follow the heading on its line) and Markdown reference
    definitions (``[1]: https://… "Title"``) anywhere. Returns the text before the block and
    the entries in order; ``(text, [])`` when there is no such list.
    """
    listed: list[ListedSource] = []
    body_end = len(text)
    headings = list(_HEADING_RE.finditer(text))
    for heading in reversed(headings):
        entries = [_entry(heading.group("rest"))] if heading.group("rest").strip() else []
        if entries and entries[0] is None:
            # "Sources: a, b" with several URLs on the heading line.
            entries = [
                ListedSource(None, _clean_url(m.group()), None)
                for m in URL_RE.finditer(heading.group("rest"))
            ]
        for match in _LINE_RE.finditer(text, heading.end()):
            line = match.group()
            if not line.strip():
                continue
            entry = _entry(line)
            if entry is None:
                break
            entries.append(entry)
        found = [e for e in entries if e is not None]
        if found:
            listed = found
            body_end = heading.start()
            break
    seen = {entry.url for entry in listed}
    for match in _REF_DEF_RE.finditer(text):
        url = _clean_url(match.group("url"))
        if url not in seen:
            seen.add(url)
            listed.append(ListedSource(int(match.group("n")), url, match.group("title") or None))
            body_end = min(body_end, match.start())
    return text[:body_end].rstrip(), listed


def claims_by_number(text: str) -> dict[int, list[str]]:
    """The claims a text supports with each numbered marker, markers removed.

    ``"Paris is the capital [1]."`` gives ``{1: ["Paris is the capital"]}``: the sentence or
    clause each marker closes, as `claim_spans` finds it, with its whitespace collapsed.
    """
    markers = find_markers(text)
    if not markers:
        return {}
    claims: dict[int, list[str]] = {}
    for (m_start, m_end), (c_start, c_end) in zip(markers, claim_spans(text, markers), strict=True):
        numbers = marker_numbers(text, m_start, m_end)
        if not numbers:
            continue
        claim = " ".join(text[c_start:c_end].split())
        if not claim:
            continue
        for number in numbers:
            bucket = claims.setdefault(number, [])
            if claim not in bucket:
                bucket.append(claim)
    return claims


def listed_urls(text: str) -> set[str]:
    """Normalized URLs a text shows: bare, in Markdown links, in reference definitions."""
    return {normalize_url(_clean_url(m.group())) for m in URL_RE.finditer(text)}
