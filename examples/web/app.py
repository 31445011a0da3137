"""A chat page with cited answers: live over SSE, the same after a reload, even mid-answer.

A FastAPI service answers questions about six monuments from a small built-in source set
(French, German, Japanese, Greek, Spanish), with a LangChain pipeline: the sources and the
question go to `unicite_langchain.cited_generation`, whose model is ``ChatOpenAI``. Offline by
default, the model replays a recorded conversation (``cassettes/examples/web/chat.yaml``,
vcrpy) and only the recorded questions can be asked; with ``OPENAI_API_KEY`` set it calls the
API live. Each answer runs in a `unicite.wire.starlette`-served `Relay`, so it keeps
generating when the page goes away, and a reloaded page picks it up where it is.

Start it with ``uv run python examples/web/app.py`` (``--port 8000``, ``--host``) and open the
URL it prints. ``UNICITE_WEB_DELAY`` (seconds per streamed delta; 0.05 when replaying) slows
the replayed answer so the streaming, and a reload in the middle of it, can be watched.

Routes: ``GET /`` the page; ``POST /api/threads/{thread_id}/messages`` with
``{"question": ...}`` starts a turn and returns its ``message_id``;
``GET /api/messages/{message_id}/stream`` its SSE stream (``unicite`` protocol, honouring
``Last-Event-ID``); ``GET /api/threads/{thread_id}`` every turn: the question and the history
document of its answer, or ``"status": "pending"`` while it is generated.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from unicite.testing import replay as replay_cassette
from unicite.wire import Relay, history
from unicite.wire.starlette import mount_client, relay_response
from unicite_langchain import cited_generation

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CASSETTE = ROOT / "cassettes/examples/web/chat.yaml"
MODEL = "gpt-4.1-mini"

DOCUMENTS = [
    Document(
        page_content=(
            "La tour Eiffel a été construite par l’entreprise de Gustave Eiffel pour "
            "l’Exposition universelle de 1889. Elle a été inaugurée le 31 mars 1889 et mesure "
            "330 mètres depuis 2022."
        ),
        metadata={
            "source": "https://fr.wikipedia.org/wiki/Tour_Eiffel",
            "title": "Tour Eiffel — Wikipédia",
            "description": "Inaugurée le 31 mars 1889, pour l’Exposition universelle.",
        },
    ),
    Document(
        page_content=(
            "Das Brandenburger Tor in Berlin wurde von 1788 bis 1791 nach Plänen von Carl "
            "Gotthard Langhans errichtet. Die Quadriga auf dem Tor schuf Johann Gottfried "
            "Schadow."
        ),
        metadata={
            "source": "https://de.wikipedia.org/wiki/Brandenburger_Tor",
            "title": "Brandenburger Tor – Wikipedia",
            "description": "Errichtet 1788–1791 nach Plänen von Carl Gotthard Langhans.",
        },
    ),
    Document(
        page_content=(
            "金閣寺（鹿苑寺）は1397年に足利義満によって建てられた。"  # noqa: RUF001
            "1950年に放火で焼失し、1955年に再建された。"
        ),
        metadata={
            "source": "https://ja.wikipedia.org/wiki/鹿苑寺",
            "title": "鹿苑寺（金閣寺）",  # noqa: RUF001
            "description": "1397年創建、1955年再建。",
        },
    ),
    Document(
        page_content=(
            "Ο Παρθενώνας χτίστηκε στην Ακρόπολη της Αθήνας μεταξύ 447 και 432 π.Χ., "  # noqa: RUF001
            "με αρχιτέκτονες τον Ικτίνο και τον Καλλικράτη."
        ),
        metadata={
            "source": "https://el.wikipedia.org/wiki/Παρθενώνας",
            "title": "Παρθενώνας — Βικιπαίδεια",
            "description": "Χτίστηκε μεταξύ 447 και 432 π.Χ.",  # noqa: RUF001
        },
    ),
    Document(
        page_content=(
            "Las obras de la Sagrada Família comenzaron en 1882; Antoni Gaudí asumió la "
            "dirección del proyecto en 1883 y trabajó en él hasta su muerte en 1926. Su "
            "finalización está prevista para 2026."
        ),
        metadata={
            "source": "https://es.wikipedia.org/wiki/Templo_Expiatorio_de_la_Sagrada_Familia",
            "title": "Sagrada Família — Wikipedia, la enciclopedia libre",
            "description": "Obras iniciadas en 1882; Gaudí, director desde 1883.",
        },
    ),
    Document(
        page_content=(
            "Carnet de visite, Barcelone : notre guide a rappelé que le chantier de la "
            "Sagrada Família dure depuis plus de 140 ans et que les tours centrales ont été "
            "achevées récemment."
        ),
        metadata={"title": "Carnet de visite (notes personnelles)"},
    ),
]
"""The built-in sources (the last one has no URL: its marker points at the Sources list)."""

QUESTIONS = [
    "Quand la tour Eiffel, la porte de Brandebourg et le Pavillon d’or ont-ils été construits ?",
    "Et le Parthénon, et la Sagrada Família ?",
]
"""The questions the recorded conversation answers (any question, live)."""

Pipeline = Callable[[str], Iterable[object]]
"""A question to a cited stream: str deltas, then the `CitedAnswer` (or `CitedGeneration`)."""


class QuestionRejected(ValueError):
    """The pipeline cannot answer this question (offline, it was not recorded)."""


def question_of(body: object) -> str:
    """The question of a Chat Completions request body: the user message's first part."""
    try:
        data = json.loads(body) if isinstance(body, (str, bytes)) else body
        messages = data["messages"]  # type: ignore[index]
        user = [m["content"] for m in messages if m.get("role") == "user"][-1]
    except (ValueError, TypeError, KeyError, IndexError):
        return ""
    return str(user).split("\n\nSources:", 1)[0].strip()


