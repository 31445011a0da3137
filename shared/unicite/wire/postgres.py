"""A history that lasts in PostgreSQL: `PostgresHistoryStore`, for services on several hosts.

Needs ``pip install 'unicite[postgres]'`` (psycopg 3). ::

    from unicite.wire.postgres import PostgresHistoryStore

    store = PostgresHistoryStore("postgresql://chat@db.internal/chat", pool_size=8)
    turn = store.add_turn(session_id, question)
    store.finish_turn(turn.message_id, answer)
    store.session_history(session_id)  # the GET /sessions/{id}/history body

It keeps the `unicite.wire.HistoryStore` contract, as `unicite.wire.SQLiteHistoryStore` does
in one file. psycopg 3 rather than SQLAlchemy: two tables need no ORM and no engine layer, and
psycopg is the direct, well-kept PostgreSQL driver (JSONB and ``timestamptz`` adapted to
Python types, binary wheels with libpq inside, nothing to compile). The store pools its own
connections, a few lines over psycopg, so no other package is needed.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from unicite.exceptions import UsageError
from unicite.wire._frames import dumps
from unicite.wire._history_store import Database, SQLHistoryStore, iso

try:
    import psycopg
    from psycopg.types.json import Jsonb
except ImportError as error:  # pragma: no cover - exercised in the core-only environment
    raise ImportError(
        "unicite.wire.postgres needs psycopg 3: pip install 'unicite[postgres]'"
    ) from error

__all__ = ["PostgresHistoryStore"]

_T = TypeVar("_T")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS unicite_schema (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS unicite_sessions (
        session_id TEXT PRIMARY KEY,
        created_at TIMESTAMPTZ NOT NULL,
        metadata JSONB NOT NULL,
        turns INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS unicite_turns (
        message_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL
            REFERENCES unicite_sessions (session_id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        question TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'complete', 'stopped', 'failed')),
        document JSONB,
        error TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ,
        UNIQUE (session_id, position)
    )""",
)
"""The primary key indexes turns by message id; the unique constraint by (session, position)."""

_SCHEMA_LOCK = 0x756E6963_68697374
"""The advisory lock key ("unic", "hist") that serializes creating the tables."""

