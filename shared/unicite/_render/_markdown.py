"""Markdown rendering: the answer with ``[n]`` or GFM ``[^n]`` markers and a Sources list.

The answer text is the model's own Markdown and stays Markdown, with one exception: nothing in
it may become raw HTML or a link to anything but http(s). Tag and autolink openers (``<x``),
and link destinations or reference definitions (``](``, ``]:``) not starting with ``http://``
or ``https://``, are backslash-escaped. Code (fenced blocks and inline spans) is left alone
when that provably changes nothing: if a code span skipped that way holds such text, the
result is parsed (CommonMark, via markdown-it) and, should any HTML or other link show up,
everything is escaped, code included.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Literal

from unicite._marks import Mark, format_marker
from unicite._render._plan import Detail, Entry, Plan, weave
from unicite._render._terminal import SEARCH_SUGGESTIONS_NOTE
from unicite._text import sanitize_display
from unicite.model import CitedAnswer

__all__ = ["MarkdownMarkers", "defang_markdown", "escape_markdown", "render_markdown"]

MarkdownMarkers = Literal["brackets", "footnotes"]
"""Markdown markers: inline ``[1]`` or GitHub-flavoured footnotes ``[^1]``."""

_SPECIAL_RE = re.compile(r"[\\`*_\[\]<>!|~&^{}]")
_LEADING_NUMBER_RE = re.compile(r"(\d{1,9})([.)])")
_RISKY_RE = re.compile(
    r"<(?=[A-Za-z/!?])(?!(?i:https?)://[^\s<>]*>)"  # HTML tag, comment or non-http autolink
    r"|\][(:](?!\s*<?(?i:https?)://)"  # inline link / reference definition not to http(s)
)
_LINE_RE = re.compile(r"[^\n]*\n?")
_FENCE_OPEN_RE = re.compile(r"( {0,3})(`{3,}|~{3,})([^\n]*)")
_BACKTICKS_RE = re.compile(r"`+")


def escape_markdown(text: str) -> str:
    """Backslash-escape ``text`` so that it renders literally, inline or at a line start."""
    text = _SPECIAL_RE.sub(r"\\\g<0>", text)
    number = _LEADING_NUMBER_RE.match(text)
    if number:
        return f"{number.group(1)}\\{number.group(2)}{text[number.end() :]}"
    if text[:1] in {"#", "+", "-", "="}:
        return "\\" + text
    return text


def _link_url(href: str) -> str:
    # safe_href keeps parentheses; encoded, an unbalanced one cannot end the link early.
    return href.replace("(", "%28").replace(")", "%29")


def _code_regions(text: str) -> list[tuple[int, int]]:
    """Spans that are surely code in CommonMark: fenced blocks and inline code spans.

    Conservative on purpose: anything doubtful is treated as prose (and escaped). A fence
    opened with indentation also ends at a less indented line, since that line may close the
    list item holding the fence.
    """
    regions: list[tuple[int, int]] = []
    fence: tuple[str, int, int, int] | None = None  # char, length, indent, start
    for match in _LINE_RE.finditer(text):
        start, end = match.span()
        if start == end:
            break
        line = match.group().rstrip("\n")
        if fence is not None:
            char, length, indent, opened = fence
            stripped = line.lstrip(" ")
            depth = len(line) - len(stripped)
            bare = stripped.rstrip()
            if depth <= 3 and len(bare) >= length and bare == char * len(bare):
                regions.append((opened, end))
                fence = None
                continue
            if not bare or depth >= indent:
                continue
            regions.append((opened, start))
            fence = None
        opener = _FENCE_OPEN_RE.fullmatch(line)
        if opener and not (opener.group(2)[0] == "`" and "`" in opener.group(3)):
            fence = (opener.group(2)[0], len(opener.group(2)), len(opener.group(1)), start)
            continue
        regions.extend(_inline_code(text, start, start + len(line)))
    if fence is not None:
        regions.append((fence[3], len(text)))
    return regions


def _inline_code(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Code spans on one line; a backtick run after a backslash never opens or closes one."""
    runs = [
        match.span()
        for match in _BACKTICKS_RE.finditer(text, lo, hi)
        if match.start() == lo or text[match.start() - 1] != "\\"
    ]
    # For each run, the next run of the same length (linear, from the right).
    following = [-1] * len(runs)
    last: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        width = runs[index][1] - runs[index][0]
        following[index] = last.get(width, -1)
        last[width] = index
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        close = following[index]
        if close < 0:
            index += 1
        else:
            spans.append((runs[index][0], runs[close][1]))
            index = close + 1
    return spans


