"""A chat service with cited answers: live over SSE, the same after a reload, on any worker.

A FastAPI service answers questions about six monuments from a small built-in source set
(French, German, Japanese, Greek, Spanish). The model is LangChain's ``ChatOpenAI``, asked
through `unicite.stream_cited`, whose text streams with its final citation numbers. Offline by
default, the model replays a recorded conversation (``cassettes/examples/web/chat.yaml``,
vcrpy) and only the recorded questions can be asked; with ``OPENAI_API_KEY`` set it calls the
API live.

Each answer runs in a `unicite.wire.Relay`: it keeps generating when the page goes away, a
reloaded page (on any worker) picks it up where it is, and a stop button cancels it, keeping
what it generated, cited. Sessions and their turns last in a `unicite.wire.HistoryStore`.

Where things are kept, from the environment:

- ``UNICITE_REDIS_URL`` (``redis://localhost:6379/0``): relays in Redis, shared by every
  worker (`unicite.wire.redis.RedisRelayStore`); without it, in this process's memory;
- ``UNICITE_DATABASE_URL`` (``postgresql://...``): the history in PostgreSQL
  (`unicite.wire.postgres.PostgresHistoryStore`); else ``UNICITE_HISTORY`` names a SQLite file
  (default: ``unicite-chat/history.sqlite3`` in the user's data folder).

Start it with ``uv run python examples/web/app.py`` (``--port 8000``, ``--host``,
``--workers N``, which needs ``UNICITE_REDIS_URL``) and open the URL it prints.
``UNICITE_WEB_DELAY`` (seconds per streamed delta; 0.05 when replaying) slows the replayed
answer so the streaming, a reload in the middle of it, and the stop button can be watched.

Routes: ``GET /`` the page; ``POST /api/threads/{thread_id}/messages`` with
``{"question": ...}`` starts a turn and returns its ``message_id``;
``GET /api/messages/{message_id}/stream`` its SSE stream (``unicite`` protocol, honouring
``Last-Event-ID``); ``POST /api/messages/{message_id}/cancel`` stops it;
``GET /api/threads/{thread_id}`` every turn for the page; ``GET /api/sessions/{id}/history``
the same session in seed 002's REST shape (``final_output``, ``metadata.citations``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, Response
from langchain_core.documents import Document

import unicite
from unicite.testing import replay as replay_cassette
from unicite.wire import (
    HistoryStore,
    MemoryRelayStore,
    Relay,
    RelayFollower,
    RelayStore,
    SQLiteHistoryStore,
    Turn,
)
from unicite.wire.starlette import mount_client, relay_response

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


def sources_of(documents: Iterable[Document]) -> list[unicite.Source]:
    """The documents as the sources the model is shown, in this order."""
    return [
        unicite.Source(
            url=doc.metadata.get("source"),
            title=doc.metadata.get("title"),
            snippet=doc.metadata.get("description"),
            content=doc.page_content,
            kind="web" if doc.metadata.get("source") else "document",
        )
        for doc in documents
    ]


SOURCES = sources_of(DOCUMENTS)


def langchain_pipeline(llm: Any = None, *, offline: bool | None = None) -> Pipeline:
    """The pipeline: every built-in source and the question, cited by a LangChain chat model.

    Each answer is a `unicite.StreamedGeneration`: text deltas whose markers carry their final
    numbers, then the cited result; stopped early, it cites what it generated so far.

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
    recorded = {_normal(q): q for q in QUESTIONS}

    def run(question: str) -> Iterable[object]:
        if offline:
            if _normal(question) not in recorded:
                raise QuestionRejected(
                    "Offline, only the recorded questions are answered (set OPENAI_API_KEY to "
                    "ask anything): " + " / ".join(QUESTIONS)
                )
            question = recorded[_normal(question)]  # as recorded, typography included
        return unicite.stream_cited(llm, question, SOURCES)

    return run


def _normal(question: str) -> str:
    return " ".join(question.replace("'", "’").split()).casefold()


class Paced(Iterator[object]):
    """A cited stream, each text delta held back ``delay`` seconds (to watch it, or to test it).

    A failure of the stream is recorded (``on_error``) before it reaches the relay, and a
    stream that can cite what it generated so far (`unicite.StreamedGeneration`) still can.
    """

    def __init__(
        self,
        stream: Iterable[object],
        delay: float,
        on_error: Callable[[BaseException], object] | None = None,
    ) -> None:
        self.stream = stream
        self.items = iter(stream)
        self.delay = delay
        self.on_error = on_error

    def __iter__(self) -> Paced:
        return self

    def __next__(self) -> object:
        try:
            item = next(self.items)
        except StopIteration:
            raise
        except Exception as error:
            if self.on_error is not None:
                self.on_error(error)
            raise
        if self.delay > 0 and isinstance(item, str):
            time.sleep(self.delay)
        return item

    def close(self) -> None:
        """Stop the stream (a cancelled answer): the model's stream is closed."""
        close = getattr(self.items, "close", None)
        if callable(close):
            close()

    def partial_answer(self) -> unicite.CitedAnswer | None:
        """What the stream generated so far, cited, when it can tell (else None)."""
        partial = getattr(self.stream, "partial_answer", None)
        return partial() if callable(partial) else None