def replaying() -> bool:
    """Whether the model replays the recorded conversation (no ``OPENAI_API_KEY``)."""
    return not os.environ.get("OPENAI_API_KEY")


def replay() -> AbstractContextManager[Any]:
    """Play the recorded conversation for every OpenAI request made while it is entered.

    Requests are matched by their question, and may be played any number of times; requests
    to this machine (the page, the tests) pass through.
    """

    def same_question(recorded: Any, made: Any) -> None:
        if question_of(recorded.body) != question_of(made.body):
            raise AssertionError("another question")

    try:
        return replay_cassette(
            CASSETTE,
            match_on=["method", "host", "path", same_question],
            allow_playback_repeats=True,
            ignore_localhost=True,
        )
    except ImportError as err:
        sys.exit(f"{err}, or set OPENAI_API_KEY to call the API live")


def langchain_pipeline(llm: Any = None, *, offline: bool | None = None) -> Pipeline:
    """The LangChain pipeline: every built-in source and the question, cited by the model.

    Args:
        llm: The chat model; ``ChatOpenAI`` by default.
        offline: Whether the default model replays the recorded conversation (its key is then
            a placeholder, and only the recorded questions are taken); by default when
            ``OPENAI_API_KEY`` is not set.
    """
    from langchain_openai import ChatOpenAI

    if offline is None:
        offline = replaying()
    offline = offline and llm is None
    if llm is None:
        llm = ChatOpenAI(model=MODEL, temperature=0, api_key="offline-replay" if offline else None)
    chain: Runnable[str, Any] = {
        "question": RunnablePassthrough(),
        "documents": RunnableLambda(lambda _: DOCUMENTS),
    } | cited_generation(llm)
    recorded = {_normal(q): q for q in QUESTIONS}

    def run(question: str) -> Iterator[object]:
        if offline:
            if _normal(question) not in recorded:
                raise QuestionRejected(
                    "Offline, only the recorded questions are answered (set OPENAI_API_KEY to "
                    "ask anything): " + " / ".join(QUESTIONS)
                )
            question = recorded[_normal(question)]  # as recorded, typography included
        return chain.stream(question)

    return run


def _normal(question: str) -> str:
    return " ".join(question.replace("'", "’").split()).casefold()


def paced(stream: Iterable[object], delay: float) -> Iterator[object]:
    """The stream, each text delta held back ``delay`` seconds (to watch it, or to test it)."""
    for item in stream:
        if delay > 0 and isinstance(item, str):
            time.sleep(delay)
        yield item


@dataclass
class Turn:
    """One question and the message answering it."""

    question: str
    message_id: str
    relay: Relay

    def status(self) -> dict[str, Any]:
        """The turn as the thread listing shows it."""
        out: dict[str, Any] = {"message_id": self.message_id, "question": self.question}
        answer = self.relay.answer
        if answer is not None:
            out["status"] = "complete"
            out["message"] = history(answer, message_id=self.message_id)
        elif self.relay.done:
            error = self.relay.error
            out["status"] = "error"
            out["error"] = type(error).__name__ if error is not None else "no answer"
        else:
            out["status"] = "pending"
            out["stream_url"] = f"/api/messages/{self.message_id}/stream"
        return out


