"""Checkpoint storage and get_messages_from (SPEC R-CKP-2 … R-CKP-4, R-CKP-6 … R-CKP-8, R-DB-2).

The code under test: harness9_ref/memory/storage/_sql_session.py, _session.py (MemorySession) and _sqlite_db.py.

The tests taking ``new_session`` run once against ``SQLiteSession`` on a real file and once
against ``MemorySession`` (R-SES-1, R-SES-9). The rest are SQLite only: they look at rows, at
``updated_at``, at files written behind the package's back with a plain ``sqlite3`` connection,
or at the fixture files of ``fixtures/sessions/`` (always copied to ``tmp_path`` first).
"""

from __future__ import annotations

import functools
import shutil
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from harness9_ref.memory.storage import (
    Checkpoint,
    CorruptRow,
    Manager,
    SessionInfo,
    StatefulSession,
    UnsupportedSchema,
    message_anchor,
)
from harness9_ref.memory.storage._sql import SQLITE
from harness9_ref.memory.storage._sqlite_db import FORMAT_VERSION
from harness9_ref.planning import TodoItem
from harness9_ref.schema import SchemaError
from tests.fakes import assistant, user
from tests.memory.helpers import START, Clock, numbered, raw
from tests.memory.storage.test_manager import schema_of, spec_schema_sql

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"
A = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
B = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
C = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"


def cp(covered: int, summary: str = "summary") -> Checkpoint:
    return Checkpoint(covered, "0" * 64, summary)


def fixture_copy(name: str, tmp_path: Path) -> Path:
    """A private copy of a fixture file, so that no test ever changes the checked-in one."""
    target = tmp_path / name
    shutil.copyfile(FIXTURES / name, target)
    return target


def checkpoint_rows(path: Path) -> list[tuple[object, ...]]:
    with raw(path) as conn:
        return conn.execute("SELECT session_id, covered, anchor, summary, created_at FROM checkpoints").fetchall()


# --- Saving and reading (R-CKP-2) ---


def test_a_new_session_has_no_checkpoint(new_session: Callable[[], StatefulSession]) -> None:
    assert new_session().get_checkpoint() is None


