"""The chat example in a real headless Chromium: live answers equal reloaded ones, and stay safe.

The example service (examples/web/app.py) runs with uvicorn in a thread on 127.0.0.1, its
LangChain pipeline replaying cassettes/examples/web/chat.yaml; a few questions get fixed
answers (hostile sources, sources without markers, markers typed a character at a time) from a
test pipeline handed to ``create_app``. Every request that does not go to the service is
blocked and recorded. Screenshots land in ``test-output/screenshots/``; the README's picture in
``docs/images/chat.png``. Needs ``/usr/bin/chromium`` and the ``playwright`` package
(Playwright's own browser download is not used).
"""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _chromium import CHROMIUM, SCREENSHOTS

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed (pip install playwright)"
)
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")
pytest.importorskip("sse_starlette")
pytest.importorskip("vcr")
pytest.importorskip("langchain_openai")

import unicite  # noqa: E402
from unicite import CitedAnswer, Source  # noqa: E402
from unicite.generation import Retry  # noqa: E402

ROOT = Path(__file__).parents[2]
README_IMAGE = ROOT / "docs" / "images" / "chat.png"
DELAY = 0.02
"""Seconds per streamed delta: slow enough to watch the stream, fast enough for the suite."""

MESSAGE = ".unicite-message"
COMPLETE = '.unicite-message[data-state="complete"]'
HALF_TYPED = re.compile(r"(?:\[\[(?:S(?::[\d\s,]*)?)?\]?|\[[\d\s,–-]*)$")
"""The end of a text showing a marker still being typed: "[", "[1", "[1, ", "[[S:2"..."""

HOSTILE_Q = "<img src=x onerror=alert('question')> Ces sources sont-elles inertes ?"
FALLBACK_Q = "Quelle est la capitale de la France ?"
SLOW_Q = "Combien mesure le viaduc de Millau ?"
BROKEN_Q = "Et si la réponse s’interrompt ?"
RETRY_Q = "Et si le modèle recommence ?"
KINKAKU = "鹿苑寺（金閣寺）"  # noqa: RUF001 - the source's title, fullwidth parentheses included