@dataclass
class Store:
    """Threads and their turns, in memory."""

    threads: dict[str, list[Turn]] = field(default_factory=dict)
    messages: dict[str, Turn] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, thread_id: str, turn: Turn) -> None:
        """Record a new turn of a thread."""
        with self.lock:
            self.threads.setdefault(thread_id, []).append(turn)
            self.messages[turn.message_id] = turn

    def turns(self, thread_id: str) -> list[Turn]:
        """The turns of a thread, oldest first."""
        with self.lock:
            return list(self.threads.get(thread_id, ()))


_THREAD_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)


def _json(data: object, status: int = 200) -> Response:
    return Response(
        json.dumps(data, ensure_ascii=True), status_code=status, media_type="application/json"
    )


def create_app(
    pipeline: Pipeline | None = None,
    *,
    delay: float | None = None,
    replay_cassette: bool | None = None,
) -> FastAPI:
    """The chat service.

    Args:
        pipeline: Answers a question with a cited stream; the LangChain pipeline by default.
        delay: Seconds each text delta is held back; ``UNICITE_WEB_DELAY`` by default, else
            0.05 when replaying and 0 live. It is ``app.state.delay``, read by every new turn.
        replay_cassette: Replay the recorded conversation for the service's lifetime; by
            default when ``OPENAI_API_KEY`` is not set.
    """
    offline = replaying() if replay_cassette is None else replay_cassette
    if delay is None:
        delay = float(os.environ.get("UNICITE_WEB_DELAY") or (0.05 if offline else 0))
    answer = pipeline if pipeline is not None else langchain_pipeline(offline=offline)
    store = Store()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        with replay() if offline else nullcontext():
            yield

    app = FastAPI(title="unicite chat", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.store = store
    app.state.delay = delay
    mount_client(app, "/unicite")

    @app.middleware("http")
    async def secure(request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        response.headers.setdefault("Content-Security-Policy", _CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(HERE / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/page.js", include_in_schema=False)
    def script() -> FileResponse:
        return FileResponse(HERE / "page.js", media_type="text/javascript")

    @app.get("/page.css", include_in_schema=False)
    def style() -> FileResponse:
        return FileResponse(HERE / "page.css", media_type="text/css")

    @app.get("/api/config")
    def config() -> Response:
        return _json({"replay": offline, "questions": QUESTIONS if offline else []})

    @app.post("/api/threads/{thread_id}/messages")
    async def ask(thread_id: str, request: Request) -> Response:
        if not _THREAD_ID.fullmatch(thread_id):
            return _json({"detail": "bad thread id"}, 404)
        try:
            body = await request.json()
        except ValueError:
            body = None
        question = body.get("question") if isinstance(body, dict) else None
        if not isinstance(question, str) or not question.strip():
            return _json({"detail": "ask a question"}, 422)
        question = question.strip()[:2000]
        try:
            stream = answer(question)
        except QuestionRejected as rejected:
            return _json({"detail": str(rejected)}, 422)
        message_id = f"m-{secrets.token_hex(6)}"
        relay = Relay(paced(stream, app.state.delay), message_id=message_id)
        store.add(thread_id, Turn(question, message_id, relay))
        return _json({"message_id": message_id, "stream_url": f"/api/messages/{message_id}/stream"})

    @app.get("/api/messages/{message_id}/stream")
    def stream(message_id: str, request: Request) -> Response:
        turn = store.messages.get(message_id)
        if turn is None:
            return _json({"detail": "no such message"}, 404)
        return relay_response(turn.relay, request)

    @app.get("/api/messages/{message_id}")
    def message(message_id: str) -> Response:
        turn = store.messages.get(message_id)
        if turn is None:
            return _json({"detail": "no such message"}, 404)
        return _json(turn.status())

    @app.get("/api/threads/{thread_id}")
    def thread(thread_id: str) -> Response:
        if not _THREAD_ID.fullmatch(thread_id):
            return _json({"detail": "bad thread id"}, 404)
        turns = [turn.status() for turn in store.turns(thread_id)]
        return _json({"thread_id": thread_id, "turns": turns})

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A chat page with cited answers.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)

    import uvicorn

    app = create_app()
    mode = "replaying cassettes/examples/web/chat.yaml" if replaying() else "live (OpenAI)"
    print(f"unicite chat, {mode}: http://{args.host}:{args.port}/", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
