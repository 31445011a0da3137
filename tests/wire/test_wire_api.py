"""The public names of `unicite.wire` and its optional modules, pinned: nothing by accident."""

from __future__ import annotations

import pytest

from unicite import wire

EXPECTED = [
    "Frame",
    "HistoryStore",
    "MemoryRelayStore",
    "Relay",
    "RelayFollower",
    "RelaySnapshot",
    "RelayState",
    "RelayStore",
    "RelayWriter",
    "SQLiteHistoryStore",
    "Session",
    "Turn",
    "TurnStatus",
    "WireError",
    "WireProtocol",
    "aframes",
    "client_dir",
    "decode",
    "encode",
    "frames",
    "history",
    "parse_frames",
]


def test_all_is_exactly_the_public_api() -> None:
    assert wire.__all__ == EXPECTED
    assert sorted(wire.__all__) == wire.__all__
    for name in wire.__all__:
        assert getattr(wire, name) is not None


def test_postgres_exports_its_store_only() -> None:
    pytest.importorskip("psycopg", reason="unicite[postgres] is not installed")
    from unicite.wire import postgres

    assert postgres.__all__ == ["PostgresHistoryStore"]


def test_redis_exports_its_store_only() -> None:
    pytest.importorskip("redis", reason="unicite[redis] is not installed")
    from unicite.wire import redis

    assert redis.__all__ == ["RedisRelayStore"]


def test_starlette_exports_its_responses_and_the_client() -> None:
    pytest.importorskip("sse_starlette", reason="unicite[serve] is not installed")
    from unicite.wire import starlette

    assert starlette.__all__ == [
        "cancel_response",
        "history_response",
        "mount_client",
        "relay_response",
        "sse_response",
        "static_files",
    ]
