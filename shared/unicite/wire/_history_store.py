"""A history that lasts: chat sessions, their turns, and the history document of each answer.

A chat service keeps, for every question, the turn that answers it: the question, the message
id its stream carried, and — once the answer is known — `unicite.wire.history` of the answer,
the very data of the ``thread.message.completed`` event. A page reloaded later reads the
session back in the REST shape chat front ends read (`HistoryStore.session_history`), and
shows what the live stream showed. `HistoryStore` is the contract; `SQLiteHistoryStore`
keeps it in one file (the embedded default), `unicite.wire.postgres.PostgresHistoryStore` in
PostgreSQL.
"""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from unicite.exceptions import UsageError
from unicite.model import CitedAnswer
from unicite.wire._frames import dumps
from unicite.wire._history import from_document
from unicite.wire._unicite import completed_data

__all__ = [
    "SCHEMA_VERSION",
    "HistoryStore",
    "SQLHistoryStore",
    "SQLiteHistoryStore",
    "Session",
    "Turn",
    "TurnStatus",
]

SCHEMA_VERSION = 1
"""Version of the stores' tables; a store refuses a database written by a newer one."""

TurnStatus = Literal["pending", "complete", "stopped", "failed"]
"""Where a turn is: answering, answered, stopped by the user (a partial answer), or failed."""

_FINISHED: tuple[TurnStatus, ...] = ("complete", "stopped")

_T = TypeVar("_T")
_S = TypeVar("_S", bound="SQLHistoryStore")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    """A moment as UTC ISO 8601 with microseconds (``2026-01-31T09:30:00.000000+00:00``)."""
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class Session:
    """A conversation: the turns asked in it share its id."""

    session_id: str
    created_at: str
    """When it was created (UTC ISO 8601)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """What the service keeps with it (a title, a user id): given when it was created."""


@dataclass(frozen=True)
class Turn:
    """One question of a session and the message answering it."""

    session_id: str
    turn_id: int
    """Its position in the session: 1 for the first question, 2 for the next, ..."""
    message_id: str
    """The id of the answering message, carried by its stream's frames."""
    question: str
    status: TurnStatus
    created_at: str
    """When the question was asked (UTC ISO 8601)."""
    finished_at: str | None = None
    """When it completed, stopped or failed (UTC ISO 8601); None while pending."""
    message: dict[str, Any] | None = None
    """`unicite.wire.history` of the answer (complete or stopped turns), else None."""
    error: str | None = None
    """What went wrong, for a failed turn."""

    @property
    def answer(self) -> CitedAnswer | None:
        """The answer the history document describes (to send it in another protocol)."""
        return None if self.message is None else from_document(self.message)

    def to_dict(self) -> dict[str, Any]:
        """The turn as `HistoryStore.session_history` lists it (JSON-ready).

        ``final_output`` is the answer's content with its ``[n]`` markers and ``metadata`` the
        document's metadata (``metadata.citations[n - 1]`` is the source ``[n]`` opens), both
        exactly as the ``thread.message.completed`` event carried them; ``message`` is the
        whole document. A turn without an answer has ``final_output`` None, no citations and
        ``message`` None.
        """
        message = copy.deepcopy(self.message)
        return {
            "turn_id": self.turn_id,
            "message_id": self.message_id,
            "question": self.question,
            "status": self.status,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "final_output": None if message is None else message.get("content"),
            "metadata": {"citations": []} if message is None else message.get("metadata"),
            "message": message,
            "error": self.error,
        }


def session_history(session: Session, turns: Sequence[Turn]) -> dict[str, Any]:
    """The ``GET /sessions/{id}/history`` body of a session and its turns."""
    return {
        "session_id": session.session_id,
        "created_at": session.created_at,
        "metadata": copy.deepcopy(session.metadata),
        "turns": [turn.to_dict() for turn in turns],
    }