RECORDER = """
window.__states = [];
new MutationObserver(() => {
  for (const body of document.querySelectorAll(
    '.unicite-message[data-state="streaming"] .unicite-body'
  )) {
    const text = body.textContent;
    if (window.__states[window.__states.length - 1] !== text) window.__states.push(text);
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


# --- the service ---------------------------------------------------------------------------------


def load_example() -> ModuleType:
    path = ROOT / "examples" / "web" / "app.py"
    spec = importlib.util.spec_from_file_location("unicite_web_example", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def hostile() -> CitedAnswer:
    sources = [
        Source(
            id="h1",
            url="javascript:alert(1)",
            title="<img src=x onerror=alert(1)>",
            snippet="<script>alert(2)</script>",
        ),
        Source(
            id="h2",
            url='https://example.org/"><img src=x onerror=alert(3)>',
            title="\u202eevil\u202c <b onmouseover=alert(4)>bold</b>",
        ),
        Source(id="h3", url="data:text/html,<script>alert(5)</script>", title="Data URL"),
        Source(id="h4", url="https://safe.example.com/page", title="Safe source"),
    ]
    text = (
        "Le **titre** [1] et l’URL [2] restent inertes [3][4].\n\n"
        "[lien](javascript:alert(6)) <img src=x onerror=alert(7)> <script>alert(8)</script> "
        "![pixel](https://tracker.example/pixel.png) <https://evil.example/x>"
    )
    return unicite.cite(text, sources)


def fallback() -> CitedAnswer:
    # Sources the answer rests on, but no marker in its text (seed 002, §2.3), and a "[7]"
    # that names no source (§2): it stays plain text.
    return CitedAnswer(
        text="Paris est la capitale de la France [7].",
        sources=[
            Source(url="https://fr.wikipedia.org/wiki/Paris", title="Paris — Wikipédia"),
            Source(title="Atlas de France.pdf", kind="document"),
        ],
    )


def slow() -> tuple[str, CitedAnswer]:
    """Markers in bold and in a list item, a verified and an unchecked quote; streamed text."""
    sources = [
        Source(
            id="wiki",
            url="https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
            title="Viaduc de Millau — Wikipédia",
            content="Le viaduc culmine à 343 mètres. Il a été inauguré le 14 décembre 2004.",
        ),
        Source(id="tokyo", url="https://www.tokyotower.co.jp/", title="東京タワー"),
    ]
    text = (
        "Le **viaduc de Millau mesure 343 m [1]**.\n\n"
        "- 東京タワーは333メートルです [2]\n"
        "- Il a été inauguré le 14 décembre 2004 [1]."
    )
    answer = unicite.cite(text, sources)
    quotes = ["Le viaduc culmine à 343 mètres.", "高さ333m", None]
    citations = [
        c.model_copy(update={"quote": q, "verified": True if n == 0 else None})
        for n, (c, q) in enumerate(zip(answer.citations, quotes, strict=True))
    ]
    answer = answer.replace(citations=citations)
    # The model wrote the generation prompt's [[S:n]] form for the first marker.
    streamed = unicite.wire.history(answer)["content"].replace("[1]**", "[[S:1]]**", 1)
    return streamed, answer


def pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


class Pipeline:
    """The example's LangChain pipeline, fixed answers for a few questions, a gate to hold."""

    def __init__(self, default: Any) -> None:
        self.default = default
        self.hold = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def __call__(self, question: str) -> Iterable[object]:
        if question == HOSTILE_Q:
            return self._fixed(hostile())
        if question == FALLBACK_Q:
            return self._fixed(fallback())
        if question == SLOW_Q:
            streamed, answer = slow()
            return [*pieces(streamed, 2), answer]
        if question == BROKEN_Q:
            return self._broken()
        if question == RETRY_Q:
            _, answer = slow()
            draft = ["Un brouillon ", "sans source ", "écarté."]
            retry = Retry(round=2, reason="the answer cites no source")
            return [*draft, retry, *pieces(unicite.wire.history(answer)["content"], 6), answer]
        return self._gated(self.default(question))

    def _fixed(self, answer: CitedAnswer) -> list[object]:
        return [*pieces(unicite.wire.history(answer)["content"], 12), answer]

    def _broken(self) -> Iterator[object]:
        yield "La réponse commence [1"
        yield "] puis "
        raise ConnectionError("the model went away")

    def _gated(self, stream: Iterable[object]) -> Iterator[object]:
        for count, item in enumerate(stream):
            if count == 12 and self.hold.is_set():
                self.release.wait(30)
            yield item

    def arm(self) -> None:
        """Hold the next answers after a few deltas until `open`."""
        self.release.clear()
        self.hold.set()

    def open(self) -> None:
        self.hold.clear()
        self.release.set()


class Service:
    def __init__(self, base: str, app: Any, pipeline: Pipeline, questions: list[str]) -> None:
        self.base = base
        self.app = app
        self.pipeline = pipeline
        self.questions = questions


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    example = load_example()
    pipeline = Pipeline(example.langchain_pipeline(offline=True))
    history = unicite.wire.SQLiteHistoryStore(tmp_path_factory.mktemp("chat") / "history.sqlite3")
    app = example.create_app(pipeline, delay=DELAY, replay_cassette=True, history=history)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive(), "the service did not start"
        assert time.monotonic() < deadline, "the service did not start in time"
        time.sleep(0.02)
    try:
        yield Service(f"http://127.0.0.1:{port}", app, pipeline, list(example.QUESTIONS))
    finally:
        pipeline.open()
        server.should_exit = True
        thread.join(10)
        sock.close()


# --- the page ------------------------------------------------------------------------------------


