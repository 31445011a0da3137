"""Every renderer against hostile titles, URLs, quotes, domains and answer texts.

The fixtures in ``tests/data/hostile/`` hold terminal escapes (CSI, OSC 8, C1 forms), bidi
overrides, zero-width characters, HTML and Markdown injections and non-http(s) URLs; a 1 MB
title is generated here. Nothing may come out active: no escape sequence but the terminal
renderer's own OSC 8 links to http(s), no HTML outside an allowlist, no non-http(s) link.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from unicite import Citation, CitedAnswer, PageLocation, Source, render
from unicite.markers import inject_markers

HOSTILE = Path(__file__).parents[1] / "data" / "hostile"
TITLES: list[str] = json.loads((HOSTILE / "titles.json").read_text(encoding="utf-8"))
URLS: list[str] = json.loads((HOSTILE / "urls.json").read_text(encoding="utf-8"))
TEXTS: list[str] = json.loads((HOSTILE / "texts.json").read_text(encoding="utf-8"))
BIG_TITLE = "\x1b]8;;https://evil.example/\x1b\\" + "A" * 1_000_000 + "\u202e<script>"

# Never allowed in any output (newline excepted): C0, DEL, C1, bidi controls, invisible marks.
FORBIDDEN = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069"
    "\ufeff\ud800-\udfff]"
)
OSC8_OPEN = re.compile(r"\x1b\]8;;(https?://[\x21-\x7e]+?)\x1b\\")
OSC8_CLOSE = "\x1b]8;;\x1b\\"
PREFIX = "hx"
SUGGESTIONS = (
    '<style>.chip{x:url("javascript:alert(1)")}</style><script>alert(1)</script>'
    '<a class="chip" href="javascript:alert(1)" onclick="alert(1)">s</a>'
    '<img src=x onerror="alert(1)"><svg><script>alert(1)</script><a href="data:x">d</a></svg>'
    "</div></div></div><style>body{display:none}</style><textarea><script>alert(1)</script>"
)


def hostile_answer(*, big: bool = False) -> CitedAnswer:
    """One chunk of text per hostile text, citing sources with hostile fields everywhere."""
    titles = [*TITLES, BIG_TITLE] if big else TITLES
    count = max(len(titles), len(URLS))
    sources = [
        Source(
            id=f"s{n}",
            url=URLS[n % len(URLS)] or None,
            title=titles[n % len(titles)],
            domain=titles[(n + 3) % len(titles)] if n % 2 else None,
            snippet=titles[(n + 5) % len(titles)],
            raw={"secret": "RAW-PAYLOAD"},
        )
        for n in range(count)
    ]
    chunks: list[str] = []
    citations: list[Citation] = []
    position = 0
    for n, chunk in enumerate(TEXTS):
        text = chunk + "\n\n"
        citations.append(
            Citation(
                start=position,
                end=position + len(chunk),
                text=chunk,
                source_ids=[f"s{n % count}", f"s{(n + 7) % count}"],
                quote=titles[(n + 11) % len(titles)],
                location=PageLocation(start_page=n + 1, end_page=n + 3),
                raw="RAW-PAYLOAD",
            )
        )
        chunks.append(text)
        position += len(text)
    # A model-written marker replaced by the renderers (an OpenAI-style inline link).
    link = "([evil](javascript:alert(1)))"
    tail = f"Tail claim {link}."
    chunks.append(tail)
    marker = position + tail.index(link)
    citations.append(
        Citation(
            start=position,
            end=position + len("Tail claim"),
            text="Tail claim",
            source_ids=[f"s{count - 1}"],
            marker_span=(marker, marker + len(link)),
        )
    )
    # Every remaining source is cited too, so all of them are listed with cited=... as well.
    citations.extend(
        Citation(start=0, end=0, text="", source_ids=[f"s{n}"], quote=titles[n % len(titles)])
        for n in range(count)
    )
    return CitedAnswer(
        text="".join(chunks),
        sources=sources,
        citations=citations,
        extras={"search_entry_point": SUGGESTIONS},
    )


ANSWER = hostile_answer()
UNCITED = ANSWER.model_copy(update={"citations": []})  # the fallback list


def answers() -> list[CitedAnswer]:
    return [ANSWER, UNCITED, inject_markers(ANSWER), hostile_answer(big=True)]


def check_no_forbidden(out: str) -> None:
    found = FORBIDDEN.search(out)
    if found is not None:
        context = out[max(0, found.start() - 40) : found.start() + 40]
        pytest.fail(f"forbidden {found.group()!r} at {found.start()}: {context!r}")


# --- terminal and text ------------------------------------------------------------------------


@pytest.mark.parametrize("answer", answers(), ids=["cited", "fallback", "injected", "big"])
@pytest.mark.parametrize("width", [None, 40])
def test_terminal_emits_only_its_own_osc8_links(answer: CitedAnswer, width: int | None) -> None:
    out = render(answer, "terminal", hyperlinks=True, width=width or 100_000, sources="all")
    links = OSC8_OPEN.findall(out)
    assert links, "http(s) sources should be linked"
    for href in links:
        assert href.lower().startswith(("http://", "https://"))
    # Links open and close in strict alternation, each on one line.
    tokens = re.findall(r"\x1b\]8;;[^\x1b]*\x1b\\", out)
    assert tokens == [t for pair in zip(tokens[::2], tokens[1::2], strict=True) for t in pair]
    for opening, closing in zip(tokens[::2], tokens[1::2], strict=True):
        assert OSC8_OPEN.fullmatch(opening)
        assert closing == OSC8_CLOSE
    for line in out.split("\n"):
        assert len(OSC8_OPEN.findall(line)) == line.count(OSC8_CLOSE)
    check_no_forbidden(OSC8_OPEN.sub("", out).replace(OSC8_CLOSE, ""))


@pytest.mark.parametrize("answer", answers(), ids=["cited", "fallback", "injected", "big"])
def test_text_and_unlinked_terminal_emit_no_escapes(answer: CitedAnswer) -> None:
    for out in (
        render(answer, "text", sources="all"),
        render(answer, "terminal", hyperlinks=False, width=60),
    ):
        assert "\x1b" not in out
        check_no_forbidden(out)


def test_hostile_title_shows_as_inert_text() -> None:
    out = render(ANSWER, "text", sources="all")
    assert "fake link in a title" in out  # the OSC 8 wrapper is gone, the words stay
    assert "Red title with CSI colour" in out
    assert "exe.txt" in out


def test_non_http_urls_are_never_linked() -> None:
    out = render(ANSWER, "terminal", hyperlinks=True, width=100_000, sources="all")
    for href in OSC8_OPEN.findall(out):
        assert re.fullmatch(r"https?://[A-Za-z0-9\-._~!$&()*+,;=:@/?#\[\]%]+", href), href


def test_big_title_is_cut() -> None:
    answer = hostile_answer(big=True)
    for format in ("terminal", "text", "markdown", "html"):
        out = render(answer, format, hyperlinks=True, sources="all")
        assert "A" * 1_000 not in out
        assert "A" * 150 in out


# --- markdown -----------------------------------------------------------------------------------


class EveryLink(MarkdownIt):
    def validateLink(self, url: str) -> bool:  # report every link, even ones it would drop
        return True


def markdown_links(text: str) -> tuple[list[str], list[str]]:
    """(every link/image URL, every raw HTML fragment) CommonMark finds in ``text``."""
    parser = EveryLink("commonmark", {"html": True})
    links: list[str] = []
    html: list[str] = []
    pending: list[Any] = list(parser.parse(text))
    while pending:
        token = pending.pop()
        if token.type in {"html_inline", "html_block"}:
            html.append(token.content)
        for name in ("href", "src"):
            value = token.attrGet(name)
            if value is not None:
                links.append(str(value))
        pending.extend(token.children or ())
    return links, html


@pytest.mark.parametrize("answer", answers(), ids=["cited", "fallback", "injected", "big"])
@pytest.mark.parametrize("markers", ["brackets", "footnotes"])
def test_markdown_has_no_html_and_only_http_links(answer: CitedAnswer, markers: str) -> None:
    out = render(answer, "markdown", markers=markers, sources="all")  # type: ignore[arg-type]
    check_no_forbidden(out)
    if markers == "footnotes":
        # CommonMark has no footnotes: read each definition as the paragraph GFM shows.
        out = re.sub(r"(?m)^\[\^\d+\]: ", "", out)
        out = re.sub(r"\[\^\d+\]", "", out)
    links, html = markdown_links(out)
    assert html == []
    assert links, "http(s) sources should be linked"
    for link in links:
        assert link.lower().startswith(("http://", "https://")), link


@pytest.mark.parametrize("text", TEXTS)
def test_markdown_defuses_each_hostile_text(text: str) -> None:
    answer = CitedAnswer(
        text=text,
        sources=[Source(id="a", url="https://example.com/ok", title="ok")],
        citations=[Citation(start=0, end=len(text), text=text, source_ids=["a"])],
    )
    out = render(answer, "markdown")
    check_no_forbidden(out)
    links, html = markdown_links(out)
    assert html == []
    for link in links:
        assert link.lower().startswith(("http://", "https://")), link


def test_markdown_keeps_code_and_http_links() -> None:
    index = next(n for n, text in enumerate(TEXTS) if "code block stays" in text)
    out = render(CitedAnswer(text=TEXTS[index]), "markdown")
    assert "```\n<b>code block stays</b>\n```" in out
    assert "`<i>inline code</i>`" in out
    index = next(n for n, text in enumerate(TEXTS) if text.startswith("Safe [link]"))
    out = render(CitedAnswer(text=TEXTS[index]), "markdown")
    assert out == TEXTS[index]


# --- html ---------------------------------------------------------------------------------------

ALLOWED_TAGS = {
    *("div", "style", "p", "br", "sup", "a", "span", "ol", "li", "q", "b"),
    *("svg", "path"),  # Google Search Suggestions
    # The answer's Markdown.
    *("ul", "em", "strong", "s", "code", "pre", "blockquote", "hr"),
    *("h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td"),
}
ALLOWED_ATTRIBUTES = {
    *("class", "id", "href", "title", "rel", "target", "role", "aria-describedby", "value"),
    *("viewbox", "xmlns", "d", "fill", "width", "height"),
    "start",  # an ordered list in the answer's Markdown
}
INTERNAL_HREF = re.compile(rf"#{PREFIX}-src-\d+")


class Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.styles: list[str] = []
        self.in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self.in_style = tag == "style"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        self.in_style = False

    def handle_data(self, data: str) -> None:
        if self.in_style:
            self.styles.append(data)


@pytest.mark.parametrize("answer", answers(), ids=["cited", "fallback", "injected", "big"])
def test_html_is_inert(answer: CitedAnswer) -> None:
    out = render(answer, "html", prefix=PREFIX, sources="all")
    check_no_forbidden(out)
    assert "<script" not in out.lower()
    collector = Collector()
    collector.feed(out)
    collector.close()
    ids: set[str] = set()
    for tag, attrs in collector.tags:
        assert tag in ALLOWED_TAGS, tag
        for name, value in attrs:
            assert name in ALLOWED_ATTRIBUTES, (tag, name)
            assert not name.startswith("on")
            if name == "href":
                assert value is not None
                assert INTERNAL_HREF.fullmatch(value) or re.fullmatch(
                    r"https?://[\x21-\x7e]+", value
                ), value
            if name == "id":
                assert value not in ids, f"duplicate id {value}"
                ids.add(str(value))
        if tag == "a" and (dict(attrs).get("href") or "").startswith("http"):
            assert dict(attrs)["rel"] == "noopener noreferrer nofollow"
            assert dict(attrs)["target"] == "_blank"
    for css in collector.styles:
        assert "url(" not in css.lower()
        assert "@import" not in css.lower()
        assert "javascript" not in css.lower()
    # Internal links all resolve to a listed source.
    for tag, attrs in collector.tags:
        href = dict(attrs).get("href") or ""
        if tag == "a" and href.startswith("#"):
            assert href[1:] in ids


def test_search_suggestion_styles_cannot_reach_the_page() -> None:
    out = render(ANSWER, "html", prefix=PREFIX)
    suggestions = out.split('<div class="unicite-search-suggestions">', 1)[1]
    assert "body{display:none}" not in suggestions
    assert ".unicite-search-suggestions body {display:none}" in suggestions
    assert "<textarea" not in suggestions


def test_html_shows_hostile_markup_as_text() -> None:
    out = render(ANSWER, "html", prefix=PREFIX, sources="all")
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in out
    assert "&lt;img src=x onerror=&quot;alert(&#x27;title&#x27;)&quot;&gt;" in out


@pytest.mark.parametrize("prefix", ["", "1abc", "a b", 'x"><script>', "a" * 65])
def test_html_rejects_unsafe_prefixes(prefix: str) -> None:
    from unicite import UsageError

    with pytest.raises(UsageError):
        render(ANSWER, "html", prefix=prefix)


# --- json ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", answers(), ids=["cited", "fallback", "injected", "big"])
def test_json_escapes_controls_and_round_trips(answer: CitedAnswer) -> None:
    out = render(answer, "json")
    check_no_forbidden(out.replace("\n", ""))
    assert "RAW-PAYLOAD" not in out
    back = CitedAnswer.from_json(out)
    assert back.text == answer.text
    assert [s.title for s in back.sources] == [s.title for s in answer.sources]
    assert [c.quote for c in back.citations] == [c.quote for c in answer.citations]
    out.encode("utf-8")  # printable: no lone surrogate left unescaped


@pytest.mark.parametrize("format", ["terminal", "text", "markdown", "html", "json"])
def test_raw_is_never_rendered(format: str) -> None:
    out = render(ANSWER, format, hyperlinks=True, sources="all")  # type: ignore[arg-type]
    assert "RAW-PAYLOAD" not in out