@runtime_checkable
class HistoryStore(Protocol):
    """Sessions and their turns, kept where every worker of a service reads them.

    A service adds a turn when a question comes in, finishes it with the answer (in the
    stream's ``on_answer``) or fails it when the stream breaks off, and serves
    `session_history` to a reloaded page. Every method is safe to call from many threads
    and processes at once; they block (call them from a FastAPI ``def`` endpoint, or through
    ``asyncio.to_thread`` in async code).

    Unknown ids are not errors: `get_session`, `session_history`, `turn`, `finish_turn` and
    `fail_turn` return None, `turns` an empty list, `delete_session` False.
    """

    def session(
        self, session_id: str | None = None, *, metadata: Mapping[str, Any] | None = None
    ) -> Session:
        """The session ``session_id``, created (with ``metadata``) if it does not exist.

        Without an id a new session gets a random one. An existing session keeps the
        metadata it was created with.

        Raises:
            UsageError: The id is not a non-empty ``str``, or the metadata is not JSON.
        """
        ...

    def get_session(self, session_id: str) -> Session | None:
        """The session, or None when there is none with that id."""
        ...

    def add_turn(self, session_id: str, question: str, *, message_id: str | None = None) -> Turn:
        """A new pending turn at the end of the session (created if it does not exist).

        Args:
            session_id: The session asked in.
            question: The user's question.
            message_id: The id the answer's stream carries; a random one when None.

        Returns:
            The turn, whose ``turn_id`` is its position in the session (1, 2, ...).

        Raises:
            UsageError: An id is not a non-empty ``str``, or ``message_id`` already names
                a turn.
        """
        ...

    def finish_turn(self, message_id: str, answer: CitedAnswer) -> Turn | None:
        """Keep the answer of a pending turn: complete, or stopped when the user stopped it.

        The turn keeps ``unicite.wire.history(answer, message_id=message_id)``; its status is
        ``"stopped"`` when ``answer.extras.get("stopped")`` is true, else ``"complete"``.
        Finishing a turn again with the same answer changes nothing; a finished turn never
        goes back to pending.

        Returns:
            The finished turn; None when no turn has that message id (its session was
            deleted while the answer streamed).

        Raises:
            UsageError: ``answer`` is not a `CitedAnswer`, or the turn already finished with
                another answer or failed.
        """
        ...

    def fail_turn(self, message_id: str, error: str | BaseException) -> Turn | None:
        """Mark a pending turn failed, with a note of what went wrong.

        An exception is noted by its type's name only (as the stream's error frame names
        it), since the history is shown to users; pass a ``str`` to say more. A turn that
        already finished keeps its answer, and a failed one its first note.

        Returns:
            The turn as it now is; None when no turn has that message id.
        """
        ...

    def turn(self, message_id: str) -> Turn | None:
        """The turn answered by that message, or None."""
        ...

    def turns(self, session_id: str) -> list[Turn]:
        """The session's turns, oldest first (an empty list for an unknown session)."""
        ...

    def delete_session(self, session_id: str) -> bool:
        """Delete the session and its turns; False when there was none."""
        ...

    def session_history(self, session_id: str) -> dict[str, Any] | None:
        """The REST form of a session (``GET /sessions/{id}/history``), or None if unknown.

        ``{"session_id", "created_at", "metadata", "turns": [...]}`` with each turn as
        `Turn.to_dict` gives it: ``turn_id``, ``message_id``, ``question``, ``status``,
        ``created_at``, ``finished_at``, ``final_output`` (the content with its ``[n]``
        markers), ``metadata`` (with ``citations``), ``message`` (the whole history
        document) and ``error``; ``final_output`` and ``metadata`` are exactly what the live
        ``thread.message.completed`` event carried.
        """
        ...

    def close(self) -> None:
        """Release the store's connections (a later call opens new ones)."""
        ...


# --- One implementation over SQL, for SQLite and PostgreSQL --------------------------------------


