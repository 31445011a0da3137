"""The answer text as HTML: the model's Markdown rendered by markdown-it, markers woven in.

The text is CommonMark with GFM tables and strikethrough, raw HTML off (tags show as text),
single newlines kept as ``<br>``. Only http(s) links become ``<a>`` (with
``rel="noopener noreferrer nofollow" target="_blank"``); any other destination, relative ones
included, leaves the Markdown as plain text. Images never load: ``![alt](url)`` becomes a link
to ``url`` labelled ``alt``. Every piece of text is sanitised again after entity decoding, then
escaped. Should markdown-it ever fail, the text falls back to escaped plain paragraphs.

Markers are placed where `weave` puts them. Each mark first becomes a placeholder,
``U+FFFC`` + its index + ``U+FFFC`` (the object replacement character, a Unicode symbol, so
emphasis next to it behaves as next to a ``[1]`` marker). ``U+FFFC`` is removed from the answer
text beforehand, and neither entities nor an autolink's percent-decoding can produce it, so
every placeholder in the parsed document is one of ours. Rendering swaps each placeholder for
its marker HTML, each exactly once:

- in text (emphasis, list items, headings, table cells, blockquotes) the marker lands in place;
- in a link's text or destination it goes right after the ``</a>``, so a link is never split
  and no marker reaches an ``href``;
- in inline code it goes right after the ``</code>``, in a code block after the ``</code>``
  inside the ``<pre>``: code is shown exactly as written;
- a marker the Markdown structure would swallow is first moved: one ending a fence, setext
  underline, thematic break or table delimiter line goes to the end of the last non-blank line
  before it, one after a table row's last pipe into the row's last cell, one between a link's
  ``]`` and ``(`` into the destination (so after the link);
- any marker still unplaced (inside a reference definition, a dropped table cell) is appended
  after the text, so the marker count always matches the plan.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from unicite._marks import Mark
from unicite._render._plan import LINK_ATTRIBUTES, link_target, weave
from unicite._text import sanitize_display

__all__ = ["PLACEHOLDER", "answer_html", "clean_text"]

PLACEHOLDER = "\ufffc"
"""Opens and closes each mark's placeholder; never left in the answer text or the output."""