class Chat:
    """A page of the chat whose dialogs and requests elsewhere are all recorded."""

    def __init__(self, browser: Any, service: Service) -> None:
        self.base = service.base
        self.service = service
        self.dialogs: list[str] = []
        self.blocked: list[str] = []
        # The page sends a strict Content-Security-Policy; the tests bypass it (Playwright's
        # waits evaluate strings), so what they show holds without it too.
        self.context = browser.new_context(viewport={"width": 900, "height": 720}, bypass_csp=True)
        self.context.route("**/*", self._route)
        self.context.add_init_script(RECORDER)
        self.context.on("dialog", self._dialog)
        self.page = self.context.new_page()
        self.page.on("dialog", self._dialog)
        self.thread = f"t-{time.monotonic_ns()}"

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.base + "/"):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, thread: str | None = None) -> Any:
        self.thread = thread or self.thread
        response = self.page.goto(f"{self.base}/?thread={self.thread}")
        self.page.wait_for_selector('body[data-ready="true"]')
        return response

    def ask(self, question: str) -> None:
        self.page.fill("#question", question)
        self.page.press("#question", "Enter")

    def messages(self) -> Any:
        return self.page.locator(MESSAGE)

    def wait_complete(self, count: int) -> None:
        self.page.wait_for_function(
            f"document.querySelectorAll({json.dumps(COMPLETE)}).length === {count}",
            timeout=20_000,
        )

    def thread_json(self) -> Any:
        return self.page.evaluate(
            "id => fetch(`/api/threads/${id}`).then(r => r.json())", self.thread
        )

    def outer(self, index: int) -> str:
        return str(self.messages().nth(index).evaluate("e => e.outerHTML"))

    def rendered(self, document: dict[str, Any]) -> str:
        """The message rendered straight from a history document by the client's function."""
        script = "doc => import('/unicite/unicite.js').then(m => m.renderMessage(doc).outerHTML)"
        return str(self.page.evaluate(script, document))

    def states(self) -> list[str]:
        return list(self.page.evaluate("window.__states"))

    def screenshot(self, name: str, *, full_page: bool = False) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)

    def wait_blocked(self, count: int) -> None:
        deadline = time.monotonic() + 10
        while len(self.blocked) < count and time.monotonic() < deadline:
            self.page.wait_for_timeout(50)

    def assert_inert(self) -> None:
        assert self.dialogs == []
        assert self.page.evaluate("document.querySelectorAll('img, iframe, object').length") == 0
        scripts = self.page.evaluate(
            "[...document.querySelectorAll('script')].map(s => s.getAttribute('src'))"
        )
        assert scripts == ["/page.js"]
        hrefs = self.page.evaluate(
            "[...document.querySelectorAll('[href]')].map(e => e.getAttribute('href'))"
        )
        for href in hrefs:
            assert href.startswith(("#", "/", "data:,", "http://", "https://")), href
            assert "javascript:" not in href.lower(), href
        handlers = self.page.evaluate(
            "[...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
            ".map(a => a.name).filter(n => n.startsWith('on'))"
        )
        assert handlers == []
        ids = self.page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
        assert len(ids) == len(set(ids))

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def chat(browser: Any, service: Service) -> Iterator[Chat]:
    page = Chat(browser, service)
    try:
        yield page
    finally:
        page.close()


@pytest.fixture(scope="module")
def finished(browser: Any, service: Service) -> str:
    """A thread whose two recorded turns are complete (asked through the page)."""
    page = Chat(browser, service)
    service.app.state.delay = 0  # nobody watches these answers stream
    try:
        page.open()
        for count, question in enumerate(service.questions, 1):
            page.ask(question)
            page.wait_complete(count)
        return page.thread
    finally:
        service.app.state.delay = DELAY
        page.close()


def history_of(chat: Chat, index: int) -> dict[str, Any]:
    turns = chat.thread_json()["turns"]
    assert turns[index]["status"] == "complete"
    return dict(turns[index]["message"])


def assert_never_half_typed(states: list[str]) -> None:
    assert states
    for state in states:
        assert not HALF_TYPED.search(state), state
        assert "[[" not in state, state


# --- the tests -----------------------------------------------------------------------------------


def test_live_stream_then_reload_shows_the_same_message(chat: Chat) -> None:
    response = chat.open()
    assert "default-src 'self'" in response.headers["content-security-policy"]
    chat.ask(chat.service.questions[0])
    chat.page.wait_for_selector('.unicite-message[data-state="streaming"] .unicite-cite')
    chat.screenshot("chat_streaming")
    chat.wait_complete(1)
    live = chat.outer(0)
    states = chat.states()
    assert len(states) > 20  # the answer was seen growing, delta by delta
    assert_never_half_typed(states)
    assert any(state.endswith("[1]") for state in states)  # a provisional marker, shown live
    chat.screenshot("chat_live")

    document = history_of(chat, 0)
    assert document["metadata"]["has_markers"] is True
    assert live == chat.rendered(document)
    message = chat.messages().first
    assert message.locator("sup.unicite-cite").count() == 5
    assert message.locator(".unicite-source").all_inner_texts()[2].startswith(KINKAKU)

    chat.page.reload()
    chat.wait_complete(1)
    assert chat.outer(0) == live
    chat.screenshot("chat_reload")
    assert chat.blocked == []
    chat.assert_inert()