class Database(Protocol):
    """What a store's SQL runs on, inside one transaction (``?`` placeholders)."""

    def run(self, sql: str, params: Sequence[object] = ()) -> int:
        """Execute a statement; the number of rows it changed."""
        ...

    def one(self, sql: str, params: Sequence[object] = ()) -> tuple[Any, ...] | None:
        """The first row of a query, or None."""
        ...

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Every row of a query."""
        ...


_TURN_COLUMNS = (
    "session_id, position, message_id, question, status, created_at, finished_at, document, error"
)


def _check_id(name: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise UsageError(f"{name} must be a non-empty str, got {value!r}")
    return value


def _json_object(name: str, value: Mapping[str, Any] | None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(f"{name} must be a dict, got {type(value).__name__}")
    try:
        return dict(json.loads(dumps(dict(value))))
    except (TypeError, ValueError) as error:
        raise UsageError(f"{name} must hold JSON values only: {error}") from None


def _written(value: _T | None) -> _T:
    """A row this transaction wrote (or locked), read back."""
    if value is None:
        raise RuntimeError("a row written in this transaction could not be read back")
    return value


def _error_note(error: object) -> str:
    if isinstance(error, BaseException):
        return type(error).__name__
    if isinstance(error, str):
        return error
    raise UsageError(f"error must be a str or an exception, got {type(error).__name__}")


class SQLHistoryStore(ABC):
    """`HistoryStore` over two SQL tables; a subclass runs the transactions and maps types.

    ``unicite_sessions`` (``session_id`` primary key, ``created_at``, ``metadata``, and
    ``turns``: how many turns it was given, so the next position is taken under the row's
    lock) and ``unicite_turns`` (``message_id`` primary key, ``session_id`` and ``position``
    unique together, the question, status, history document, error note and timestamps);
    ``unicite_schema`` holds the version of both.
    """

    # --- what a database supplies ---------------------------------------------------------

    @abstractmethod
    def _write(self, work: Callable[[Database], _T]) -> _T:
        """Run ``work`` in a transaction that writes (serialized with other writers)."""

    @abstractmethod
    def _read(self, work: Callable[[Database], _T]) -> _T:
        """Run ``work`` in a transaction that reads one consistent state."""

    @abstractmethod
    def _json_param(self, value: dict[str, Any]) -> object:
        """A JSON object as the database stores it."""

    @abstractmethod
    def _json_value(self, stored: object) -> dict[str, Any]:
        """A stored JSON object read back."""

    def _json_kept(self, value: dict[str, Any]) -> dict[str, Any]:
        """What reading ``value`` back after storing it gives."""
        return dict(json.loads(dumps(value)))

    @abstractmethod
    def _time_param(self, moment: datetime) -> object:
        """A moment as the database stores it."""

    @abstractmethod
    def _time_value(self, stored: object) -> str:
        """A stored moment read back, as `iso` writes it."""

    @abstractmethod
    def close(self) -> None:
        """Release the store's connections (a later call opens new ones)."""

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- the schema -------------------------------------------------------------------------

    @staticmethod
    def _check_version(db: Database) -> None:
        """Record the schema's version in a new database; refuse one from a newer unicite."""
        row = db.one("SELECT MAX(version) FROM unicite_schema")
        version = None if row is None else row[0]
        if version is None:
            db.run("INSERT INTO unicite_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        elif version > SCHEMA_VERSION:
            raise UsageError(
                f"the history database has schema version {version}, newer than this "
                f"unicite's ({SCHEMA_VERSION}): upgrade unicite to use it"
            )

    # --- reading rows -----------------------------------------------------------------------

    def _session_of(self, row: tuple[Any, ...]) -> Session:
        session_id, created_at, metadata = row
        return Session(session_id, self._time_value(created_at), self._json_value(metadata))

    def _turn_of(self, row: tuple[Any, ...]) -> Turn:
        session_id, position, message_id, question, status, created, finished, document, error = row
        return Turn(
            session_id=session_id,
            turn_id=position,
            message_id=message_id,
            question=question,
            status=status,
            created_at=self._time_value(created),
            finished_at=None if finished is None else self._time_value(finished),
            message=None if document is None else self._json_value(document),
            error=error,
        )

    def _get_session(self, db: Database, session_id: str) -> Session | None:
        row = db.one(
            "SELECT session_id, created_at, metadata FROM unicite_sessions WHERE session_id = ?",
            (session_id,),
        )
        return None if row is None else self._session_of(row)

    def _get_turn(self, db: Database, message_id: str) -> Turn | None:
        row = db.one(
            f"SELECT {_TURN_COLUMNS} FROM unicite_turns WHERE message_id = ?",  # noqa: S608
            (message_id,),
        )
        return None if row is None else self._turn_of(row)

    def _get_turns(self, db: Database, session_id: str) -> list[Turn]:
        rows = db.rows(
            f"SELECT {_TURN_COLUMNS} FROM unicite_turns "  # noqa: S608
            "WHERE session_id = ? ORDER BY position",
            (session_id,),
        )
        return [self._turn_of(row) for row in rows]

    # --- HistoryStore -----------------------------------------------------------------------

    def session(
        self, session_id: str | None = None, *, metadata: Mapping[str, Any] | None = None
    ) -> Session:
        """The session ``session_id``, created (with ``metadata``) if it does not exist.

        Without an id a new session gets a random one. An existing session keeps the
        metadata it was created with.

        Raises:
            UsageError: The id is not a non-empty ``str``, or the metadata is not JSON.
        """
        chosen = uuid.uuid4().hex if session_id is None else _check_id("session_id", session_id)
        kept = _json_object("metadata", metadata)

        def work(db: Database) -> Session:
            db.run(
                "INSERT INTO unicite_sessions (session_id, created_at, metadata, turns) "
                "VALUES (?, ?, ?, 0) ON CONFLICT (session_id) "
                # An update, not DO NOTHING: it locks the row (PostgreSQL) until it is read.
                "DO UPDATE SET session_id = excluded.session_id",
                (chosen, self._time_param(_now()), self._json_param(kept)),
            )
            return _written(self._get_session(db, chosen))

        return self._write(work)

    def get_session(self, session_id: str) -> Session | None:
        """The session, or None when there is none with that id."""
        _check_id("session_id", session_id)
        return self._read(lambda db: self._get_session(db, session_id))

    def add_turn(self, session_id: str, question: str, *, message_id: str | None = None) -> Turn:
        """A new pending turn at the end of the session (created if it does not exist).

        Args:
            session_id: The session asked in.
            question: The user's question.
            message_id: The id the answer's stream carries; a random one when None.

        Returns:
            The turn, whose ``turn_id`` is its position in the session (1, 2, ...).

        Raises:
            UsageError: An id is not a non-empty ``str``, or ``message_id`` already names
                a turn.
        """
        _check_id("session_id", session_id)
        if not isinstance(question, str):
            raise UsageError(f"question must be a str, got {type(question).__name__}")
        chosen = uuid.uuid4().hex if message_id is None else _check_id("message_id", message_id)
        now = self._time_param(_now())

        def work(db: Database) -> Turn:
            if db.one("SELECT 1 FROM unicite_turns WHERE message_id = ?", (chosen,)):
                raise UsageError(f"message id {chosen!r} already names a turn")
            # One statement creates the session or takes its row's lock to count the turn.
            db.run(
                "INSERT INTO unicite_sessions (session_id, created_at, metadata, turns) "
                "VALUES (?, ?, ?, 1) ON CONFLICT (session_id) "
                "DO UPDATE SET turns = unicite_sessions.turns + 1",
                (session_id, now, self._json_param({})),
            )
            row = _written(
                db.one("SELECT turns FROM unicite_sessions WHERE session_id = ?", (session_id,))
            )
            db.run(
                "INSERT INTO unicite_turns "
                "(session_id, position, message_id, question, status, created_at) "
                "VALUES (?, ?, ?, ?, 'pending', ?)",
                (session_id, row[0], chosen, question, now),
            )
            return _written(self._get_turn(db, chosen))

        return self._write(work)

    def finish_turn(self, message_id: str, answer: CitedAnswer) -> Turn | None:
        """Keep the answer of a pending turn: complete, or stopped when the user stopped it.

        The turn keeps ``unicite.wire.history(answer, message_id=message_id)``; its status is
        ``"stopped"`` when ``answer.extras.get("stopped")`` is true, else ``"complete"``.
        Finishing a turn again with the same answer changes nothing; a finished turn never
        goes back to pending.

        Returns:
            The finished turn; None when no turn has that message id (its session was
            deleted while the answer streamed).

        Raises:
            UsageError: ``answer`` is not a `CitedAnswer`, or the turn already finished with
                another answer or failed.
        """
        _check_id("message_id", message_id)
        if not isinstance(answer, CitedAnswer):
            raise UsageError(f"finish_turn expects a CitedAnswer, got {type(answer).__name__}")
        document = completed_data(answer, message_id)
        status: TurnStatus = "stopped" if answer.extras.get("stopped") else "complete"
        stored = self._json_param(document)

        def work(db: Database) -> Turn | None:
            db.run(
                "UPDATE unicite_turns SET status = ?, document = ?, finished_at = ? "
                "WHERE message_id = ? AND status = 'pending'",
                (status, stored, self._time_param(_now()), message_id),
            )
            return self._get_turn(db, message_id)

        turn = self._write(work)
        if turn is None:
            return None
        if turn.status != status or turn.message != self._json_kept(document):
            raise UsageError(
                f"turn {message_id!r} is already {turn.status}"
                + (" with another answer" if turn.status in _FINISHED else "")
            )
        return turn

    def fail_turn(self, message_id: str, error: str | BaseException) -> Turn | None:
        """Mark a pending turn failed, with a note of what went wrong.

        An exception is noted by its type's name only (as the stream's error frame names
        it), since the history is shown to users; pass a ``str`` to say more. A turn that
        already finished keeps its answer, and a failed one its first note.

        Returns:
            The turn as it now is; None when no turn has that message id.
        """
        _check_id("message_id", message_id)
        note = _error_note(error)

        def work(db: Database) -> Turn | None:
            db.run(
                "UPDATE unicite_turns SET status = 'failed', error = ?, finished_at = ? "
                "WHERE message_id = ? AND status = 'pending'",
                (note, self._time_param(_now()), message_id),
            )
            return self._get_turn(db, message_id)

        return self._write(work)

    def turn(self, message_id: str) -> Turn | None:
        """The turn answered by that message, or None."""
        _check_id("message_id", message_id)
        return self._read(lambda db: self._get_turn(db, message_id))

    def turns(self, session_id: str) -> list[Turn]:
        """The session's turns, oldest first (an empty list for an unknown session)."""
        _check_id("session_id", session_id)
        return self._read(lambda db: self._get_turns(db, session_id))

    def delete_session(self, session_id: str) -> bool:
        """Delete the session and its turns; False when there was none."""
        _check_id("session_id", session_id)

        def work(db: Database) -> bool:
            db.run("DELETE FROM unicite_turns WHERE session_id = ?", (session_id,))
            return db.run("DELETE FROM unicite_sessions WHERE session_id = ?", (session_id,)) > 0

        return self._write(work)

    def session_history(self, session_id: str) -> dict[str, Any] | None:
        """The REST form of a session (``GET /sessions/{id}/history``), or None if unknown.

        ``{"session_id", "created_at", "metadata", "turns": [...]}`` with each turn as
        `Turn.to_dict` gives it: ``turn_id``, ``message_id``, ``question``, ``status``,
        ``created_at``, ``finished_at``, ``final_output`` (the content with its ``[n]``
        markers), ``metadata`` (with ``citations``), ``message`` (the whole history
        document) and ``error``; ``final_output`` and ``metadata`` are exactly what the live
        ``thread.message.completed`` event carried.
        """
        _check_id("session_id", session_id)

        def work(db: Database) -> dict[str, Any] | None:
            session = self._get_session(db, session_id)
            if session is None:
                return None
            return session_history(session, self._get_turns(db, session_id))

        return self._read(work)


# --- SQLite ---------------------------------------------------------------------------------------

_SQLITE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS unicite_schema (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS unicite_sessions (
        session_id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        metadata TEXT NOT NULL,
        turns INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS unicite_turns (
        message_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL
            REFERENCES unicite_sessions (session_id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        question TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'complete', 'stopped', 'failed')),
        document TEXT,
        error TEXT,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        UNIQUE (session_id, position)
    )""",
)


class _SQLiteDatabase:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def run(self, sql: str, params: Sequence[object] = ()) -> int:
        return self.connection.execute(sql, params).rowcount

    def one(self, sql: str, params: Sequence[object] = ()) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self.connection.execute(sql, params).fetchone()
        return row

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, params).fetchall()


class SQLiteHistoryStore(SQLHistoryStore):
    """`HistoryStore` in one SQLite file: the embedded default, shared by a service's workers.

    ::

        store = SQLiteHistoryStore("history.db")
        turn = store.add_turn(session_id, question)
        relay = Relay(unicite.stream_cited(llm, question, sources), message_id=turn.message_id,
                      on_answer=lambda answer: store.finish_turn(turn.message_id, answer))
        ...
        store.session_history(session_id)  # what a reloaded page reads

    The file is in WAL mode (readers never wait for a writer), and writers wait for each
    other up to ``timeout`` seconds, so the workers of ``uvicorn --workers 4`` can share it;
    each write is one ``BEGIN IMMEDIATE`` transaction. The tables are created on first use.
    A store holds one connection, opened on first use, shared by its threads under a lock,
    and opened again in a forked process. The file must be on a local disk (SQLite's locks
    are unreliable on network file systems); for several hosts, use
    `unicite.wire.postgres.PostgresHistoryStore`.

    Args:
        path: The database file (created if missing), or ``":memory:"`` for one that lives
            as long as the store (tests).
        timeout: Seconds a write waits for another process's before it fails with
            ``sqlite3.OperationalError``.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise UsageError(f"path must be a str or a path, got {type(path).__name__}")
        self.path = os.fspath(path)
        """The database file."""
        self.timeout = float(timeout)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0

    def __repr__(self) -> str:
        return f"SQLiteHistoryStore({self.path!r})"

    def _connect(self) -> sqlite3.Connection:
        """The store's connection, opened (and the schema created) on first use; lock held."""
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        # A connection inherited through fork is the parent's: it is left alone.
        connection = sqlite3.connect(
            self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
        )
        try:
            _use_wal(connection, self.timeout)
            connection.execute("PRAGMA foreign_keys = ON")
            with _transaction(connection, "BEGIN IMMEDIATE"):
                for statement in _SQLITE_SCHEMA:
                    connection.execute(statement)
                self._check_version(_SQLiteDatabase(connection))
        except BaseException:
            connection.close()
            raise
        self._connection, self._pid = connection, os.getpid()
        return connection

    def _write(self, work: Callable[[Database], _T]) -> _T:
        with self._lock:
            connection = self._connect()
            with _transaction(connection, "BEGIN IMMEDIATE"):
                return work(_SQLiteDatabase(connection))

    def _read(self, work: Callable[[Database], _T]) -> _T:
        with self._lock:
            connection = self._connect()
            with _transaction(connection, "BEGIN"):
                return work(_SQLiteDatabase(connection))

    def _json_param(self, value: dict[str, Any]) -> object:
        return dumps(value)

    def _json_value(self, stored: object) -> dict[str, Any]:
        value = json.loads(stored) if isinstance(stored, (str, bytes)) else stored
        return value if isinstance(value, dict) else {}

    def _time_param(self, moment: datetime) -> object:
        return iso(moment)

    def _time_value(self, stored: object) -> str:
        return str(stored)

    def close(self) -> None:
        """Close the store's connection (a later call opens a new one)."""
        with self._lock:
            connection, self._connection = self._connection, None
            if connection is not None and self._pid == os.getpid():
                connection.close()


def _use_wal(connection: sqlite3.Connection, timeout: float) -> None:
    """Switch the file to WAL mode (it stays so), waiting for a process that holds it.

    Switching takes the file's exclusive lock and, unlike a transaction, does not wait for
    it (``SQLITE_BUSY`` at once): workers opening a new file together retry here.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def _transaction(connection: sqlite3.Connection, begin: str) -> Iterator[None]:
    connection.execute(begin)
    try:
        yield
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