def turn_view(turn: Turn, relays: RelayStore, history: HistoryStore) -> dict[str, Any]:
    """A turn as the page lists it: its history document once finished, else its stream.

    A pending turn whose relay is gone (its worker was stopped or killed mid-answer) is marked
    failed here, so that every later reload says so too.
    """
    if turn.status == "pending":
        follower = Relay.follow(turn.message_id, store=relays)
        if follower is None or follower.status == "failed":
            error = "the answer broke off" if follower is None else follower.error
            turn = history.fail_turn(turn.message_id, error or "the answer broke off") or turn
        elif follower.answer is not None:
            turn = history.finish_turn(turn.message_id, follower.answer) or turn
    out: dict[str, Any] = {
        "message_id": turn.message_id,
        "question": turn.question,
        "status": turn.status,
    }
    if turn.status in ("complete", "stopped"):
        out["message"] = turn.message
    elif turn.status == "failed":
        out["status"] = "error"
        out["error"] = turn.error or "the answer broke off"
    else:
        out["stream_url"] = f"/api/messages/{turn.message_id}/stream"
    return out


def history_from_env() -> HistoryStore:
    """The history store the environment names (see the module docstring)."""
    dsn = os.environ.get("UNICITE_DATABASE_URL")
    if dsn:
        from unicite.wire.postgres import PostgresHistoryStore

        return PostgresHistoryStore(dsn)
    path = os.environ.get("UNICITE_HISTORY")
    if not path:
        data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        path = str(data / "unicite-chat" / "history.sqlite3")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return SQLiteHistoryStore(path)


def relays_from_env() -> RelayStore:
    """The relay store the environment names (see the module docstring)."""
    url = os.environ.get("UNICITE_REDIS_URL")
    if url:
        from unicite.wire.redis import RedisRelayStore

        return RedisRelayStore(url)
    return MemoryRelayStore()


_THREAD_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MESSAGE_ID = re.compile(r"m-[0-9a-f]{12}")
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
    history: HistoryStore | None = None,
    relays: RelayStore | None = None,
) -> FastAPI:
    """The chat service.

    Args:
        pipeline: Answers a question with a cited stream; the LangChain pipeline by default.
        delay: Seconds each text delta is held back; ``UNICITE_WEB_DELAY`` by default, else
            0.05 when replaying and 0 live. It is ``app.state.delay``, read by every new turn.
        replay_cassette: Replay the recorded conversation for the service's lifetime; by
            default when ``OPENAI_API_KEY`` is not set.
        history: Where sessions and turns are kept; see `history_from_env`.
        relays: Where answers are relayed for every worker; see `relays_from_env`.
    """
    offline = replaying() if replay_cassette is None else replay_cassette
    if delay is None:
        delay = float(os.environ.get("UNICITE_WEB_DELAY") or (0.05 if offline else 0))
    answer = pipeline if pipeline is not None else langchain_pipeline(offline=offline)
    store = history if history is not None else history_from_env()
    shared = relays if relays is not None else relays_from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        with replay() if offline else nullcontext():
            yield

    app = FastAPI(title="unicite chat", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.history = store
    app.state.relays = shared
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
    @app.post("/api/sessions/{thread_id}/messages")
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
        store.add_turn(thread_id, question, message_id=message_id)

        def failed(error: BaseException) -> None:
            store.fail_turn(message_id, error)

        Relay(
            Paced(stream, app.state.delay, on_error=failed),
            message_id=message_id,
            store=shared,
            on_answer=lambda cited: store.finish_turn(message_id, cited),
        )
        return _json({"message_id": message_id, "stream_url": f"/api/messages/{message_id}/stream"})

    def _follow(message_id: str) -> RelayFollower | None:
        if not _MESSAGE_ID.fullmatch(message_id):
            return None
        return Relay.follow(message_id, store=shared)

    @app.get("/api/messages/{message_id}/stream")
    def stream(message_id: str, request: Request) -> Response:
        follower = _follow(message_id)
        if follower is None:
            return _json({"detail": "no such message"}, 404)
        return relay_response(follower, request)

    @app.post("/api/messages/{message_id}/cancel")
    def cancel(message_id: str) -> Response:
        follower = _follow(message_id)
        if follower is None:
            return _json({"detail": "no such message"}, 404)
        return _json({"message_id": message_id, "cancelled": follower.cancel()})

    @app.get("/api/messages/{message_id}")
    def message(message_id: str) -> Response:
        turn = store.turn(message_id) if _MESSAGE_ID.fullmatch(message_id) else None
        if turn is None:
            return _json({"detail": "no such message"}, 404)
        return _json(turn_view(turn, shared, store))

    @app.get("/api/threads/{thread_id}")
    def thread(thread_id: str) -> Response:
        if not _THREAD_ID.fullmatch(thread_id):
            return _json({"detail": "bad thread id"}, 404)
        turns = [turn_view(turn, shared, store) for turn in store.turns(thread_id)]
        return _json({"thread_id": thread_id, "turns": turns})

    @app.get("/api/sessions/{session_id}/history")
    def session_history(session_id: str) -> Response:
        if not _THREAD_ID.fullmatch(session_id):
            return _json({"detail": "bad session id"}, 404)
        for turn in store.turns(session_id):
            turn_view(turn, shared, store)  # a turn whose worker died is failed first
        found = store.session_history(session_id)
        if found is None:
            return _json({"detail": "no such session"}, 404)
        return _json(found)

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A chat page with cited answers.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--workers", type=int, default=1, help="worker processes (needs UNICITE_REDIS_URL)"
    )
    args = parser.parse_args(argv)

    import uvicorn

    if args.workers > 1 and not os.environ.get("UNICITE_REDIS_URL"):
        sys.exit("--workers needs UNICITE_REDIS_URL: the workers share their answers in Redis")
    mode = "replaying cassettes/examples/web/chat.yaml" if replaying() else "live (OpenAI)"
    print(f"unicite chat, {mode}: http://{args.host}:{args.port}/", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        if args.workers > 1:
            uvicorn.run(
                "app:create_app",
                factory=True,
                app_dir=str(HERE),
                host=args.host,
                port=args.port,
                workers=args.workers,
                log_level="warning",
            )
        else:
            uvicorn.run(create_app(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