# PostgreSQL text holds neither NUL nor lone surrogates (JSONB refuses their escapes too).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _storable(value: Any) -> Any:
    """``value`` with every NUL or lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_storable(item) for item in value]
    return value


class _PostgresDatabase:
    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self.cursor = cursor

    def run(self, sql: str, params: Sequence[object] = ()) -> int:
        self.cursor.execute(sql.replace("?", "%s"), params)
        return self.cursor.rowcount

    def one(self, sql: str, params: Sequence[object] = ()) -> tuple[Any, ...] | None:
        self.cursor.execute(sql.replace("?", "%s"), params)
        row: tuple[Any, ...] | None = self.cursor.fetchone()
        return row

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        self.cursor.execute(sql.replace("?", "%s"), params)
        return self.cursor.fetchall()


class PostgresHistoryStore(SQLHistoryStore):
    """`unicite.wire.HistoryStore` in PostgreSQL: every worker of every host shares it.

    The tables (``unicite_sessions``, ``unicite_turns`` with the history document as JSONB
    and ``timestamptz`` timestamps, ``unicite_schema``) are created on first use, under an
    advisory lock so that workers starting together do not race. Connections are opened as
    needed, up to ``pool_size``, and kept for the next call; a call waits up to ``timeout``
    seconds for a free one. A kept connection the server closed is replaced once, and a
    forked process opens its own.

    PostgreSQL text cannot hold NUL characters or lone surrogates: in the rare document that
    has them, they are stored as U+FFFD (one character for one, so spans keep their offsets).

    Args:
        dsn: A libpq connection string or URI (``"postgresql://user@host/db"``,
            ``"host=... dbname=..."``).
        pool_size: Most connections open at once.
        timeout: Seconds a call waits for a free connection before ``TimeoutError``.

    Raises:
        UsageError: ``dsn`` is not a ``str`` or ``pool_size`` is not a positive ``int``.
    """

    def __init__(self, dsn: str, *, pool_size: int = 5, timeout: float = 30.0) -> None:
        if not isinstance(dsn, str):
            raise UsageError(f"dsn must be a str, got {type(dsn).__name__}")
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise UsageError(f"pool_size must be a positive int, got {pool_size!r}")
        self.dsn = dsn
        """The connection string."""
        self.pool_size = pool_size
        self.timeout = float(timeout)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(pool_size)
        self._idle: list[psycopg.Connection[Any]] = []
        self._pid = os.getpid()
        self._ready = False

    def __repr__(self) -> str:
        return f"PostgresHistoryStore(pool_size={self.pool_size})"

    # --- connections ------------------------------------------------------------------------

    def _forked(self) -> None:
        """In a forked process, forget the parent's connections (closing them would end its)."""
        with self._lock:
            if self._pid != os.getpid():
                self._idle, self._pid = [], os.getpid()
                self._slots = threading.BoundedSemaphore(self.pool_size)

    @contextmanager
    def _connection(self) -> Iterator[tuple[psycopg.Connection[Any], bool]]:
        """A connection from the pool, and whether it was kept from an earlier call."""
        self._forked()
        slots = self._slots
        if not slots.acquire(timeout=self.timeout):
            raise TimeoutError(
                f"no free connection to PostgreSQL in {self.timeout:g}s "
                f"(pool_size={self.pool_size})"
            )
        try:
            with self._lock:
                kept = self._idle.pop() if self._idle else None
            connection = kept or psycopg.connect(self.dsn, autocommit=True)
            try:
                yield connection, kept is not None
            finally:
                if connection.closed or connection.broken:
                    connection.close()
                else:
                    with self._lock:
                        self._idle.append(connection)
        finally:
            slots.release()

    def _run(self, work: Callable[[Database], _T], *, read_only: bool) -> _T:
        for attempt in (1, 2):
            with self._connection() as (connection, kept):
                try:
                    if not self._ready:
                        self._create_schema(connection)
                    with connection.transaction(), connection.cursor() as cursor:
                        if read_only:
                            cursor.execute(
                                "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
                            )
                        return work(_PostgresDatabase(cursor))
                except psycopg.OperationalError:
                    # A kept connection the server closed since (a restart, an idle
                    # timeout): nothing was done; try once more on a new connection.
                    if attempt == 1 and kept and connection.broken:
                        continue
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _create_schema(self, connection: psycopg.Connection[Any]) -> None:
        with connection.transaction(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA:
                cursor.execute(statement)
            self._check_version(_PostgresDatabase(cursor))
        self._ready = True

    def _write(self, work: Callable[[Database], _T]) -> _T:
        return self._run(work, read_only=False)

    def _read(self, work: Callable[[Database], _T]) -> _T:
        return self._run(work, read_only=True)

    def close(self) -> None:
        """Close the connections kept for later calls (a later call opens new ones)."""
        with self._lock:
            idle, self._idle = self._idle, []
            mine = self._pid == os.getpid()
        for connection in idle if mine else ():
            connection.close()

    # --- types --------------------------------------------------------------------------------

    def _json_param(self, value: dict[str, Any]) -> object:
        return Jsonb(value, dumps=_dumps)

    def _json_value(self, stored: object) -> dict[str, Any]:
        value = json.loads(stored) if isinstance(stored, (str, bytes)) else stored
        return value if isinstance(value, dict) else {}

    def _json_kept(self, value: dict[str, Any]) -> dict[str, Any]:
        return dict(json.loads(_dumps(value)))

    def _time_param(self, moment: datetime) -> object:
        return moment

    def _time_value(self, stored: object) -> str:
        return iso(stored) if isinstance(stored, datetime) else str(stored)


def _dumps(value: Any) -> str:
    text = dumps(value)
    if "\\u0000" in text or "\\ud" in text:  # what `dumps` writes for them
        text = dumps(_storable(value))
    return text
