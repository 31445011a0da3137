"""HTML rendering: a self-contained fragment with tooltipped markers and an ordered source list.

No script and no external asset: a ``<style>`` block gives each marker a pure-CSS tooltip (on
hover and keyboard focus) and highlights the ``:target`` source. The answer text is rendered as
Markdown (see `unicite._render._html_markdown`: raw HTML off, no images loaded). Every piece of
answer data is sanitised and escaped; only http(s) URLs become links.
"""

from __future__ import annotations

import hashlib
import html
import re
from html.parser import HTMLParser

from unicite._marks import Mark
from unicite._render._plan import LINK_ATTRIBUTES, Entry, Plan, link_target, mark_quotes
from unicite._text import sanitize_display
from unicite.exceptions import UsageError
from unicite.model import CitedAnswer

__all__ = ["default_prefix", "render_html", "sanitize_search_suggestions"]

_PREFIX_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")

_STYLE = """\
.unicite{line-height:1.5}
.unicite .unicite-answer p{margin:0 0 .75em}
.unicite .unicite-cite{position:relative;line-height:0}
.unicite .unicite-cite>a{text-decoration:none;padding:0 .1em}
.unicite .unicite-tip{visibility:hidden;position:absolute;left:0;top:1.2em;z-index:10;\
width:max-content;max-width:22em;padding:.45em .6em;border:1px solid #c8c8c8;border-radius:4px;\
background:#fff;color:#222;box-shadow:0 2px 8px rgba(0,0,0,.18);font-size:.8rem;\
font-weight:normal;font-style:normal;line-height:1.35;text-align:left;white-space:normal;\
overflow-wrap:anywhere}
.unicite .unicite-cite:hover .unicite-tip,.unicite .unicite-cite:focus-within .unicite-tip\
{visibility:visible}
.unicite .unicite-tip-title{display:block;font-weight:bold}
.unicite .unicite-tip-domain{display:block;color:#555}
.unicite .unicite-tip-quote{display:block;font-style:italic;margin-top:.2em}
.unicite .unicite-answer table{border-collapse:collapse;margin:0 0 .75em}
.unicite .unicite-answer th,.unicite .unicite-answer td{border:1px solid #c8c8c8;\
padding:.2em .5em}
.unicite .unicite-answer .unicite-align-left{text-align:left}
.unicite .unicite-answer .unicite-align-center{text-align:center}
.unicite .unicite-answer .unicite-align-right{text-align:right}
.unicite .unicite-answer pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0 0 .75em;\
padding:.5em;border:1px solid #c8c8c8;border-radius:4px}
.unicite .unicite-answer blockquote{margin:0 0 .75em;padding-left:.8em;\
border-left:3px solid #c8c8c8}
.unicite .unicite-heading{font-weight:bold;margin:1em 0 .25em}
.unicite .unicite-sources li{overflow-wrap:anywhere}
.unicite .unicite-sources li:target{background:#fff3b0;outline:2px solid #f0c000}
.unicite .unicite-domain,.unicite .unicite-loc{color:#555}
.unicite .unicite-detail{display:block;margin:.15em 0 .15em 1em}
.unicite .unicite-detail q{font-style:italic}
@media (prefers-color-scheme:dark){.unicite .unicite-tip{background:#222;color:#eee;\
border-color:#555}.unicite .unicite-tip-domain,.unicite .unicite-domain,.unicite .unicite-loc\
{color:#aaa}.unicite .unicite-sources li:target{background:#4a3f00}}
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def default_prefix(answer: CitedAnswer) -> str:
    """An id prefix derived from the answer, so two answers on one page get distinct ids."""
    digest = hashlib.blake2b(digest_size=6)
    for part in (answer.text, *(source.id for source in answer.sources)):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\x1f")
    for citation in answer.citations:
        digest.update(f"{citation.start}:{citation.end}:{citation.source_ids}\x1f".encode())
    return "unicite-" + digest.hexdigest()


def check_prefix(prefix: object) -> str:
    """Raise `UsageError` unless ``prefix`` is a plain id (a letter, then letters, digits, -, _)."""
    if not isinstance(prefix, str) or not _PREFIX_RE.fullmatch(prefix):
        raise UsageError(f"prefix must be a letter followed by letters, digits, - or _: {prefix!r}")
    return prefix


class _Markers:
    """Builds ``<sup>`` markers; each number links to its source and carries a tooltip."""

    def __init__(self, answer: CitedAnswer, prefix: str, entries: dict[int, Entry]) -> None:
        self.answer = answer
        self.prefix = prefix
        self.entries = entries
        self.count = 0

    def __call__(self, mark: Mark) -> str:
        quotes = mark_quotes(self.answer, mark)
        return "".join(self.one(number, quotes.get(number)) for number in mark.numbers)

    def one(self, number: int, quote: str | None) -> str:
        self.count += 1
        entry = self.entries.get(number)
        tip_id = f"{self.prefix}-tip-{self.count}"
        parts: list[str] = []
        tip: list[str] = []
        if entry is not None:
            if entry.title:
                parts.append(entry.title)
                tip.append(f'<span class="unicite-tip-title">{_esc(entry.title)}</span>')
            place = entry.domain or (entry.url_text if not entry.title else None)
            if place:
                parts.append(place)
                tip.append(f'<span class="unicite-tip-domain">{_esc(place)}</span>')
        if quote:
            parts.append(f"\u201c{quote}\u201d")
            tip.append(f'<span class="unicite-tip-quote">\u201c{_esc(quote)}\u201d</span>')
        if not tip:
            parts.append(f"Source {number}")
            tip.append(f'<span class="unicite-tip-title">Source {number}</span>')
        title = " \u2014 ".join(parts)
        return (
            f'<sup class="unicite-cite"><a href="#{self.prefix}-src-{number}" '
            f'title="{_esc(title)}" aria-describedby="{tip_id}">[{number}]</a>'
            f'<span class="unicite-tip" role="tooltip" id="{tip_id}">{"".join(tip)}</span></sup>'
        )


def _source_item(entry: Entry, prefix: str) -> str:
    label = _esc(entry.label)
    if entry.href:
        parts = [f'<a href="{_esc(entry.href)}" {LINK_ATTRIBUTES}>{label}</a>']
        if entry.domain and entry.domain != entry.label:
            parts.append(f'<span class="unicite-domain">{_esc(entry.domain)}</span>')
    else:
        parts = [f'<span class="unicite-title">{label}</span>']
        if entry.url_text and entry.url_text != entry.label:
            parts.append(f'<span class="unicite-url">{_esc(entry.url_text)}</span>')
    for detail in entry.details:
        bits = []
        if detail.quote:
            bits.append(f"<q>{_esc(detail.quote)}</q>")
        if detail.location:
            bits.append(f'<span class="unicite-loc">{_esc(detail.location)}</span>')
        parts.append(f'<span class="unicite-detail">{" ".join(bits)}</span>')
    if entry.more_details:
        parts.append(f'<span class="unicite-loc">(and {entry.more_details} more)</span>')
    return f'<li id="{prefix}-src-{entry.number}" value="{entry.number}">{" ".join(parts)}</li>'


def render_html(answer: CitedAnswer, plan: Plan, *, prefix: str | None) -> str:
    """A ``<div class="unicite">`` fragment: styled text, markers, sources, suggestions."""
    prefix = default_prefix(answer) if prefix is None else check_prefix(prefix)
    entries = {entry.number: entry for entry in plan.entries}
    markers = _Markers(answer, prefix, entries)
    # Imported here: markdown-it loads only when an HTML rendering needs it.
    from unicite._render._html_markdown import answer_html

    body = answer_html(answer.text, plan.marks, markers)
    out = [f'<div class="unicite" id="{prefix}">', f"<style>\n{_STYLE}</style>"]
    if body:
        out.append(f'<div class="unicite-answer">{body}</div>')
    if plan.entries:
        out.append('<div class="unicite-sources"><p class="unicite-heading">Sources</p><ol>')
        out.extend(_source_item(entry, prefix) for entry in plan.entries)
        out.append("</ol></div>")
    if plan.search_suggestions:
        cleaned = sanitize_search_suggestions(plan.search_suggestions)
        out.append(f'<div class="unicite-search-suggestions">{cleaned}</div>')
    out.append("</div>")
    return "\n".join(out)


# --- Google Search Suggestions ----------------------------------------------------------------

# Google requires showing Search Suggestions as provided (its <style> and chip links); they are
# still untrusted HTML, so they are rebuilt from an allowlist.
_ALLOWED_TAGS = frozenset(
    {
        *("a", "b", "br", "div", "em", "i", "p", "span", "strong", "style"),
        *("svg", "g", "path", "circle", "ellipse", "line", "polygon", "polyline", "rect"),
        *("defs", "lineargradient", "radialgradient", "stop", "clippath"),
    }
)
_VOID_TAGS = frozenset({"br"})
_DROP_CONTENT_TAGS = frozenset(
    {
        *("script", "iframe", "object", "embed", "noscript", "template", "textarea", "title"),
        *("xmp", "noembed", "noframes", "frameset", "frame", "applet", "math", "select"),
        *("foreignobject", "head", "form", "button", "audio", "video", "canvas", "image"),
    }
)
_ALLOWED_ATTRIBUTES = frozenset(
    {
        *("class", "width", "height", "viewbox", "fill", "d", "stroke", "stroke-width"),
        *("stroke-linecap", "stroke-linejoin", "fill-rule", "clip-rule", "transform"),
        *("opacity", "fill-opacity", "stroke-opacity", "offset", "stop-color", "stop-opacity"),
        *("x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "points"),
        *("aria-hidden", "aria-label", "role"),
    }
)
_SVG_NAMESPACE = "http://www.w3.org/2000/svg"
_CSS_DANGER_RE = re.compile(
    r"@import[^;]*;?|url\s*\([^)]*\)?|expression\s*\(|-moz-binding|behavior\s*:|javascript:",
    re.IGNORECASE,
)
_CSS_COMMENT_RE = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_CSS_STOP_RE = re.compile(r"[{};]")
_CSS_GROUP_RULES = ("@media", "@supports", "@container", "@layer", "@document")


def _clean_css(css: str) -> str:
    """CSS without imports, url() fetches or script hooks, scoped to the suggestions box."""
    css = _CSS_COMMENT_RE.sub("", sanitize_display(css, allow_newlines=True))
    for _ in range(4):  # removing one match can join the pieces of another
        cleaned = _CSS_DANGER_RE.sub("", css)
        if cleaned == css:
            return _scope_css(css).replace("<", "\\3c ")
        css = cleaned
    return ""  # still changing: built to smuggle something through, so drop it all


def _scope_css(css: str) -> str:
    """Prefix every selector with the suggestions box, so no rule reaches the host page.

    Google's rules use generic class names (``.container``, ``.chip``) that would otherwise
    restyle the page around the answer. Rules inside ``@media``/``@supports`` are scoped too;
    other at-rule blocks (``@keyframes``, ``@font-face``) are kept as they are.
    """
    out: list[str] = []
    groups = 0  # depth of open @media-like blocks
    position = 0
    size = len(css)
    while position < size:
        brace = _CSS_STOP_RE.search(css, position)
        if brace is None:
            out.append(css[position:])
            break
        prelude = css[position : brace.start()]
        stop = brace.group()
        if stop == "}":
            out.append(prelude + "}")
            groups = max(0, groups - 1)
            position = brace.end()
            continue
        if stop == ";":
            out.append(prelude + ";")
            position = brace.end()
            continue
        head = prelude.strip()
        if head.startswith("@"):
            if head.lower().startswith(_CSS_GROUP_RULES):
                out.append(prelude + "{")
                groups += 1
                position = brace.end()
                continue
            end = _matching_brace(css, brace.start())
            out.append(css[position:end])
            position = end
            continue
        selectors = ", ".join(
            f".unicite-search-suggestions {selector.strip()}"
            for selector in head.split(",")
            if selector.strip()
        )
        close = css.find("}", brace.end())
        end = size if close < 0 else close + 1
        lead = prelude[: len(prelude) - len(prelude.lstrip())]
        out.append(f"{lead}{selectors} {{{css[brace.end() : end]}")
        if close < 0:
            out.append("}")
        position = end
    return "".join(out)


def _matching_brace(css: str, opening: int) -> int:
    """Index just past the brace closing the block opened at ``opening`` (or the end)."""
    depth = 0
    for index in range(opening, len(css)):
        if css[index] == "{":
            depth += 1
        elif css[index] == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(css)


class _SuggestionSanitizer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []
        self.dropping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, closed=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, closed=True)

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], *, closed: bool) -> None:
        if tag in _DROP_CONTENT_TAGS:
            if not closed and tag not in _VOID_TAGS:
                self.dropping += 1
            return
        if self.dropping or tag not in _ALLOWED_TAGS:
            return
        kept: list[str] = []
        for name, value in attrs:
            clean = sanitize_display(value or "")
            if name == "href" and tag == "a":
                href = link_target(clean)
                if href:
                    kept.append(f'href="{_esc(href)}" {LINK_ATTRIBUTES}')
            elif name == "xmlns" and clean == _SVG_NAMESPACE:
                kept.append(f'xmlns="{_SVG_NAMESPACE}"')
            elif name in _ALLOWED_ATTRIBUTES and not _CSS_DANGER_RE.search(clean):
                kept.append(f'{name}="{_esc(clean)}"')
        rendered = " ".join([tag, *kept])
        if tag in _VOID_TAGS:
            self.out.append(f"<{rendered}>")
        elif closed and "svg" in self.open:
            self.out.append(f"<{rendered}/>")
        else:
            self.out.append(f"<{rendered}>")
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROP_CONTENT_TAGS:
            self.dropping = max(0, self.dropping - 1)
            return
        if self.dropping or tag not in self.open:
            return
        while self.open:
            name = self.open.pop()
            self.out.append(f"</{name}>")
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.dropping:
            return
        if self.open and self.open[-1] == "style":
            self.out.append(_clean_css(data))
        else:
            self.out.append(_esc(sanitize_display(data, allow_newlines=True)))

    def close(self) -> None:
        super().close()
        while self.open:
            self.out.append(f"</{self.open.pop()}>")


def sanitize_search_suggestions(markup: str) -> str:
    """Google's Search Suggestions HTML rebuilt from an allowlist of tags and attributes.

    Scripts and other active elements are dropped with their content, as are event handlers,
    ``style`` attributes and any URL but http(s) links; the ``<style>`` block is kept without
    imports or ``url()``; every tag left open is closed, so nothing leaks past the fragment.
    """
    parser = _SuggestionSanitizer()
    try:
        parser.feed(markup)
        parser.close()
    except Exception:  # html.parser is lenient; anything else means: show nothing
        return ""
    return "".join(parser.out)