def _escaped(text: str, position: int) -> bool:
    """Whether the character at ``position`` follows an odd number of backslashes."""
    count = 0
    while position - count > 0 and text[position - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _escape_risky(text: str, regions: list[tuple[int, int]]) -> tuple[str, bool]:
    """Escape risky openers outside ``regions``; also tell whether any lay inside one."""
    starts = [region[0] for region in regions]
    parts: list[str] = []
    position = 0
    skipped = False
    for match in _RISKY_RE.finditer(text):
        at = match.start()
        index = bisect.bisect_right(starts, at) - 1
        if index >= 0 and at < regions[index][1]:
            skipped = True
            continue
        if match.group() == "<":
            if _escaped(text, at):
                continue
            parts.append(text[position:at])
            parts.append("\\<")
        else:
            parts.append(text[position : at + 1])
            parts.append("\\" + match.group()[1])
        position = match.end()
    parts.append(text[position:])
    return "".join(parts), skipped


def _has_active_markup(text: str) -> bool:
    """Whether CommonMark parses ``text`` into raw HTML or a link that is not http(s)."""
    from markdown_it import MarkdownIt  # imported on first need: most answers never get here

    class _EveryLink(MarkdownIt):
        def validateLink(self, url: str) -> bool:  # see every link, not only allowed ones
            return True

    pending: list[Any] = list(_EveryLink("commonmark", {"html": True}).parse(text))
    while pending:
        token = pending.pop()
        if token.type in {"html_inline", "html_block"}:
            return True
        for name in ("href", "src"):
            value = token.attrGet(name)
            if isinstance(value, str) and not value.lower().startswith(("http://", "https://")):
                return True
        pending.extend(token.children or ())
    return False


def defang_markdown(text: str) -> str:
    """Keep ``text`` Markdown but let nothing in it become HTML or a non-http(s) link."""
    regions = _code_regions(text)
    result, skipped = _escape_risky(text, regions)
    if skipped and _has_active_markup(result):
        result, _ = _escape_risky(text, [])
    return result


def _item(entry: Entry) -> str:
    """``[Title](url) — domain``, or inert text when the source must not be linked."""
    label = escape_markdown(entry.label)
    if entry.href:
        text = f"[{label}]({_link_url(entry.href)})"
        if entry.title and entry.domain and entry.domain != entry.title:
            text += f" \u2014 {escape_markdown(entry.domain)}"
        return text
    if entry.url_text and entry.url_text != entry.label:
        return f"{label} \u2014 {escape_markdown(entry.url_text)}"
    return label


def _detail_lines(details: tuple[Detail, ...], more: int) -> list[str]:
    lines: list[str] = []
    for detail in details:
        if lines:
            lines.append(">")
        if detail.quote:
            text = f'"{detail.quote}"'
            if detail.location:
                text += f" ({detail.location})"
        else:
            text = f"({detail.location})"
        lines.append("> " + escape_markdown(text))
    if more:
        lines.extend([">", f"> (and {more} more)"])
    return lines


def _listing(entries: list[Entry]) -> list[str]:
    r"""An ordered list; items each in their own paragraph when numbers have gaps.

    Markdown renumbers ordered lists from their first number, which would make ``3.`` show as
    ``2.``; an escaped ``3\.`` paragraph keeps the number that the markers use.
    """
    numbers = [entry.number for entry in entries]
    contiguous = numbers == list(range(1, len(numbers) + 1))
    lines: list[str] = []
    for entry in entries:
        if contiguous:
            prefix = f"{entry.number}. "
            indent = " " * len(prefix)
            lines.append(prefix + _item(entry))
            lines.extend(indent + line for line in _detail_lines(entry.details, entry.more_details))
        else:
            if lines:
                lines.append("")
            lines.append(f"{entry.number}\\. {_item(entry)}")
            lines.extend(_detail_lines(entry.details, entry.more_details))
    return lines


def _footnote(entry: Entry) -> list[str]:
    lines = [f"[^{entry.number}]: {_item(entry)}"]
    details = _detail_lines(entry.details, entry.more_details)
    if details:
        lines.append("")
        lines.extend("    " + line for line in details)
    return lines


def render_markdown(answer: CitedAnswer, plan: Plan, *, markers: MarkdownMarkers) -> str:
    """The answer with markers, then the Sources (list or footnote definitions)."""
    style: Literal["brackets", "footnotes"] = markers

    def piece(text: str) -> str:
        return sanitize_display(text, allow_newlines=True)

    def marker(mark: Mark) -> str:
        return format_marker(mark.numbers, style)

    body = "".join(weave(answer.text, plan.marks, piece, marker)).rstrip().lstrip("\n")
    blocks = [defang_markdown(body)] if body else []
    listed = plan.entries
    if markers == "footnotes":
        referenced = {n for mark in plan.marks for n in mark.numbers}
        notes = [entry for entry in listed if entry.number in referenced]
        listed = [entry for entry in listed if entry.number not in referenced]
        blocks.extend("\n".join(_footnote(entry)) for entry in notes)
    if listed:
        blocks.append("\n".join(["**Sources**", "", *_listing(listed)]))
    if plan.search_suggestions:
        blocks.append(f"_{SEARCH_SUGGESTIONS_NOTE}_")
    return "\n\n".join(blocks)
