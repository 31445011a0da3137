"""A history that lasts: one contract, run against SQLite and a real PostgreSQL server.

The history a reloaded page reads must be what the live stream showed: every turn's
``final_output`` and ``metadata.citations`` are compared with the ``thread.message.completed``
data `unicite.wire.frames` encodes for the same answer.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _answers import RICH, UNCITED, marked, native

from unicite import CitedAnswer, UsageError, wire
from unicite.wire import HistoryStore, SQLiteHistoryStore, Turn

ANSWERS = {"marked": marked, "native": native, "rich": lambda: RICH, "uncited": lambda: UNCITED}

TURN_KEYS = [
    "turn_id",
    "message_id",
    "question",
    "status",
    "created_at",
    "finished_at",
    "final_output",
    "metadata",
    "message",
    "error",
]


def completed(answer: CitedAnswer, message_id: str) -> dict[str, Any]:
    """The data of the live stream's ``thread.message.completed`` event for `answer`."""
    (frame,) = [
        frame
        for frame in wire.frames(answer, "unicite", message_id=message_id)
        if frame.event == "thread.message.completed"
    ]
    data = frame.json()
    assert isinstance(data, dict)
    return data


def stopped(answer: CitedAnswer) -> CitedAnswer:
    """`answer` as a server keeps it when the user stopped it."""
    return answer.model_copy(update={"extras": {**answer.extras, "stopped": True}})