def test_reload_mid_stream_finishes_the_cited_answer(chat: Chat) -> None:
    chat.service.pipeline.arm()
    try:
        chat.open()
        chat.ask(chat.service.questions[0])
        chat.page.wait_for_function(
            "(document.querySelector('.unicite-message .unicite-body')?.textContent ?? '')"
            ".length > 15"
        )
        with chat.page.expect_response(re.compile(r"/api/threads/[^/]+$")) as listing:
            chat.page.reload()
        turns = listing.value.json()["turns"]
        assert [turn["status"] for turn in turns] == ["pending"]
        chat.page.wait_for_selector('.unicite-message[data-state="streaming"]')
    finally:
        chat.service.pipeline.open()
    chat.wait_complete(1)
    assert_never_half_typed(chat.states())
    document = history_of(chat, 0)
    resumed = chat.outer(0)
    assert resumed == chat.rendered(document)
    chat.page.reload()
    chat.wait_complete(1)
    assert chat.outer(0) == resumed
    assert chat.blocked == []
    chat.assert_inert()


def test_no_half_typed_marker_is_ever_shown(chat: Chat) -> None:
    chat.open()
    chat.ask(SLOW_Q)
    chat.wait_complete(1)
    states = chat.states()
    assert len(states) > 30
    assert_never_half_typed(states)
    # The markers showed up while streaming, provisional and unlinked, with the final numbers.
    assert any(state.endswith("343 m [1]") for state in states)
    assert any("[2]" in state for state in states)
    assert chat.messages().first.locator("sup.unicite-cite").count() == 3
    chat.assert_inert()


def test_follow_up_turn_keeps_both_turns_citations(chat: Chat) -> None:
    chat.open()
    first, second = chat.service.questions
    chat.ask(first)
    chat.wait_complete(1)
    chat.ask(second)
    chat.wait_complete(2)
    chat.page.mouse.move(0, 0)
    chat.page.set_viewport_size({"width": 900, "height": 1400})  # both turns, nothing fixed over
    chat.screenshot("chat_followup")
    chat.page.set_viewport_size({"width": 900, "height": 720})
    live = [chat.outer(0), chat.outer(1)]

    turns = chat.thread_json()["turns"]
    assert [turn["question"] for turn in turns] == [first, second]
    for index, message in enumerate(chat.messages().all()):
        metadata = turns[index]["message"]["metadata"]
        cited = [entry for entry in metadata["citations"] if entry["cited"]]
        items = message.locator(".unicite-source")
        assert items.count() == len(cited)
        markers = message.locator("sup.unicite-cite")
        for n in range(markers.count()):
            sup = markers.nth(n)
            number = int(sup.get_attribute("data-source") or 0)
            sup.locator("a").hover()
            tip = sup.locator(".unicite-tip")
            tip.wait_for(state="visible")
            title = metadata["citations"][number - 1]["title"]
            assert title in tip.inner_text()
    # The follow-up's [1] is its own first source, not the first turn's.
    follow_up = chat.messages().nth(1).locator("sup.unicite-cite").first
    assert "Παρθενώνας" in (follow_up.locator(".unicite-tip").text_content() or "")

    chat.page.reload()
    chat.wait_complete(2)
    assert [chat.outer(0), chat.outer(1)] == live
    assert chat.blocked == []
    chat.assert_inert()


def test_marker_opens_its_source_in_a_new_tab(chat: Chat, finished: str) -> None:
    chat.open(finished)
    document = history_of(chat, 0)
    href = document["metadata"]["citations"][1]["href"]
    link = chat.messages().first.locator("sup.unicite-cite a", has_text="[2]").first
    assert link.get_attribute("href") == href
    assert link.get_attribute("target") == "_blank"
    assert link.get_attribute("rel") == "noopener noreferrer"
    with chat.context.expect_page() as popup:
        link.click()
    popup.value.wait_for_load_state()
    chat.wait_blocked(1)
    assert chat.blocked == [href]
    assert chat.page.url.startswith(chat.base)
    chat.assert_inert()