_ENV_KEY = "unicite_markers"
_PH = "\ufffc[0-9]+\ufffc"
_PLACEHOLDER_RE = re.compile("\ufffc([0-9]+)\ufffc")
_PLACEHOLDER_ENTITY_RE = re.compile(r"&(?=#(?:[xX]0*[fF][fF][fF][cC]|0*65532);)")
# A run of placeholders between a link's label and its destination.
_LINK_GAP_RE = re.compile(rf"\]((?:{_PH})+)\(")
# A run of placeholders ending a line (tried only from a run's first placeholder: linear).
_LINE_END_RE = re.compile(rf"(?<!\ufffc)((?:{_PH})+)[ \t]*\Z")
_TABLE_ROW_RE = re.compile(r"[ \t>]*\|.*\|[ \t]*")
# Lines whose meaning a trailing marker would change: a code fence, a setext underline, a
# thematic break, a table delimiter row.
_STRUCTURE_RE = re.compile(
    r"`{3,}|~{3,}|=+|-+|(?:[-*_][ \t]*){3,}"
    r"|\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?"
)
_PARAGRAPH_RE = re.compile(r"\n[ \t]*\n\s*")
_LANGUAGE_RE = re.compile(r"[A-Za-z0-9_+#.-]{1,32}")
_TAGS = frozenset(
    {
        *("p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "hr", "ul", "ol", "li"),
        *("em", "strong", "s", "table", "thead", "tbody", "tr", "th", "td"),
    }
)
_ALIGN = {"text-align:left": "left", "text-align:center": "center", "text-align:right": "right"}


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _clean(text: str) -> str:
    """Displayable text: sanitised (again, after entity decoding), no placeholder character."""
    return sanitize_display(text, allow_newlines=True).replace(PLACEHOLDER, "")


def clean_text(text: str) -> str:
    """A slice of answer text made ready for Markdown: sanitised, no placeholder can come of it.

    Tabs become spaces to the next multiple of 4 columns (Markdown's tab stops) rather than one
    space, so tab-indented lists and code keep their structure.
    """
    text = sanitize_display(text.expandtabs(4), allow_newlines=True)
    return _PLACEHOLDER_ENTITY_RE.sub("&amp;", text.replace(PLACEHOLDER, ""))


def _relocate(source: str) -> str:
    """Move placeholders the Markdown structure would swallow or break next to it."""
    source = _LINK_GAP_RE.sub(r"](\1", source)
    if PLACEHOLDER not in source:
        return source
    lines = source.split("\n")
    last = -1  # the last non-blank line before the current one
    for number, line in enumerate(lines):
        match = _LINE_END_RE.search(line) if PLACEHOLDER in line else None
        if match is not None:
            run = match.group(1)
            rest = line[: match.start()] + line[match.end(1) :]
            if last >= 0 and _STRUCTURE_RE.fullmatch(rest.lstrip(" \t>").rstrip(" \t")):
                lines[number] = rest
                lines[last] = _into_row(lines[last], run)
            elif _TABLE_ROW_RE.fullmatch(rest):
                lines[number] = _into_row(rest, run)
        if line.strip():
            last = number
    return "\n".join(lines)


def _into_row(line: str, run: str) -> str:
    """``line`` ending with ``run``: inside its last cell when it is a table row."""
    if _TABLE_ROW_RE.fullmatch(line):
        end = line.rstrip(" \t")
        cell = end[:-1].rstrip(" \t")
        return f"{cell}{run}{line[len(cell) :]}"
    return line + run


class _Markers:
    """Per rendering: the marker HTML of each placeholder, each emitted exactly once."""

    def __init__(self, markers: Sequence[str]) -> None:
        self.markers = markers
        self.emitted = [False] * len(markers)
        self.links: list[bool] = []  # open links: whether each was rendered as an <a>
        self.deferred: list[int] = []  # placeholders met inside the open link

    def take(self, index: int) -> str:
        if index >= len(self.markers) or self.emitted[index]:
            return ""
        self.emitted[index] = True
        return self.markers[index]

    def place(self, indices: Sequence[int]) -> str:
        """The markers for ``indices`` here, or after the link being rendered."""
        if self.links:
            self.deferred.extend(indices)
            return ""
        return "".join(self.take(index) for index in indices)

    def text(self, content: str) -> str:
        """Escaped text with each placeholder replaced by its marker."""
        parts = _PLACEHOLDER_RE.split(content)
        out = [_esc(_clean(parts[0]))]
        for number, after in zip(parts[1::2], parts[2::2], strict=True):
            out.append(self.place((int(number),)))
            out.append(_esc(_clean(after)))
        return "".join(out)

    def close_link(self) -> str:
        """Closing the outermost link releases the markers met inside it, in text order."""
        if self.links:
            self.links.pop()
        if self.links:
            return ""
        indices, self.deferred = sorted(self.deferred), []
        return "".join(self.take(index) for index in indices)

    def missing(self) -> str:
        return "".join(self.take(index) for index in range(len(self.markers)))


def _extract(content: str) -> tuple[str, list[int]]:
    """``content`` without its placeholders, and their indices in order."""
    indices = [int(number) for number in _PLACEHOLDER_RE.findall(content)]
    return (_PLACEHOLDER_RE.sub("", content) if indices else content), indices


def _markers(env: EnvType) -> _Markers:
    state: _Markers = env[_ENV_KEY]
    return state


class _Renderer(RendererHTML):
    """HTML for the token kinds the answer may hold; anything else is dropped."""

    def renderToken(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        if tokens[idx].tag not in _TAGS:
            return ""
        return super().renderToken(tokens, idx, options, env)

    @staticmethod
    def renderAttrs(token: Token) -> str:
        """Only the attributes this renderer sets: a list's start, a table cell's alignment."""
        if token.type == "ordered_list_open":
            start = token.attrGet("start")
            return f' start="{start}"' if isinstance(start, int) and start != 1 else ""
        if token.type in {"th_open", "td_open"}:
            align = _ALIGN.get(str(token.attrGet("style")))
            return f' class="unicite-align-{align}"' if align else ""
        return ""

    def text(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return _markers(env).text(tokens[idx].content)

    text_special = html_inline = html_block = text

    def softbreak(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return "<br>\n"

    hardbreak = softbreak

    def code_inline(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        content, indices = _extract(tokens[idx].content)
        return f"<code>{_esc(_clean(content))}</code>" + _markers(env).place(indices)

    def code_block(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        token = tokens[idx]
        info, before = _extract(token.info)
        content, inside = _extract(token.content)
        words = _clean(info).split()
        language = _LANGUAGE_RE.fullmatch(words[0]) if words else None
        attributes = f' class="language-{language.group()}"' if language else ""
        markers = _markers(env).place([*before, *inside])
        return f"<pre><code{attributes}>{_esc(_clean(content))}</code>{markers}</pre>\n"

    fence = code_block

    def link_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        token = tokens[idx]
        state = _markers(env)
        href, indices = _extract(str(token.attrGet("href") or ""))
        title, more = _extract(str(token.attrGet("title") or ""))
        target = None if state.links else link_target(href)
        state.links.append(target is not None)
        state.deferred.extend((*indices, *more))
        if target is None:
            return ""
        title = _clean(title).strip()
        titled = f' title="{_esc(title)}"' if title else ""
        return f'<a href="{_esc(target)}"{titled} {LINK_ATTRIBUTES}>'

    def link_close(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        state = _markers(env)
        opened = state.links[-1] if state.links else False
        return ("</a>" if opened else "") + state.close_link()

    def image(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        state = _markers(env)
        src, indices = _extract(str(token.attrGet("src") or ""))
        alt, inside = _extract(self.renderInlineAsText(token.children, options, env))
        target = None if state.links else link_target(src)
        label = _clean(alt).strip() or target or _clean(src).strip()
        markers = state.place(sorted((*indices, *inside)))
        if target is None:
            return _esc(label) + markers
        return f'<a href="{_esc(target)}" {LINK_ATTRIBUTES}>{_esc(label)}</a>{markers}'


class _Parser(MarkdownIt):
    """CommonMark (+ tables, strikethrough) where only http(s) destinations make links."""

    def validateLink(self, url: str) -> bool:
        """Whether ``url`` (placeholders aside) is a safe http(s) URL."""
        return link_target(_PLACEHOLDER_RE.sub("", url)) is not None

    def normalizeLink(self, url: str) -> str:
        """``url`` as is: `link_target` normalises it when rendered, placeholders removed."""
        return url

    def normalizeLinkText(self, link: str) -> str:
        """An autolink's text, decoded around the placeholders; decoding adds no ``U+FFFC``."""
        parts = _PLACEHOLDER_RE.split(link)
        out = [super().normalizeLinkText(parts[0]).replace(PLACEHOLDER, "")]
        for number, after in zip(parts[1::2], parts[2::2], strict=True):
            out.append(f"{PLACEHOLDER}{number}{PLACEHOLDER}")
            out.append(super().normalizeLinkText(after).replace(PLACEHOLDER, ""))
        return "".join(out)


_PARSER: list[_Parser] = []


def _parser() -> _Parser:
    if not _PARSER:
        parser = _Parser(
            "commonmark",
            {"html": False, "breaks": True, "xhtmlOut": False, "linkify": False},
            renderer_cls=_Renderer,
        )
        parser.enable(["table", "strikethrough"])
        _PARSER.append(parser)
    return _PARSER[0]


def _plain(source: str, state: _Markers) -> str:
    """``source`` as escaped text: blank lines separate paragraphs, single newlines break."""
    parts = (part.strip() for part in _PARAGRAPH_RE.split(source))
    return "\n".join(
        f"<p>{state.text(part).replace(chr(10), '<br>')}</p>" for part in parts if part
    )


def answer_html(text: str, marks: list[Mark], marker: Callable[[Mark], str]) -> str:
    """``text`` rendered as Markdown, with ``marker(mark)`` HTML where each mark goes.

    ``marker`` is called once per mark, in order. The result is empty when the text renders to
    nothing and has no marker.
    """
    markers: list[str] = []

    def place(mark: Mark) -> str:
        markers.append(marker(mark))
        return f"{PLACEHOLDER}{len(markers) - 1}{PLACEHOLDER}"

    source = _relocate("".join(weave(text, marks, clean_text, place)))
    state = _Markers(markers)
    env: dict[str, Any] = {_ENV_KEY: state}
    try:
        rendered = str(_parser().render(source, env)).strip("\n")
    except Exception:  # odd input must never stop a rendering: fall back to plain paragraphs
        state = _Markers(markers)
        rendered = _plain(source, state)
    missing = state.missing()
    if missing:
        rendered += f"\n<p>{missing}</p>" if rendered else f"<p>{missing}</p>"
    return rendered