class HistoryStoreContract:
    """What every `HistoryStore` does; a subclass opens its store and says how to reopen it."""

    keeps_unstorable_text: ClassVar[bool] = True
    """Whether NUL and lone surrogates are stored as they are (PostgreSQL text cannot)."""

    @pytest.fixture
    def location(self) -> str:
        """Where a new, empty store lives (a file, a database)."""
        raise NotImplementedError

    def open(self, location: str) -> HistoryStore:
        raise NotImplementedError

    opener: ClassVar[str] = ""
    """Python run in another process that binds ``store`` to the store at ``sys.argv[1]``."""

    @pytest.fixture
    def store(self, location: str) -> Iterator[HistoryStore]:
        opened = self.open(location)
        yield opened
        opened.close()

    @pytest.fixture
    def reopen(self, location: str) -> Iterator[Callable[[], HistoryStore]]:
        """Open another store over the same data (another worker), closed after the test."""
        opened: list[HistoryStore] = []

        def make() -> HistoryStore:
            opened.append(self.open(location))
            return opened[-1]

        yield make
        for store in opened:
            store.close()

    # --- the REST shape: live equals reload -------------------------------------------------

    def test_session_history_is_seed_002_shape_and_equals_the_live_event(
        self, store: HistoryStore
    ) -> None:
        session = store.session("s-1", metadata={"title": "Hauteurs"})
        for name, make in ANSWERS.items():
            turn = store.add_turn("s-1", f"Question {name} ?", message_id=f"m-{name}")
            assert turn.status == "pending"
            store.finish_turn(turn.message_id, make())
        history = store.session_history("s-1")
        assert history is not None
        assert list(history) == ["session_id", "created_at", "metadata", "turns"]
        assert history["session_id"] == "s-1"
        assert history["created_at"] == session.created_at
        assert history["metadata"] == {"title": "Hauteurs"}
        assert [turn["turn_id"] for turn in history["turns"]] == [1, 2, 3, 4]
        for entry, (name, make) in zip(history["turns"], ANSWERS.items(), strict=True):
            live = completed(make(), f"m-{name}")
            assert list(entry) == TURN_KEYS
            assert entry["message_id"] == f"m-{name}"
            assert entry["question"] == f"Question {name} ?"
            assert entry["status"] == "complete"
            assert entry["final_output"] == live["content"]
            assert entry["metadata"]["citations"] == live["metadata"]["citations"]
            assert entry["metadata"] == live["metadata"]
            assert entry["message"] == live == wire.history(make(), message_id=f"m-{name}")
            assert entry["error"] is None
            assert entry["created_at"] <= entry["finished_at"]
            assert entry["finished_at"].endswith("+00:00")

    def test_a_turn_reads_back_as_its_answer(self, store: HistoryStore) -> None:
        turn = store.add_turn("s", "Tour Eiffel ?", message_id="m-1")
        store.finish_turn(turn.message_id, RICH)
        kept = store.turn("m-1")
        assert kept is not None
        body = "".join(wire.encode(RICH, message_id="m-1"))
        assert kept.answer == wire.decode(body)
        assert kept.to_dict()["final_output"] == kept.answer.text

    def test_a_pending_turn_has_no_output_and_no_citations(self, store: HistoryStore) -> None:
        store.add_turn("s", "Encore en cours ?", message_id="m-1")
        history = store.session_history("s")
        assert history is not None
        (entry,) = history["turns"]
        assert entry["status"] == "pending"
        assert entry["final_output"] is None
        assert entry["metadata"] == {"citations": []}
        assert entry["message"] is None
        assert entry["finished_at"] is None

    def test_non_ascii_ids_questions_metadata_and_answers(
        self, store: HistoryStore, reopen: Callable[[], HistoryStore]
    ) -> None:
        question = "東京タワーの高さは 🗼 Ça mesure combien, « exactement » ?"
        store.session("sitzung-ä-東京", metadata={"titre": "Été 🌞", "標題": ["東京", 333]})
        store.add_turn("sitzung-ä-東京", question, message_id="nachricht-ü-🗼")
        store.finish_turn("nachricht-ü-🗼", RICH)
        reopened = reopen()
        history = reopened.session_history("sitzung-ä-東京")
        assert history is not None
        assert history["metadata"] == {"titre": "Été 🌞", "標題": ["東京", 333]}
        (entry,) = history["turns"]
        assert entry["question"] == question
        assert entry["message"] == completed(RICH, "nachricht-ü-🗼")

    def test_nul_and_lone_surrogates(self, store: HistoryStore) -> None:
        text = "Avant\x00après \ud83d seul."
        answer = CitedAnswer(text=text)
        store.add_turn("s", "q\x00?" if self.keeps_unstorable_text else "q?", message_id="m")
        turn = store.finish_turn("m", answer)
        assert turn is not None
        assert turn.message is not None
        if self.keeps_unstorable_text:
            assert turn.message == completed(answer, "m")
        else:  # one character for one: offsets into the content still hold
            assert turn.message["content"] == "Avant\ufffdaprès \ufffd seul."
            assert len(turn.message["content"]) == len(text)

    # --- stopped and failed turns -------------------------------------------------------------

    def test_a_stopped_answer_makes_a_stopped_turn(self, store: HistoryStore) -> None:
        partial = stopped(marked())
        store.add_turn("s", "Le viaduc ?", message_id="m-1")
        turn = store.finish_turn("m-1", partial)
        assert turn is not None
        assert turn.status == "stopped"
        assert turn.finished_at is not None
        history = store.session_history("s")
        assert history is not None
        (entry,) = history["turns"]
        assert entry["status"] == "stopped"
        live = completed(partial, "m-1")
        assert entry["final_output"] == live["content"]
        assert entry["metadata"]["citations"] == live["metadata"]["citations"]

    def test_a_failed_turn_keeps_a_note_and_no_answer(self, store: HistoryStore) -> None:
        store.add_turn("s", "Un", message_id="m-1")
        store.add_turn("s", "Deux", message_id="m-2")
        first = store.fail_turn("m-1", TimeoutError("secret upstream URL"))
        second = store.fail_turn("m-2", "the model refused: 429")
        assert first is not None
        assert second is not None
        assert (first.status, first.error, first.message) == ("failed", "TimeoutError", None)
        assert second.error == "the model refused: 429"
        assert first.finished_at is not None
        again = store.fail_turn("m-1", "later note")
        assert again is not None
        assert again.error == "TimeoutError"
        with pytest.raises(UsageError, match="'m-1' is already failed"):
            store.finish_turn("m-1", RICH)
        history = store.session_history("s")
        assert history is not None
        entry = history["turns"][0]
        assert (entry["status"], entry["error"], entry["final_output"]) == (
            "failed",
            "TimeoutError",
            None,
        )
        assert entry["metadata"] == {"citations": []}

    def test_finishing_twice_is_idempotent_and_never_reverts(self, store: HistoryStore) -> None:
        store.add_turn("s", "q", message_id="m-1")
        first = store.finish_turn("m-1", RICH)
        second = store.finish_turn("m-1", RICH)
        assert first == second
        with pytest.raises(UsageError, match="'m-1' is already complete with another answer"):
            store.finish_turn("m-1", UNCITED)
        with pytest.raises(UsageError, match="'m-1' is already complete with another answer"):
            store.finish_turn("m-1", stopped(RICH))
        failed = store.fail_turn("m-1", RuntimeError("the client left"))
        assert failed == first
        assert store.turn("m-1") == first

    # --- order, unknown ids, deletion ---------------------------------------------------------

    def test_turns_are_listed_oldest_first_per_session(self, store: HistoryStore) -> None:
        for k in range(5):
            store.add_turn("a", f"a{k}", message_id=f"a-{k}")
            store.add_turn("b", f"b{k}", message_id=f"b-{k}")
        store.finish_turn("a-3", RICH)
        store.fail_turn("a-1", "x")
        turns = store.turns("a")
        assert [t.question for t in turns] == [f"a{k}" for k in range(5)]
        assert [t.turn_id for t in turns] == [1, 2, 3, 4, 5]
        assert [t.turn_id for t in store.turns("b")] == [1, 2, 3, 4, 5]
        assert [t.status for t in turns] == ["pending", "failed", "pending", "complete", "pending"]

    def test_unknown_ids_read_as_none_or_empty(self, store: HistoryStore) -> None:
        store.add_turn("s", "q", message_id="m")
        assert store.get_session("nobody") is None
        assert store.session_history("nobody") is None
        assert store.turns("nobody") == []
        assert store.turn("nothing") is None
        assert store.finish_turn("nothing", RICH) is None
        assert store.fail_turn("nothing", "x") is None
        assert store.delete_session("nobody") is False

    def test_a_deleted_session_is_gone_with_its_turns(self, store: HistoryStore) -> None:
        store.session("s", metadata={"v": 1})
        store.add_turn("s", "q1", message_id="m-1")
        store.add_turn("s", "q2", message_id="m-2")
        store.add_turn("other", "q", message_id="m-3")
        store.finish_turn("m-1", RICH)
        assert store.delete_session("s") is True
        assert store.get_session("s") is None
        assert store.session_history("s") is None
        assert store.turns("s") == []
        assert store.turn("m-1") is None
        # An answer that completes after its session was deleted is dropped quietly.
        assert store.finish_turn("m-2", RICH) is None
        assert store.delete_session("s") is False
        assert [t.message_id for t in store.turns("other")] == ["m-3"]
        # The id can start a new session, numbered from 1 again.
        assert store.add_turn("s", "q", message_id="m-1").turn_id == 1
        assert store.session("s").metadata == {}

    def test_create_or_get_a_session(self, store: HistoryStore) -> None:
        first = store.session("s", metadata={"title": "un"})
        again = store.session("s", metadata={"title": "deux"})
        assert again == first
        assert again.metadata == {"title": "un"}
        assert store.get_session("s") == first
        fresh = store.session()
        assert fresh.session_id != first.session_id
        assert fresh.metadata == {}
        assert store.session_history(fresh.session_id) == {
            "session_id": fresh.session_id,
            "created_at": fresh.created_at,
            "metadata": {},
            "turns": [],
        }
        turn = store.add_turn("implicit", "q")
        assert store.get_session("implicit") is not None
        assert turn.message_id
        assert turn.turn_id == 1

    def test_misuse_is_a_usage_error(self, store: HistoryStore) -> None:
        store.add_turn("s", "q", message_id="m")
        with pytest.raises(UsageError, match="message id 'm' already names a turn"):
            store.add_turn("other", "q", message_id="m")
        with pytest.raises(UsageError, match="session_id must be a non-empty str"):
            store.add_turn("", "q")
        with pytest.raises(UsageError, match="finish_turn expects a CitedAnswer"):
            store.finish_turn("m", {"content": "x"})  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="metadata must hold JSON values only"):
            store.session("t", metadata={"when": object()})
        with pytest.raises(UsageError, match="error must be a str or an exception"):
            store.fail_turn("m", 3)  # type: ignore[arg-type]
        assert [t.message_id for t in store.turns("other")] == []

    def test_it_is_a_history_store(self, store: HistoryStore) -> None:
        assert isinstance(store, HistoryStore)

    # --- what lasts, and who writes at once --------------------------------------------------

    def test_a_second_store_reads_what_the_first_wrote(
        self, store: HistoryStore, reopen: Callable[[], HistoryStore]
    ) -> None:
        store.add_turn("s", "q", message_id="m-1")
        store.finish_turn("m-1", marked())
        store.close()
        other = reopen()
        assert other.session_history("s") == store.session_history("s")
        assert other.finish_turn("m-1", marked()) == store.turn("m-1")

    def test_a_newer_schema_is_refused(
        self, store: HistoryStore, reopen: Callable[[], HistoryStore]
    ) -> None:
        store.session("s")
        newer = "INSERT INTO unicite_schema (version) VALUES (99)"
        store._write(lambda db: db.run(newer))  # type: ignore[attr-defined]
        with pytest.raises(UsageError, match="schema version 99, newer than this unicite's"):
            reopen().session("s")

    def test_many_threads_write_at_once(self, store: HistoryStore) -> None:
        threads, each = 8, 12
        barrier = threading.Barrier(threads)
        errors: list[BaseException] = []

        def ask(worker: int) -> None:
            try:
                barrier.wait()
                for k in range(each):
                    turn = store.add_turn("shared", f"w{worker} q{k}")
                    store.add_turn(f"own-{worker}", f"q{k}")
                    store.finish_turn(turn.message_id, RICH if k % 2 else marked())
                    store.finish_turn(turn.message_id, RICH if k % 2 else marked())
            except BaseException as error:  # pragma: no cover - reported below
                errors.append(error)

        workers = [threading.Thread(target=ask, args=(w,)) for w in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert errors == []
        turns = store.turns("shared")
        assert [t.turn_id for t in turns] == list(range(1, threads * each + 1))
        assert {t.status for t in turns} == {"complete"}
        for w in range(threads):  # each worker's questions in the order it asked them
            mine = [t.question for t in turns if t.question.startswith(f"w{w} ")]
            assert mine == [f"w{w} q{k}" for k in range(each)]
            assert [t.turn_id for t in store.turns(f"own-{w}")] == list(range(1, each + 1))

    def test_two_processes_write_at_once(self, location: str, tmp_path: Path) -> None:
        """Two workers on a fresh store: the tables are created once, positions never clash."""
        each = 25
        child = self.opener + textwrap.dedent(
            f"""
            import os, time
            import unicite
            tag, gate = sys.argv[2], sys.argv[3]
            open(os.path.join(gate, "ready-" + tag), "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(os.path.join(gate, "go")):
                if time.monotonic() > deadline:
                    sys.exit("no go")
                time.sleep(0.005)
            answer = unicite.CitedAnswer(text="Réponse " + tag)
            for k in range({each}):
                turn = store.add_turn("shared", tag + " " + str(k))
                store.finish_turn(turn.message_id, answer)
            store.close()
            """
        )
        script = tmp_path / "child.py"
        script.write_text(child, encoding="utf-8")
        procs = [
            subprocess.Popen(
                [sys.executable, str(script), location, tag, str(tmp_path)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for tag in ("A", "B")
        ]
        try:
            deadline = time.monotonic() + 60
            while not all((tmp_path / f"ready-{tag}").exists() for tag in "AB"):
                assert time.monotonic() < deadline, "the workers did not start"
                assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
                time.sleep(0.005)
            (tmp_path / "go").touch()
            for proc in procs:
                _, err = proc.communicate(timeout=120)
                assert proc.returncode == 0, err
        finally:
            for proc in procs:
                if proc.poll() is None:  # pragma: no cover - a hung worker
                    proc.kill()
                    proc.communicate()
        store = self.open(location)
        try:
            turns = store.turns("shared")
        finally:
            store.close()
        assert [t.turn_id for t in turns] == list(range(1, 2 * each + 1))
        assert {t.status for t in turns} == {"complete"}
        for tag in "AB":
            mine = [t.question for t in turns if t.question.startswith(tag)]
            assert mine == [f"{tag} {k}" for k in range(each)]


# --- SQLite ---------------------------------------------------------------------------------------


class TestSQLiteHistoryStore(HistoryStoreContract):
    opener = (
        "import sys\nfrom unicite.wire import SQLiteHistoryStore\n"
        "store = SQLiteHistoryStore(sys.argv[1])\n"
    )

    @pytest.fixture
    def location(self, tmp_path: Path) -> str:
        return str(tmp_path / "history.db")

    def open(self, location: str) -> HistoryStore:
        return SQLiteHistoryStore(location)

    def test_the_file_is_in_wal_mode(self, store: HistoryStore, location: str) -> None:
        import sqlite3

        store.session("s")
        with sqlite3.connect(location) as connection:
            (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
            (version,) = connection.execute("SELECT version FROM unicite_schema").fetchone()
        assert (mode, version) == ("wal", 1)

    def test_in_memory(self) -> None:
        with SQLiteHistoryStore(":memory:") as store:
            store.add_turn("s", "q", message_id="m")
            turn = store.finish_turn("m", RICH)
            assert turn is not None
            assert turn.status == "complete"

    def test_a_forked_worker_opens_its_own_connection(self, store: HistoryStore) -> None:
        if not hasattr(os, "fork"):  # pragma: no cover - Windows
            pytest.skip("no fork here")
        store.add_turn("s", "parent", message_id="m-0")
        with warnings.catch_warnings():  # Python 3.12+ warns when other threads are running
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit status
            try:
                store.add_turn("s", "child", message_id="m-1")
                code = 0
            except BaseException:
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        store.add_turn("s", "parent again", message_id="m-2")
        assert [t.question for t in store.turns("s")] == ["parent", "child", "parent again"]


# --- PostgreSQL: a real server, started once for the session --------------------------------------


def _postgres_bin() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    # Debian and Ubuntu keep them off PATH, one folder per major version.
    versions = [p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/initdb")]
    versions = sorted(
        (p for p in versions if p.parent.name.isdigit()), key=lambda p: int(p.parent.name)
    )
    return versions[-1] if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a loopback port; its base DSN (trust auth)."""
    pytest.importorskip("psycopg", reason="unicite[postgres] (psycopg 3) is not installed")
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found: apt install postgresql")
    # The server refuses to run as root: run it as the postgres account the package made.
    as_user: dict[str, Any] = {}
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
        as_user = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
    root = Path(tempfile.mkdtemp(prefix="unicite-pg-"))
    if as_user:
        os.chown(root, as_user["user"], as_user["group"])
    data = root / "data"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bindir / args[0]), *args[1:]],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            **as_user,
        )

    started = False
    try:
        done = run(
            "initdb", "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
            "--no-locale", "--no-sync",
        )  # fmt: skip
        if done.returncode:
            pytest.fail(f"initdb failed: {done.stderr}")
        for _ in range(3):  # a port taken between probing and binding: try another
            port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off"
            )
            log = str(root / "server.log")
            done = run("pg_ctl", "-D", str(data), "-l", log, "-o", options, "-w", "start")
            if done.returncode == 0:
                started = True
                break
        if not started:
            text = (root / "server.log").read_text() if (root / "server.log").exists() else ""
            pytest.fail(f"PostgreSQL did not start: {done.stderr}\n{text}")
        yield f"host=127.0.0.1 port={port} user=postgres"
    finally:
        if started:
            run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


class TestPostgresHistoryStore(HistoryStoreContract):
    keeps_unstorable_text = False
    opener = (
        "import sys\nfrom unicite.wire.postgres import PostgresHistoryStore\n"
        "store = PostgresHistoryStore(sys.argv[1], pool_size=2)\n"
    )

    @pytest.fixture(autouse=True)
    def _psycopg(self) -> None:
        pytest.importorskip("psycopg", reason="unicite[postgres] (psycopg 3) is not installed")

    @pytest.fixture
    def location(self, postgres_server: str) -> str:
        import psycopg

        name = f"t_{uuid.uuid4().hex}"
        with psycopg.connect(f"{postgres_server} dbname=postgres", autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return f"{postgres_server} dbname={name}"

    def open(self, location: str) -> HistoryStore:
        from unicite.wire.postgres import PostgresHistoryStore

        return PostgresHistoryStore(location, pool_size=4)

    def test_tables_jsonb_timestamptz_and_indexes(self, store: HistoryStore, location: str) -> None:
        import psycopg

        store.add_turn("s", "q", message_id="m")
        store.finish_turn("m", RICH)
        with psycopg.connect(location) as connection:
            types = dict(
                connection.execute(
                    "SELECT column_name, data_type FROM information_schema.columns "
                    "WHERE table_name = 'unicite_turns'"
                ).fetchall()
            )
            indexes = [
                row[0]
                for row in connection.execute(
                    "SELECT indexdef FROM pg_indexes WHERE tablename = 'unicite_turns'"
                )
            ]
            content = connection.execute(
                "SELECT document -> 'metadata' -> 'citations' -> 0 ->> 'title' FROM unicite_turns"
            ).fetchone()
        assert types["document"] == "jsonb"
        assert types["created_at"] == types["finished_at"] == "timestamp with time zone"
        assert any("(message_id)" in index for index in indexes)
        assert any('(session_id, "position")' in index for index in indexes)
        assert content == ("Tour Eiffel — Wikipédia",)

    def test_a_connection_the_server_closed_is_replaced(self, store: HistoryStore) -> None:
        import psycopg

        from unicite.wire.postgres import PostgresHistoryStore

        assert isinstance(store, PostgresHistoryStore)
        store.add_turn("s", "q1", message_id="m-1")
        with psycopg.connect(store.dsn, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        assert store.add_turn("s", "q2", message_id="m-2").turn_id == 2

    def test_a_busy_pool_times_out(self, location: str) -> None:
        from unicite.wire.postgres import PostgresHistoryStore

        store = PostgresHistoryStore(location, pool_size=1, timeout=0.05)
        try:
            with (
                store._connection(),
                pytest.raises(TimeoutError, match=r"no free connection .* \(pool_size=1\)"),
            ):
                store.session("s")
        finally:
            store.close()

    def test_bad_arguments(self) -> None:
        from unicite.wire.postgres import PostgresHistoryStore

        with pytest.raises(UsageError, match="pool_size must be a positive int"):
            PostgresHistoryStore("dbname=x", pool_size=0)
        with pytest.raises(UsageError, match="dsn must be a str"):
            PostgresHistoryStore(None)  # type: ignore[arg-type]


def test_a_turn_of_another_store_is_the_same_value() -> None:
    """`Turn` is a plain value: what a store returns compares by its fields."""
    one = Turn("s", 1, "m", "q", "pending", "2026-01-01T00:00:00.000000+00:00")
    assert one == Turn("s", 1, "m", "q", "pending", "2026-01-01T00:00:00.000000+00:00")
    assert one.answer is None
    assert one.to_dict()["metadata"] == {"citations": []}