def test_marker_without_a_link_focuses_its_source(chat: Chat, finished: str) -> None:
    chat.open(finished)
    message = chat.messages().nth(1)
    document = history_of(chat, 1)
    entry = next(e for e in document["metadata"]["citations"] if e["href"] is None)
    number = entry["number"]
    link = message.locator(f'sup.unicite-cite[data-source="{number}"] a').first
    assert link.get_attribute("target") is None
    link.click()
    focused = chat.page.evaluate("document.activeElement.id")
    assert focused == message.locator(f'.unicite-source[data-source="{number}"]').get_attribute(
        "id"
    )
    assert "Carnet de visite" in chat.page.evaluate("document.activeElement.textContent")
    assert chat.blocked == []
    chat.assert_inert()


def test_hover_shows_the_tooltip(chat: Chat, finished: str) -> None:
    chat.open(finished)
    message = chat.messages().first
    sup = message.locator("sup.unicite-cite").first
    tip = sup.locator(".unicite-tip")
    assert not tip.is_visible()
    sup.locator("a").hover()
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert "Tour Eiffel — Wikipédia" in text
    assert "wikipedia.org" in text
    assert tip.get_attribute("role") == "tooltip"
    assert sup.locator("a").get_attribute("aria-describedby") == tip.get_attribute("id")
    chat.screenshot("chat_tooltip")
    # The README's picture: the whole first answer, its Sources above the question box.
    chat.page.set_viewport_size({"width": 900, "height": 800})
    chat.page.mouse.move(0, 0)
    sup.locator("a").hover()
    tip.wait_for(state="visible")
    README_IMAGE.parent.mkdir(parents=True, exist_ok=True)
    chat.page.screenshot(path=str(README_IMAGE))

    chat.page.mouse.move(0, 0)
    tip.wait_for(state="hidden")
    third = message.locator("sup.unicite-cite").nth(2)
    third.locator("a").focus()
    third.locator(".unicite-tip").wait_for(state="visible")
    assert KINKAKU in third.locator(".unicite-tip").inner_text()
    assert chat.blocked == []


def test_verified_quote_is_highlighted(chat: Chat) -> None:
    chat.open()
    chat.ask(SLOW_Q)
    chat.wait_complete(1)
    sups = chat.messages().first.locator("sup.unicite-cite")
    verified = sups.nth(0).locator(".unicite-tip")
    assert verified.locator("mark").text_content() == "“Le viaduc culmine à 343 mètres.”"
    assert verified.locator(".unicite-verified-label").text_content() == "verified"
    unchecked = sups.nth(1).locator(".unicite-tip")
    assert unchecked.locator("mark").count() == 0
    assert unchecked.locator("q").text_content() == "高さ333m"
    assert "verified" not in (unchecked.text_content() or "")
    sups.nth(0).locator("a").hover()
    verified.wait_for(state="visible")
    assert "verified" in verified.inner_text()
    chat.assert_inert()


def test_markers_inside_bold_and_list_items(chat: Chat, finished: str) -> None:
    chat.open(finished)
    first, second = chat.messages().first, chat.messages().nth(1)
    bold = first.locator("strong sup.unicite-cite a")
    assert bold.all_inner_texts() == ["[1]"]
    strong = first.locator("strong", has=chat.page.locator("sup.unicite-cite"))
    assert strong.inner_text() == "inaugurée le 31 mars 1889 [1]"
    assert first.locator("ul > li sup.unicite-cite a").all_inner_texts() == ["[1]", "[2]", "[3]"]
    assert second.locator("ol > li sup.unicite-cite a").all_inner_texts() == ["[2]"] * 3
    assert second.locator("blockquote sup.unicite-cite a").all_inner_texts() == ["[3]"]
    assert second.locator("h2").all_inner_texts() == ["Le Parthénon", "La Sagrada Família"]
    assert second.locator("ol > li code").all_inner_texts() == ["2026"]
    chat.assert_inert()


def test_copy_gives_markers_and_sources(chat: Chat, finished: str) -> None:
    chat.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=chat.base)
    chat.open(finished)
    document = history_of(chat, 0)
    body = chat.messages().first.locator(".unicite-body p").last
    body.click(click_count=3)
    chat.page.keyboard.press("Control+C")
    copied = chat.page.evaluate("navigator.clipboard.readText()")
    head, _, sources = copied.partition("\n\nSources\n")
    assert head == document["content"]
    lines = sources.splitlines()
    assert lines[0] == ("[1] Tour Eiffel — Wikipédia — https://fr.wikipedia.org/wiki/Tour_Eiffel")
    assert lines[2].startswith(f"[3] {KINKAKU} — https://ja.wikipedia.org/wiki/%E9%B9%BF")
    assert len(lines) == 3
    # The same through a dispatched copy event, for the second turn (a source without a URL).
    copied = chat.page.evaluate(
        """() => {
          const data = new DataTransfer();
          const event = new ClipboardEvent('copy', {clipboardData: data, bubbles: true,
                                                    cancelable: true});
          document.querySelectorAll('.unicite-message')[1].dispatchEvent(event);
          return data.getData('text/plain');
        }"""
    )
    assert copied.endswith("\n[3] Carnet de visite (notes personnelles)")
    assert "[1] Παρθενώνας — Βικιπαίδεια — https://el.wikipedia.org/wiki/" in copied
    assert chat.blocked == []