def test_a_checkpoint_reads_back_exactly_and_a_save_replaces_it(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.add_messages(numbered(4))
    first = Checkpoint(2, message_anchor(user("m1")), "Sum 𝄞 \"quoted\"\n\tand more\x00")
    session.save_checkpoint(first)
    assert session.get_checkpoint() == first
    second = Checkpoint(3, message_anchor(user("m2")), "")
    session.save_checkpoint(second)
    assert session.get_checkpoint() == second


def test_sessions_have_their_own_checkpoints(new_session: Callable[[], StatefulSession]) -> None:
    one, two = new_session(), new_session()
    one.save_checkpoint(cp(1, "one"))
    assert two.get_checkpoint() is None
    two.save_checkpoint(cp(2, "two"))
    assert one.get_checkpoint() == cp(1, "one")


@pytest.mark.parametrize("covered", [0, -1, 1000, 2**63 - 1, -(2**63)])
def test_storage_checks_only_types_never_whether_the_checkpoint_fits(
    new_session: Callable[[], StatefulSession], covered: int
) -> None:
    session = new_session()
    session.add_messages(numbered(2))
    checkpoint = Checkpoint(covered, "not a hash", "s")
    session.save_checkpoint(checkpoint)
    assert session.get_checkpoint() == checkpoint


def _altered(covered: object = 1, anchor: object = "a", summary: object = "s") -> Checkpoint:
    """A Checkpoint whose members were changed after its checks ran, as careless code might."""
    checkpoint = Checkpoint(1, "a", "s")
    object.__setattr__(checkpoint, "covered", covered)
    object.__setattr__(checkpoint, "anchor", anchor)
    object.__setattr__(checkpoint, "summary", summary)
    return checkpoint


WRONG_TYPES = [
    pytest.param(lambda: _altered(covered="1"), id="covered text"),
    pytest.param(lambda: _altered(covered=True), id="covered boolean"),
    pytest.param(lambda: _altered(covered=1.0), id="covered float"),
    pytest.param(lambda: _altered(covered=None), id="covered None"),
    pytest.param(lambda: _altered(covered=2**63), id="covered beyond 64 bits"),
    pytest.param(lambda: _altered(anchor=b"a"), id="anchor bytes"),
    pytest.param(lambda: _altered(anchor=None), id="anchor None"),
    pytest.param(lambda: _altered(summary=7), id="summary integer"),
    pytest.param(lambda: _altered(summary="\ud800"), id="summary lone surrogate"),
    pytest.param(lambda: {"covered": 1, "anchor": "a", "summary": "s"}, id="a dict, not a Checkpoint"),
]


@pytest.mark.parametrize("make", WRONG_TYPES)
def test_a_checkpoint_of_the_wrong_types_is_a_schema_error_and_nothing_is_saved(
    new_session: Callable[[], StatefulSession], make: Callable[[], object]
) -> None:
    session = new_session()
    session.save_checkpoint(cp(1, "kept"))
    with pytest.raises(SchemaError) as excinfo:
        session.save_checkpoint(make())  # type: ignore[arg-type]
    assert excinfo.value.code == "schema_error"
    assert session.get_checkpoint() == cp(1, "kept")


def test_checkpoint_itself_refuses_wrong_types() -> None:
    with pytest.raises(SchemaError):
        Checkpoint(True, "a", "s")
    with pytest.raises(SchemaError):
        Checkpoint(1, "a", None)  # type: ignore[arg-type]


def test_save_stores_one_row_with_the_save_time_and_leaves_updated_at(
    manager: Manager, db_path: Path, clock: Clock
) -> None:
    session = manager.new_session()
    clock.now = START + 10
    session.add_messages(numbered(3))
    clock.now = START + 99
    session.save_checkpoint(cp(2, "first"))
    clock.now = START + 200
    session.save_checkpoint(cp(3, "second"))
    assert manager.list_sessions() == [SessionInfo(session.session_id, START, START + 10, 3)]
    assert checkpoint_rows(db_path) == [(session.session_id, 3, "0" * 64, "second", START + 200)]


def test_a_checkpoint_persists_and_other_handles_see_it(db_path: Path) -> None:
    with Manager(db_path) as first:
        session = first.new_session()
        session.add_messages(numbered(3))
        with Manager(db_path) as second:
            other = second.open_session(session.session_id)
            session.save_checkpoint(cp(2))
            assert other.get_checkpoint() == cp(2)
            other.save_checkpoint(cp(3))
            assert session.get_checkpoint() == cp(3)
    with Manager(db_path) as reopened:
        assert reopened.open_session(session.session_id).get_checkpoint() == cp(3)


# --- What removes a checkpoint (R-CKP-3) ---


def test_clear_removes_the_checkpoint_and_keeps_the_todos(new_session: Callable[[], StatefulSession]) -> None:
    session, other = new_session(), new_session()
    session.add_messages(numbered(4))
    session.save_todos([TodoItem("1", "plan", "pending")])
    session.save_checkpoint(cp(2))
    other.save_checkpoint(cp(2))
    session.clear()
    assert session.get_checkpoint() is None
    assert session.get_todos() == [TodoItem("1", "plan", "pending")]
    assert other.get_checkpoint() == cp(2)


def test_pop_removes_the_checkpoint_only_when_it_covers_more_than_is_left(
    new_session: Callable[[], StatefulSession],
) -> None:
    session = new_session()
    session.add_messages(numbered(4))
    session.save_checkpoint(cp(2))
    assert session.pop_message() == user("m3")
    assert session.pop_message() == user("m2")
    assert session.get_checkpoint() == cp(2)  # 2 covered, 2 left
    assert session.pop_message() == user("m1")
    assert session.get_checkpoint() is None  # 2 covered, 1 left


def test_pop_counts_only_the_sessions_own_messages(new_session: Callable[[], StatefulSession]) -> None:
    session, other = new_session(), new_session()
    other.add_messages(numbered(10))
    session.add_messages(numbered(3))
    session.save_checkpoint(cp(3))
    session.pop_message()
    assert session.get_checkpoint() is None


def test_pop_of_nothing_keeps_even_a_checkpoint_that_does_not_fit(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.save_checkpoint(cp(5))
    assert session.pop_message() is None
    assert session.get_checkpoint() == cp(5)


def test_add_and_save_todos_never_touch_the_checkpoint(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.add_messages(numbered(2))
    session.save_checkpoint(cp(7))
    session.add_messages(numbered(2, 2))
    session.add_messages([])
    session.save_todos([TodoItem("1", "x", "pending")])
    session.save_todos([])
    assert session.get_checkpoint() == cp(7)


def test_delete_removes_the_checkpoint_row(manager: Manager, db_path: Path) -> None:
    doomed, kept = manager.new_session(), manager.new_session()
    doomed.save_checkpoint(cp(1))
    kept.save_checkpoint(cp(2))
    manager.delete_session(doomed.session_id)
    assert [row[0] for row in checkpoint_rows(db_path)] == [kept.session_id]


def test_clear_and_pop_remove_the_row_from_the_file(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    session.add_messages(numbered(2))
    session.save_checkpoint(cp(2))
    session.pop_message()
    assert checkpoint_rows(db_path) == []
    session.save_checkpoint(cp(1))
    session.clear()
    assert checkpoint_rows(db_path) == []


def test_a_save_racing_clear_never_outlives_a_clear_that_committed_last(db_path: Path) -> None:
    """Two Managers (two connections) on two threads: one saves checkpoints, one clears.

    The clock is read inside each write transaction (``created_at`` of the save, ``updated_at``
    of the clear), so its readings follow the commit order. Whenever the clear committed after
    the save, the clear must have removed the checkpoint: a checkpoint that is present is
    always newer than the last clear.
    """
    ticks = iter(range(START, START + 1_000_000))
    tick_lock = threading.Lock()

    def clock() -> float:
        with tick_lock:
            return float(next(ticks))

    with Manager(db_path, clock=clock) as saver_manager, Manager(db_path, clock=clock) as clearer_manager:
        saver = saver_manager.new_session()
        clearer = clearer_manager.open_session(saver.session_id)
        errors: list[BaseException] = []
        for round_number in range(150):
            saver.add_messages(numbered(2))
            barrier = threading.Barrier(2)

            def run(action: Callable[[], object], barrier: threading.Barrier) -> None:
                try:
                    barrier.wait()
                    action()
                except BaseException as exc:  # reported by the main thread
                    errors.append(exc)

            save = functools.partial(saver.save_checkpoint, cp(1, f"round {round_number}"))
            threads = [
                threading.Thread(target=run, args=(save, barrier)),
                threading.Thread(target=run, args=(clearer.clear, barrier)),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=30)
            assert not errors, errors
            with raw(db_path) as conn:
                (updated,) = conn.execute("SELECT updated_at FROM sessions").fetchone()
                saved = conn.execute("SELECT created_at FROM checkpoints").fetchall()
            assert saved == [] or saved[0][0] > updated, f"round {round_number}: a checkpoint outlived a later clear"
            if saved:
                clearer.clear()
            assert saver.get_checkpoint() is None


# --- get_messages_from (R-CKP-4, R-CKP-7) ---


@pytest.mark.parametrize(
    ("start", "expected"),
    [(0, [0, 1, 2, 3, 4]), (1, [1, 2, 3, 4]), (3, [3, 4]), (4, [4]), (5, []), (6, []), (2**63, []), (2**80, [])],
)
def test_get_messages_from_returns_the_messages_from_start_on(
    new_session: Callable[[], StatefulSession], start: int, expected: list[int]
) -> None:
    session, other = new_session(), new_session()
    for first in range(0, 5, 2):  # interleaved with another session's batches
        session.add_messages(numbered(min(2, 5 - first), first))
        other.add_messages(numbered(3, 100 + first))
    assert session.get_messages_from(start) == [user(f"m{i}") for i in expected]


@pytest.mark.parametrize("start", [-1, -(2**70)])
def test_a_negative_start_raises_invalid_argument(new_session: Callable[[], StatefulSession], start: int) -> None:
    session = new_session()
    session.add_messages(numbered(2))
    with pytest.raises(ValueError) as excinfo:
        session.get_messages_from(start)
    assert getattr(excinfo.value, "code", None) == "invalid_argument"


def test_get_messages_from_of_an_empty_session_is_empty(new_session: Callable[[], StatefulSession]) -> None:
    assert new_session().get_messages_from(0) == []


def test_positions_follow_the_order_of_get_after_pop_and_add(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.add_messages(numbered(3))
    session.pop_message()
    session.add_messages([assistant("x"), user("y")])
    every = session.get_messages()
    assert [session.get_messages_from(i) for i in range(5)] == [every[i:] for i in range(5)]


def test_get_messages_from_returns_a_list_of_its_own(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.add_messages(numbered(3))
    got = session.get_messages_from(1)
    got.clear()
    assert session.get_messages_from(1) == numbered(2, 1)


def test_get_messages_from_never_decodes_the_rows_before_start(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    session.add_messages(numbered(4))
    with raw(db_path) as conn:
        conn.execute(
            "UPDATE messages SET tool_calls = '{not json' WHERE id = (SELECT min(id) FROM messages WHERE session_id = ?)",
            (session.session_id,),
        )
    assert session.get_messages_from(1) == numbered(3, 1)
    with pytest.raises(CorruptRow):
        session.get_messages_from(0)


def test_get_messages_from_walks_only_the_index_to_its_start(manager: Manager, db_path: Path) -> None:
    """R-CKP-4: the start is found in idx_messages_session alone; only returned rows are read."""
    manager.new_session()
    with raw(db_path) as conn:
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + SQLITE.messages_from, ("x", "x", 5))]
    assert any("USING INDEX idx_messages_session" in step for step in plan), plan
    assert any("USING COVERING INDEX idx_messages_session" in step for step in plan), plan
    assert not any(step.startswith("SCAN") for step in plan), plan


# --- Rows another program wrote (R-CKP-8) ---


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("covered", "abc"),
        ("covered", 2.5),
        ("covered", b"\x01"),
        ("anchor", b"\x00\xff"),
        ("summary", b"blob"),
        ("summary", "not UTF-8"),
    ],
)
def test_a_row_that_is_not_a_checkpoint_raises_corrupt_row_naming_the_session(
    manager: Manager, db_path: Path, column: str, value: object
) -> None:
    session = manager.new_session()
    session.add_messages(numbered(2))
    session.save_checkpoint(cp(1))
    with raw(db_path) as conn:
        if value == "not UTF-8":
            conn.execute("UPDATE checkpoints SET summary = CAST(X'ff' AS TEXT)")
        else:
            conn.execute(f"UPDATE checkpoints SET {column} = ?", (value,))
    with pytest.raises(CorruptRow) as excinfo:
        session.get_checkpoint()
    assert excinfo.value.code == "corrupt_row"
    assert session.session_id in str(excinfo.value)
    assert session.get_messages() == numbered(2)  # the messages are not affected


def test_a_corrupt_checkpoint_is_replaced_by_a_save_and_removed_by_clear(tmp_path: Path) -> None:
    with Manager(fixture_copy("corrupt-checkpoint.db", tmp_path)) as manager:
        a, b, c = (manager.open_session(i) for i in (A, B, C))
        for session in (a, b, c):
            with pytest.raises(CorruptRow):
                session.get_checkpoint()
        a.save_checkpoint(cp(1))
        assert a.get_checkpoint() == cp(1)
        b.clear()
        assert b.get_checkpoint() is None


@pytest.mark.parametrize("covered", ["abc", 1.5, b"\x01"])
def test_pop_removes_a_checkpoint_row_whose_covered_is_not_an_integer(
    manager: Manager, db_path: Path, covered: object
) -> None:
    """R-CKP-3: such a row can never be valid, whatever SQLite's comparison of it would say."""
    session = manager.new_session()
    session.add_messages(numbered(3))
    session.save_checkpoint(cp(1))
    with raw(db_path) as conn:
        conn.execute("UPDATE checkpoints SET covered = ?", (covered,))
    session.pop_message()
    assert session.get_checkpoint() is None
    assert checkpoint_rows(db_path) == []


def test_pop_of_nothing_keeps_even_a_corrupt_checkpoint_row(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    session.save_checkpoint(cp(1))
    with raw(db_path) as conn:
        conn.execute("UPDATE checkpoints SET covered = 'abc'")
    assert session.pop_message() is None
    with pytest.raises(CorruptRow):
        session.get_checkpoint()


def test_pop_keeps_a_checkpoint_that_still_fits_even_if_its_anchor_is_corrupt(tmp_path: Path) -> None:
    """Only covered decides (R-CKP-3); the row stays for get_checkpoint to report (R-CKP-8)."""
    with Manager(fixture_copy("corrupt-checkpoint.db", tmp_path)) as manager:
        session = manager.open_session(B)  # covered 1, anchor a blob, two messages
        session.pop_message()
        with pytest.raises(CorruptRow):
            session.get_checkpoint()


# --- The format version and the upgrade (R-DB-2, R-CKP-6) ---


def table_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table of the file except sqlite_master and the search index (R-SRCH-3), in a fixed order."""
    with raw(path) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'messages\\_fts%' ESCAPE '\\'"
                " ORDER BY name"
            )
        ]
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}


def user_version(path: Path) -> int:
    with raw(path) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def assert_spec_schema(path: Path) -> None:
    expected = sqlite3.connect(":memory:")
    expected.executescript(spec_schema_sql())
    with raw(path) as conn:
        assert schema_of(conn) == schema_of(expected)
    expected.close()


def test_the_format_version_is_5() -> None:
    assert FORMAT_VERSION == 5


def test_a_new_file_has_the_checkpoints_table_and_version_5(db_path: Path) -> None:
    with Manager(db_path):
        pass
    assert user_version(db_path) == 5
    assert_spec_schema(db_path)


@pytest.mark.parametrize(
    ("name", "version"), [("reference-v1.db", 1), ("document-schema.db", 0), ("checkpoint-v2.db", 2)]
)
def test_an_older_file_is_upgraded_in_place_keeping_every_row(tmp_path: Path, name: str, version: int) -> None:
    path = fixture_copy(name, tmp_path)
    assert user_version(path) == version
    before = table_rows(path)
    assert "context_state" not in before
    with Manager(path, clock=lambda: START + 5000) as manager:
        sessions = manager.list_sessions()
        session = manager.open_session(A)
        messages = session.get_messages()
        session.save_checkpoint(Checkpoint(2, message_anchor(messages[1]), "upgraded"))
    assert user_version(path) == 5
    assert_spec_schema(path)
    after = table_rows(path)
    assert after.pop("checkpoints") == [(A, 2, message_anchor(messages[1]), "upgraded", START + 5000)]
    before.pop("checkpoints", None)  # version 2 had one: replaced by the save above
    assert after.pop("context_state") == []
    assert after.pop("file_changes") == []  # R-UNDO-2c: gained, empty
    if "todos" not in before:  # the document's schema gains an empty todos table
        assert after.pop("todos") == []
    assert after.pop("sessions") == [(*row, "", "") for row in before.pop("sessions")]  # folder unknown (R-FIND-4)
    assert after == before
    with Manager(path) as manager:  # version 5 now: used as it is
        assert manager.list_sessions() == sessions
        assert manager.open_session(A).get_checkpoint() == Checkpoint(2, message_anchor(messages[1]), "upgraded")


def test_a_version_1_file_that_already_has_a_checkpoints_table_of_the_format_keeps_it(db_path: Path) -> None:
    with Manager(db_path) as manager:
        session = manager.new_session()
        session.save_checkpoint(cp(4))
    with raw(db_path) as conn:
        conn.execute("PRAGMA user_version = 1")
    with Manager(db_path) as manager:
        assert manager.open_session(session.session_id).get_checkpoint() == cp(4)
    assert user_version(db_path) == 5


def test_a_version_2_file_keeps_its_checkpoint_through_the_upgrade(tmp_path: Path) -> None:
    path = fixture_copy("checkpoint-v2.db", tmp_path)
    with Manager(path) as manager:
        session = manager.open_session(A)
        checkpoint = session.get_checkpoint()
        assert checkpoint is not None and checkpoint.covered == 4
        from_anchor = session.get_messages_from(checkpoint.covered - 1)
        assert message_anchor(from_anchor[0]) == checkpoint.anchor
        assert len(from_anchor) == 2
    assert user_version(path) == 5


@pytest.mark.parametrize(
    ("name", "setup"),
    [
        pytest.param("future-version.db", None, id="version 5"),
        pytest.param("foreign-checkpoints.db", None, id="foreign checkpoints table"),
        pytest.param("foreign-context-state.db", None, id="foreign context_state table"),
        pytest.param(
            "reference-v1.db",
            "CREATE TABLE checkpoints (session_id TEXT PRIMARY KEY, covered TEXT NOT NULL, anchor TEXT NOT NULL,"
            " summary TEXT NOT NULL, created_at INTEGER NOT NULL)",
            id="checkpoints table with covered declared TEXT",
        ),
        pytest.param(
            "reference-v1.db",
            "CREATE TABLE checkpoints (session_id TEXT PRIMARY KEY, covered INTEGER NOT NULL, anchor TEXT NOT NULL,"
            " summary TEXT NOT NULL)",
            id="checkpoints table without created_at",
        ),
        pytest.param(
            "reference-v1.db",
            "PRAGMA user_version = 7",
            id="version 7",
        ),
    ],
)
def test_an_unsupported_file_is_refused_and_left_byte_identical(
    tmp_path: Path, name: str, setup: str | None
) -> None:
    path = fixture_copy(name, tmp_path)
    if setup is not None:
        with raw(path) as conn:
            conn.execute(setup)
    before = path.read_bytes()
    with pytest.raises(UnsupportedSchema) as excinfo:
        Manager(path)
    assert excinfo.value.code == "unsupported_schema"
    assert str(path) in str(excinfo.value)
    assert path.read_bytes() == before
    assert not Path(f"{path}-journal").exists()
