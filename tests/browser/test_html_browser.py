"""The HTML rendering in a real headless Chromium: links, tooltips, and nothing hostile firing.

Pages are served from a local ``http.server`` on 127.0.0.1; every request elsewhere is blocked
and recorded. Screenshots land in ``test-output/screenshots/`` for a person to look at.
Needs ``/usr/bin/chromium`` (``apt-get install chromium``) and the ``playwright`` package;
Playwright's own browser download is not used.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _chromium import CHROMIUM, SCREENSHOTS

from unicite import Citation, CitedAnswer, PageLocation, Source, render

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed (pip install playwright)"
)

ROOT = Path(__file__).parents[2]
HOSTILE = ROOT / "tests" / "data" / "hostile"
FILLER = (
    "Le viaduc de Millau franchit la vallée du Tarn à près de 270 mètres de hauteur. " * 12
).strip()


def example() -> CitedAnswer:
    text = (
        "Le viaduc de Millau mesure 343 m. Il a été inauguré en 2004.\n\n"
        f"{FILLER}\n\n"
        "東京タワーは333メートルです。"
    )
    first = "Le viaduc de Millau mesure 343 m."
    second = "Il a été inauguré en 2004."
    third = "東京タワーは333メートルです。"
    return CitedAnswer(
        text=text,
        sources=[
            Source(
                id="wiki",
                url="https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
                title="Viaduc de Millau — Wikipédia",
            ),
            Source(id="pdf", kind="document", title="Rapport d’inauguration.pdf"),
            Source(id="tokyo", url="https://www.tokyotower.co.jp/", title="東京タワー"),
        ],
        citations=[
            Citation(start=0, end=len(first), text=first, source_ids=["wiki"]),
            Citation(
                start=len(first) + 1,
                end=len(first) + 1 + len(second),
                text=second,
                source_ids=["pdf", "wiki"],
                quote="Le viaduc a été inauguré le 14 décembre 2004.",
                location=PageLocation(start_page=3, end_page=5),
            ),
            Citation(
                start=text.index(third),
                end=len(text),
                text=third,
                source_ids=["tokyo"],
                quote="高さ333m",
            ),
        ],
    )


def hostile() -> CitedAnswer:
    titles = json.loads((HOSTILE / "titles.json").read_text(encoding="utf-8"))
    urls = json.loads((HOSTILE / "urls.json").read_text(encoding="utf-8"))
    texts = json.loads((HOSTILE / "texts.json").read_text(encoding="utf-8"))
    sources = [
        Source(id=f"s{n}", url=url or None, title=titles[n % len(titles)], snippet=titles[-n])
        for n, url in enumerate(urls)
    ]
    text = ""
    citations = []
    for n, chunk in enumerate(texts):
        citations.append(
            Citation(
                start=len(text),
                end=len(text) + len(chunk),
                text=chunk,
                source_ids=[f"s{n % len(urls)}"],
                quote=titles[(n + 5) % len(titles)],
            )
        )
        text += chunk + "\n\n"
    suggestions = (
        "<style>.chip{color:#1a73e8}body{display:none}</style>"
        '<a class="chip" href="javascript:alert(1)" onclick="alert(2)">search</a>'
        "<img src=x onerror=alert(3)><script>alert(4)</script><svg onload=alert(5)></svg>"
    )
    return CitedAnswer(
        text=text,
        sources=sources,
        citations=citations,
        extras={"search_entry_point": suggestions},
    )


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("site")
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class Watched:
    """A page whose dialogs, requests and navigations are all recorded."""

    def __init__(self, browser: Any, base: str) -> None:
        self.base = base
        self.dialogs: list[str] = []
        self.blocked: list[str] = []
        self.navigations: list[str] = []
        self.context = browser.new_context(viewport={"width": 900, "height": 520})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("dialog", self._dialog)
        self.page.on("framenavigated", lambda frame: self.navigations.append(frame.url))

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.base + "/"):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, root: Path, name: str, fragments: list[str]) -> None:
        body = "\n<hr>\n".join(fragments)
        page = (
            '<!doctype html><html lang="fr"><head><meta charset="utf-8">'
            f"<title>{name}</title></head>"
            f'<body style="max-width:40em;margin:2em auto;font-family:sans-serif">{body}'
            "</body></html>"
        )
        (root / f"{name}.html").write_text(page, encoding="utf-8")
        self.page.goto(f"{self.base}/{name}.html")
        self.page.wait_for_load_state("load")

    def screenshot(self, name: str, *, full_page: bool = False) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)

    def assert_inert(self) -> None:
        assert self.dialogs == []
        assert self.blocked == []
        for url in self.navigations:
            assert url.startswith(self.base + "/"), url
        assert self.page.evaluate("document.querySelectorAll('script').length") == 0
        ids = self.page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
        assert len(ids) == len(set(ids))

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watched(browser: Any, site: tuple[str, Path]) -> Iterator[Watched]:
    page = Watched(browser, site[0])
    try:
        yield page
    finally:
        page.close()


def test_marker_click_targets_its_source(watched: Watched, site: tuple[str, Path]) -> None:
    watched.open(site[1], "example", [render(example(), "html", prefix="ex")])
    page = watched.page
    assert page.evaluate("window.scrollY") == 0
    watched.screenshot("example", full_page=True)

    # The last marker cites source 3, listed below the fold.
    marker = page.locator('#ex sup.unicite-cite a[href="#ex-src-3"]')
    marker.click()
    page.wait_for_function("location.hash === '#ex-src-3'")
    assert page.evaluate("document.querySelector(':target').id") == "ex-src-3"
    assert page.evaluate("window.scrollY") > 0
    target = page.locator("#ex-src-3")
    box = target.bounding_box()
    assert box is not None
    assert 0 <= box["y"] < 520
    assert "東京タワー" in target.inner_text()
    background = target.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background not in {"rgba(0, 0, 0, 0)", "transparent"}  # the :target highlight
    watched.screenshot("example-target")
    watched.assert_inert()


def test_hover_and_focus_show_the_tooltip(watched: Watched, site: tuple[str, Path]) -> None:
    watched.open(site[1], "tooltip", [render(example(), "html", prefix="ex")])
    page = watched.page
    sup = page.locator("#ex sup.unicite-cite").nth(2)  # [2]: the report, with its quote
    tip = sup.locator(".unicite-tip")
    assert sup.locator("a").inner_text() == "[2]"
    assert not tip.is_visible()
    sup.locator("a").hover()
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert "Rapport d’inauguration.pdf" in text
    assert "Le viaduc a été inauguré le 14 décembre 2004." in text
    title = sup.locator("a").get_attribute("title")
    assert title is not None
    assert "Rapport d’inauguration.pdf" in title
    watched.screenshot("tooltip-hover")

    first = page.locator("#ex sup.unicite-cite").first
    page.mouse.move(0, 0)
    tip.wait_for(state="hidden")
    first.locator("a").focus()
    first.locator(".unicite-tip").wait_for(state="visible")
    shown = first.locator(".unicite-tip").inner_text()
    assert "Viaduc de Millau — Wikipédia" in shown
    assert "wikipedia.org" in shown
    watched.screenshot("tooltip-focus")
    watched.assert_inert()


def markdown_answer() -> CitedAnswer:
    """Markdown as a model writes it, a marker inside bold and one in a list item."""
    text = (
        "Le viaduc mesure **343 mètres** de haut.\n\n"
        "- premier point : 東京タワーは333メートル\n"
        "- second point, voir [Wikipédia](https://fr.wikipedia.org/wiki/Viaduc_de_Millau)\n\n"
        "<script>alert(1)</script> `code` et ![logo](https://evil.example/logo.png)"
    )
    bold = "Le viaduc mesure **343 mètres"
    item = "premier point : 東京タワーは333メートル"
    return CitedAnswer(
        text=text,
        sources=[
            Source(
                id="wiki",
                url="https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
                title="Viaduc de Millau — Wikipédia",
            ),
            Source(id="tokyo", url="https://www.tokyotower.co.jp/", title="東京タワー"),
        ],
        citations=[
            Citation(start=0, end=len(bold), text=bold, source_ids=["wiki"], quote="343 m"),
            Citation(
                start=text.index(item),
                end=text.index(item) + len(item),
                text=item,
                source_ids=["tokyo"],
            ),
        ],
    )


def test_markdown_renders_with_working_markers(watched: Watched, site: tuple[str, Path]) -> None:
    watched.open(site[1], "markdown", [render(markdown_answer(), "html", prefix="md")])
    page = watched.page
    strong = page.locator("#md .unicite-answer strong")
    assert strong.count() == 1
    assert strong.first.inner_text().startswith("343 mètres")
    assert strong.first.evaluate("e => getComputedStyle(e).fontWeight") in {"700", "bold"}
    items = page.locator("#md .unicite-answer ul > li")
    assert items.count() == 2
    assert "東京タワーは333メートル" in items.first.inner_text()
    assert items.first.locator("sup.unicite-cite").count() == 1
    assert "**" not in page.locator("#md .unicite-answer").inner_text()
    # Raw HTML shows as text, the image as a link that never loads.
    assert "<script>alert(1)</script>" in page.locator("#md .unicite-answer").inner_text()
    assert page.locator("#md img").count() == 0
    assert page.locator("#md .unicite-answer code").inner_text() == "code"
    wiki = page.locator(
        '#md .unicite-answer a[href="https://fr.wikipedia.org/wiki/Viaduc_de_Millau"]'
    )
    assert wiki.get_attribute("target") == "_blank"
    assert wiki.get_attribute("rel") == "noopener noreferrer nofollow"
    watched.screenshot("markdown", full_page=True)

    # The marker inside the bold text: tooltip on hover, in normal weight, and a working link.
    sup = strong.locator("sup.unicite-cite")
    assert sup.count() == 1
    tip = sup.locator(".unicite-tip")
    assert not tip.is_visible()
    sup.locator("a").hover()
    tip.wait_for(state="visible")
    assert "Viaduc de Millau — Wikipédia" in tip.inner_text()
    assert "343 m" in tip.inner_text()
    assert tip.evaluate("e => getComputedStyle(e).fontWeight") in {"400", "normal"}
    watched.screenshot("markdown-tooltip")
    sup.locator("a").click()
    page.wait_for_function("location.hash === '#md-src-1'")
    assert page.evaluate("document.querySelector(':target').id") == "md-src-1"
    page.mouse.move(0, 0)
    page.evaluate("document.activeElement.blur()")  # the focused marker keeps its tooltip open
    tip.wait_for(state="hidden")
    items.first.locator("sup.unicite-cite a").click()
    page.wait_for_function("location.hash === '#md-src-2'")
    assert "東京タワー" in page.locator(":target").inner_text()
    watched.assert_inert()


def test_two_answers_on_one_page_do_not_collide(watched: Watched, site: tuple[str, Path]) -> None:
    other = CitedAnswer(
        text="Autre réponse.",
        sources=[Source(id="x", url="https://example.org/", title="Autre")],
        citations=[Citation(start=0, end=14, text="Autre réponse.", source_ids=["x"])],
    )
    watched.open(site[1], "two", [render(example(), "html"), render(other, "html")])
    page = watched.page
    markers = page.locator("sup.unicite-cite a")
    last = markers.nth(markers.count() - 1)
    href = last.get_attribute("href")
    assert href is not None
    last.click()
    page.wait_for_function(f"location.hash === {json.dumps(href)}")
    assert "Autre" in page.locator(":target").inner_text()
    watched.assert_inert()


def test_hostile_answer_stays_inert(watched: Watched, site: tuple[str, Path]) -> None:
    watched.open(site[1], "hostile", [render(hostile(), "html", prefix="hx", sources="all")])
    page = watched.page
    page.wait_for_load_state("networkidle")
    watched.screenshot("hostile", full_page=True)
    # Google's hostile `body{display:none}` was scoped away: the page is visible.
    assert page.locator("#hx").is_visible()
    markers = page.locator("#hx sup.unicite-cite")
    assert markers.count() > 10
    for index in range(markers.count()):
        sup = markers.nth(index)
        sup.locator("a").hover()
        sup.locator(".unicite-tip").wait_for(state="visible")
        sup.locator("a").click()
        href = sup.locator("a").get_attribute("href")
        page.wait_for_function(f"location.hash === {json.dumps(href)}")
    # Clicking the text where injected links would be, and the defused chip, does nothing.
    for paragraph in page.locator("#hx .unicite-answer p").all():
        paragraph.click(position={"x": 1, "y": 1})
    chips = page.locator("#hx .unicite-search-suggestions a")
    assert chips.count() == 1
    assert chips.first.get_attribute("href") is None
    chips.first.click()
    watched.screenshot("hostile-after-clicks")
    for anchor in page.locator("#hx a").all():
        href = anchor.get_attribute("href")
        assert href is None or href.startswith(("#hx-src-", "http://", "https://")), href
    watched.assert_inert()