def test_sources_without_markers_are_listed(chat: Chat) -> None:
    chat.open()
    chat.ask(FALLBACK_Q)
    chat.wait_complete(1)
    message = chat.messages().first
    assert message.locator("sup.unicite-cite").count() == 0
    assert "[7]" in message.locator(".unicite-body").inner_text()
    listing = message.locator(".unicite-sources.unicite-sources-fallback")
    assert listing.locator(".unicite-source").all_inner_texts() == [
        "Paris — Wikipédia wikipedia.org",
        "Atlas de France.pdf",
    ]
    assert chat.outer(0) == chat.rendered(history_of(chat, 0))
    chat.assert_inert()


def test_hostile_sources_stay_inert(chat: Chat) -> None:
    chat.open()
    chat.ask(HOSTILE_Q)
    chat.wait_complete(1)
    message = chat.messages().first
    chat.screenshot("chat_hostile", full_page=True)
    assert chat.page.locator(".unicite-question").inner_text() == HOSTILE_Q
    text = message.inner_text()
    assert "<img src=x onerror=alert(1)>" in text
    assert "\u202e" not in text
    assert "[lien](javascript:alert(6))" in text
    markers = message.locator("sup.unicite-cite")
    assert markers.count() == 4
    for index in range(3):  # the three sources without a safe link, and their tooltips
        sup = markers.nth(index)
        sup.locator("a").hover()
        sup.locator(".unicite-tip").wait_for(state="visible")
        if sup.locator("a").get_attribute("target") is None:
            sup.locator("a").click()
    for paragraph in message.locator("p").all():
        paragraph.click(position={"x": 1, "y": 1})
    chat.page.wait_for_timeout(100)
    assert chat.page.url.startswith(chat.base)
    assert chat.blocked == []  # not even the Markdown image's pixel
    chat.assert_inert()
    hrefs = message.locator("a[target=_blank]").evaluate_all(
        "links => links.map(a => a.getAttribute('href'))"
    )
    escaped = "https://example.org/%22%3E%3Cimg%20src=x%20onerror=alert(3)%3E"
    safe = "https://safe.example.com/page"
    assert sorted(hrefs) == sorted([escaped, safe, "https://evil.example/x", escaped, safe])


def test_a_reset_discards_the_draft(chat: Chat) -> None:
    chat.open()
    chat.ask(RETRY_Q)
    chat.wait_complete(1)
    states = chat.states()
    drafts = [n for n, state in enumerate(states) if state.startswith("Un brouillon")]
    assert drafts
    after = states[drafts[-1] + 1 :]
    assert after
    assert not any("brouillon" in state for state in after)
    assert_never_half_typed(states)
    body = chat.messages().first.locator(".unicite-body").inner_text()
    assert "brouillon" not in body
    assert body.startswith("Le viaduc de Millau mesure 343 m [1].")
    assert chat.outer(0) == chat.rendered(history_of(chat, 0))
    chat.assert_inert()


def test_broken_stream_shows_an_error_notice(chat: Chat) -> None:
    chat.open()
    chat.ask(BROKEN_Q)
    chat.page.wait_for_selector('.unicite-message[data-state="error"] .unicite-error')
    message = chat.messages().first
    assert "ConnectionError" in message.locator(".unicite-error").inner_text()
    assert message.locator(".unicite-body").inner_text().startswith("La réponse commence [1]")
    assert message.locator("a").count() == 0  # nothing links: the text is uncited
    chat.page.reload()
    chat.page.wait_for_selector('.unicite-message[data-state="error"] .unicite-error')
    assert chat.thread_json()["turns"][0]["status"] == "error"
    chat.assert_inert()
