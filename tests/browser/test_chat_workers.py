"""The chat example served by several workers sharing Redis: one answer, the same on each.

Two (and for the kill test three) server processes of examples/web/app.py run on their own
ports, sharing a real ``redis-server`` (relays) and one SQLite file (the history), as
``uvicorn --workers`` or replicas behind a load balancer would. A page on one worker asks; a
page on the other follows, reloads, stops the answer; Chromium shows the same message on both,
live and after a reload. A worker killed with SIGKILL mid-answer leaves no reader waiting: the
others end the stream with "the answer broke off" and the history says the turn failed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _chromium import CHROMIUM
from _servers import REDIS_SERVER, ChatWorker, redis_server

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)
if REDIS_SERVER is None:
    pytest.skip(
        "redis-server is not installed (apt-get install redis-server)", allow_module_level=True
    )
pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytest.importorskip("redis")
pytest.importorskip("vcr")
pytest.importorskip("langchain_openai")
httpx = pytest.importorskip("httpx")

MESSAGE = ".unicite-message"
DELAY = "0.06"
"""Seconds per streamed delta: time enough to reload and stop in the middle of an answer."""


class Workers:
    def __init__(self, redis_url: str, folder: Path) -> None:
        self.env = {
            "UNICITE_REDIS_URL": redis_url,
            "UNICITE_HISTORY": str(folder / "history.sqlite3"),
            "UNICITE_WEB_DELAY": DELAY,
        }
        self.started: list[ChatWorker] = []

    def start(self) -> ChatWorker:
        worker = ChatWorker(self.env)
        self.started.append(worker)
        return worker

    def stop(self) -> None:
        for worker in self.started:
            worker.stop()


@pytest.fixture(scope="module")
def workers(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ChatWorker, ChatWorker, Workers]]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        pool = Workers(url, tmp_path_factory.mktemp("chat"))
        try:
            yield pool.start(), pool.start(), pool
        finally:
            pool.stop()


@pytest.fixture(scope="module")
def questions(workers: tuple[ChatWorker, ChatWorker, Workers]) -> list[str]:
    config = httpx.get(workers[0].base + "/api/config", timeout=5).json()
    assert config["replay"] is True
    return list(config["questions"])


class Page:
    """A page of the chat on one worker, for one thread."""

    def __init__(self, browser: Any, worker: ChatWorker, thread: str) -> None:
        self.base = worker.base
        self.thread = thread
        self.context = browser.new_context(viewport={"width": 900, "height": 720}, bypass_csp=True)
        self.page = self.context.new_page()

    def open(self) -> None:
        self.page.goto(f"{self.base}/?thread={self.thread}")
        self.page.wait_for_selector('body[data-ready="true"]')

    def ask(self, question: str) -> None:
        self.page.fill("#question", question)
        self.page.press("#question", "Enter")

    def wait_text(self, length: int) -> None:
        """Until the streaming message shows at least ``length`` characters."""
        self.page.wait_for_function(
            f"(document.querySelector('{MESSAGE} .unicite-body')?.textContent ?? '').length"
            f" >= {length}",
            timeout=20_000,
        )

    def wait_state(self, state: str) -> None:
        self.page.wait_for_selector(f'{MESSAGE}[data-state="{state}"]', timeout=30_000)

    def outer(self) -> str:
        return str(self.page.locator(MESSAGE).first.evaluate("e => e.outerHTML"))

    def close(self) -> None:
        self.context.close()


def test_an_answer_started_on_one_worker_is_the_same_on_the_other_live_and_after_reload(
    browser: Any, workers: tuple[ChatWorker, ChatWorker, Workers], questions: list[str]
) -> None:
    one, other, _ = workers
    thread = f"t-{time.monotonic_ns()}"
    asker, follower = Page(browser, one, thread), Page(browser, other, thread)
    try:
        asker.open()
        asker.ask(questions[0])
        asker.wait_text(40)
        # The other worker's page lists the pending turn and follows its stream from Redis.
        follower.open()
        assert follower.page.locator(f'{MESSAGE}[data-state="streaming"]').count() == 1
        asker.wait_state("complete")
        follower.wait_state("complete")
        live = asker.outer()
        assert follower.outer() == live
        # Reloaded on the other worker: the history document, rendered as the live one was.
        follower.open()
        follower.wait_state("complete")
        assert follower.outer() == live
        history = httpx.get(f"{other.base}/api/sessions/{thread}/history", timeout=5).json()
        [turn] = history["turns"]
        assert turn["status"] == "complete"
        assert turn["metadata"]["citations"]
        assert turn["final_output"] == turn["message"]["content"]
    finally:
        asker.close()
        follower.close()


def test_an_answer_is_stopped_from_the_other_worker_and_kept_as_far_as_it_went(
    browser: Any, workers: tuple[ChatWorker, ChatWorker, Workers], questions: list[str]
) -> None:
    one, other, _ = workers
    thread = f"t-{time.monotonic_ns()}"
    asker, stopper = Page(browser, one, thread), Page(browser, other, thread)
    try:
        asker.open()
        asker.ask(questions[1])
        asker.wait_text(60)
        stopper.open()
        stopper.page.click(".unicite-stop")
        asker.wait_state("stopped")
        stopper.wait_state("stopped")
        stopped = asker.outer()
        assert stopper.outer() == stopped
        assert "unicite-stopped" in stopped
        asker.open()  # reloaded where it started: the stopped turn from the history
        asker.wait_state("stopped")
        assert asker.outer() == stopped
        turns = httpx.get(f"{one.base}/api/threads/{thread}", timeout=5).json()["turns"]
        assert [t["status"] for t in turns] == ["stopped"]
        full = httpx.get(f"{one.base}/api/sessions/{thread}/history", timeout=5).json()
        assert full["turns"][0]["final_output"] == turns[0]["message"]["content"]
    finally:
        asker.close()
        stopper.close()


def test_a_worker_killed_mid_answer_leaves_no_reader_waiting(
    workers: tuple[ChatWorker, ChatWorker, Workers], questions: list[str]
) -> None:
    _, other, pool = workers
    doomed = pool.start()
    thread = f"t-{time.monotonic_ns()}"
    asked = httpx.post(
        f"{doomed.base}/api/threads/{thread}/messages", json={"question": questions[0]}, timeout=5
    ).json()
    events: list[tuple[str, str]] = []
    with httpx.stream(
        "GET", f"{other.base}{asked['stream_url']}", timeout=httpx.Timeout(5, read=30)
    ) as stream:
        event = ""
        killed_at = None
        for line in stream.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append((event, line[5:].strip()))
                if killed_at is None and len(events) >= 5:
                    doomed.kill()
                    killed_at = time.monotonic()
        assert killed_at is not None
        ended_after = time.monotonic() - killed_at
    # The producer's heartbeat stops; within its bound the reader is told and let go.
    assert ended_after < 20
    kind, data = events[-1]
    assert kind == "thread.message.error"
    assert "broke off" in json.loads(data)["error"]
    turns = httpx.get(f"{other.base}/api/threads/{thread}", timeout=5).json()["turns"]
    assert [t["status"] for t in turns] == ["error"]
    history = httpx.get(f"{other.base}/api/sessions/{thread}/history", timeout=5).json()
    assert history["turns"][0]["status"] == "failed"
