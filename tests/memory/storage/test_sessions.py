"""Session semantics (harness9_ref/memory/storage/_sql_session.py, _session.py (MemorySession); SPEC R-SES, R-DB-4 … R-DB-8).

The tests taking ``new_session`` run once against ``SQLiteSession`` on a real file and once
against ``MemorySession`` (R-SES-1, R-SES-9). Those that look at ``updated_at``, at the stored
columns or at rows written behind the package's back are SQLite only; they read the file with a
second, plain ``sqlite3`` connection, as the ``sqlite3`` shell would.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness9_ref.memory.storage import (
    CorruptRow,
    Manager,
    MemorySession,
    Session,
    SessionDatabaseError,
    StatefulSession,
)
from harness9_ref.planning import TodoItem
from harness9_ref.schema import ROLE_ASSISTANT, Message, SchemaError
from tests.fakes import assistant, call, result, system, user
from tests.memory.helpers import START, Clock, Database, numbered, raw
from tests.memory.session_worker import batch_messages, batch_size, split_batches

# R-SES-2, copied from SPEC.md rather than imported, so that a wrong constant cannot pass.
SPEC_SESSION_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def updated_at(manager: Manager, session: Session) -> int:
    (info,) = [s for s in manager.list_sessions() if s.id == session.session_id]
    return info.updated_at


def newest_row_id(path: Path, session: Session) -> int:
    with raw(path) as conn:
        row = conn.execute("SELECT max(id) FROM messages WHERE session_id = ?", (session.session_id,)).fetchone()
    assert row[0] is not None
    return int(row[0])


def set_column(path: Path, row_id: int, column: str, value: object) -> None:
    with raw(path) as conn:
        conn.execute(f'UPDATE messages SET "{column}" = ? WHERE id = ?', (value, row_id))


# --- Identity (R-SES-2, R-SES-9) ---


def test_new_sessions_have_distinct_well_formed_ids(new_session: Callable[[], Session]) -> None:
    ids = {new_session().session_id for _ in range(20)}
    assert len(ids) == 20
    assert all(SPEC_SESSION_ID.match(i) for i in ids)


def test_memory_session_keeps_a_given_id_and_refuses_a_malformed_one() -> None:
    given_id = "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert MemorySession(given_id).session_id == given_id
    with pytest.raises(ValueError) as excinfo:
        MemorySession(given_id.upper())
    assert getattr(excinfo.value, "code", None) == "invalid_session_id"


def test_a_new_session_has_no_messages_and_no_todos(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    assert session.get_messages() == []
    assert session.get_todos() == []
    assert session.pop_message() is None


# --- get_messages (R-SES-3) ---


@pytest.mark.parametrize(
    ("count", "limit", "expected"),
    [
        (0, 0, []),
        (0, 1, []),
        (5, 0, [0, 1, 2, 3, 4]),
        (5, 1, [4]),
        (5, 3, [2, 3, 4]),
        (5, 5, [0, 1, 2, 3, 4]),
        (5, 6, [0, 1, 2, 3, 4]),
        (5, 1000, [0, 1, 2, 3, 4]),
        (5, sys.maxsize, [0, 1, 2, 3, 4]),
    ],
)
def test_get_messages_returns_all_for_zero_else_the_newest_limit_oldest_first(
    new_session: Callable[[], Session], count: int, limit: int, expected: list[int]
) -> None:
    session = new_session()
    session.add_messages(numbered(count))
    assert session.get_messages(limit) == [user(f"m{i}") for i in expected]


@pytest.mark.parametrize(
    "new_session",
    [
        "memory",
        pytest.param(
            "sqlite"
        ),
    ],
    indirect=True,
)
def test_a_limit_beyond_64_bits_returns_every_message(new_session: Callable[[], Session]) -> None:
    session = new_session()
    session.add_messages(numbered(3))
    assert session.get_messages(2**63) == numbered(3)


def test_get_messages_takes_the_newest_across_batches(new_session: Callable[[], Session]) -> None:
    session = new_session()
    for start in range(0, 12, 4):
        session.add_messages(numbered(4, start))
    assert session.get_messages(6) == numbered(6, 6)
    assert session.get_messages() == numbered(12)


@pytest.mark.parametrize("limit", [-1, -100])
def test_a_negative_limit_raises_invalid_argument_and_changes_nothing(
    new_session: Callable[[], Session], limit: int
) -> None:
    session = new_session()
    session.add_messages(numbered(3))
    with pytest.raises(ValueError) as excinfo:
        session.get_messages(limit)
    assert getattr(excinfo.value, "code", None) == "invalid_argument"
    assert session.get_messages() == numbered(3)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(st.lists(st.text(max_size=20), max_size=5), max_size=6),
    limit=st.integers(min_value=0, max_value=40),
)
def test_get_messages_is_the_newest_limit_of_everything_added_in_order(
    new_session: Callable[[], Session], batches: list[list[str]], limit: int
) -> None:
    session = new_session()
    added: list[Message] = []
    for texts in batches:
        batch = [user(t) for t in texts]
        session.add_messages(batch)
        added.extend(batch)
    assert session.get_messages(limit) == (added[-limit:] if limit else added)


# --- add_messages (R-SES-4) ---


def test_adding_nothing_changes_nothing(new_session: Callable[[], Session]) -> None:
    session = new_session()
    session.add_messages(numbered(2))
    session.add_messages([])
    session.add_messages(())
    assert session.get_messages() == numbered(2)


class BrokenBatch(Sequence[Message]):
    """A batch whose second message cannot be read, as when the caller's list is built lazily."""

    def __len__(self) -> int:
        return 3

    def __getitem__(self, index: int) -> Message:  # type: ignore[override]
        if index == 1:
            raise RuntimeError("the second message could not be produced")
        if not 0 <= index < 3:
            raise IndexError(index)
        return user(f"broken {index}")


def test_a_batch_that_fails_midway_stores_none_of_its_messages(new_session: Callable[[], Session]) -> None:
    session = new_session()
    session.add_messages(numbered(2))
    with pytest.raises(RuntimeError):
        session.add_messages(BrokenBatch())
    assert session.get_messages() == numbered(2)


ROUND_TRIP: list[tuple[str, Message]] = [
    ("system prompt", system()),
    ("empty content", user("")),
    ("outside the BMP", user("😀 𝄞 𠀀 👩‍💻 and 中文")),
    ("control characters and NUL", user("a\x00b\x08\x0c\r\n\t\x7f\u2028<>&\\\"")),
    ("result with empty content", result("call_1", "")),
    ("arguments with spaces and newlines", assistant("", call("c", "bash", '{ "command" : "ls -la",\n  "n": 1 }'))),
    ("arguments with unicode", assistant("", call("c", "write_file", '{"text":"中文 😀 \\ud83d\\ude00"}'))),
    ("invalid JSON arguments", assistant("", call("c", "read_file", '{"path":'))),
    ("empty arguments", assistant("", call("c", "bash", ""))),
    ("arguments padded with white space", assistant("", call("c", "bash", ' {"a": 1}\n'))),
    ("arguments with a leading newline", assistant("", call("c", "bash", '\n{"a":1}'))),
    ("arguments that are a JSON string", assistant("", call("c", "bash", '"just text"'))),
    ("arguments that are a JSON number", assistant("", call("c", "bash", "-0.50e+3"))),
    ("arguments that are JSON literals", assistant("", call("a", "x", "null"), call("b", "y", "true"))),
    ("arguments with an escaped lone surrogate", assistant("", call("c", "bash", '"\\ud800"'))),
    ("arguments with NaN", assistant("", call("c", "bash", '{"a": NaN}'))),
    ("white space only arguments", assistant("", call("c", "bash", " \t\r\n"))),
    ("empty ids and names", assistant("", call("", "", "{}"))),
    ("non-BMP ids and names", assistant("think 🤔", call("调用_😀", "工具", "[1, 2]"))),
    ("several calls in order", assistant("", call("a", "x", "{}"), call("b", "y", "oops"), call("c", "z", ""))),
    ("a tool_call_id and calls on one message", Message(ROLE_ASSISTANT, "x", (call("a"),), "id_1")),
]


@pytest.mark.parametrize("message", [m for _, m in ROUND_TRIP], ids=[name for name, _ in ROUND_TRIP])
def test_every_message_reads_back_exactly_as_added(new_session: Callable[[], Session], message: Message) -> None:
    session = new_session()
    session.add_messages([user("before"), message, user("after")])
    assert session.get_messages() == [user("before"), message, user("after")]
    assert session.get_messages(2)[0] == message
    for stored, added in zip(session.get_messages()[1].tool_calls, message.tool_calls):
        assert stored.arguments.encode("utf-8") == added.arguments.encode("utf-8")


def test_the_caller_and_the_session_share_no_lists(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    batch = numbered(2)
    session.add_messages(batch)
    batch.append(user("later"))
    session.get_messages().append(user("appended"))
    todos = [TodoItem("1", "plan", "pending")]
    session.save_todos(todos)
    todos.clear()
    session.get_todos().clear()
    assert session.get_messages() == numbered(2)
    assert session.get_todos() == [TodoItem("1", "plan", "pending")]


def test_batches_added_from_several_threads_never_interleave(new_session: Callable[[], Session]) -> None:
    session = new_session()
    errors: list[BaseException] = []

    def write(writer: str) -> None:
        try:
            for batch in range(25):
                session.add_messages(batch_messages(writer, batch, batch_size(writer, batch)))
        except BaseException as exc:  # reported below, so that a failure names its thread
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(f"t{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    batches = split_batches(session.get_messages())
    assert {writer: [b for b, _ in got] for writer, got in batches.items()} == {
        f"t{i}": list(range(25)) for i in range(4)
    }


# --- pop_message (R-SES-5) ---


def test_pop_removes_and_returns_the_newest_message(new_session: Callable[[], Session]) -> None:
    session = new_session()
    session.add_messages(numbered(3))
    assert session.pop_message() == user("m2")
    assert session.get_messages() == numbered(2)
    assert [session.pop_message(), session.pop_message(), session.pop_message()] == [user("m1"), user("m0"), None]
    assert session.get_messages() == []


def test_pop_then_add_appends_after_the_remaining_messages(new_session: Callable[[], Session]) -> None:
    session = new_session()
    session.add_messages(numbered(3))
    session.pop_message()
    session.add_messages([user("new")])
    assert session.get_messages() == [user("m0"), user("m1"), user("new")]


# --- clear (R-SES-6) ---


def test_clear_removes_the_messages_and_keeps_the_session_and_its_todos(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    todos = [TodoItem("1", "read the code", "completed"), TodoItem("2", "fix it", "in_progress")]
    session.add_messages(numbered(4))
    session.save_todos(todos)
    session.clear()
    assert session.get_messages() == []
    assert session.get_todos() == todos
    session.add_messages([user("again")])
    assert session.get_messages() == [user("again")]


# --- todos (R-SES-7) ---


def test_save_todos_replaces_the_whole_list_in_order(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    first = [TodoItem("a", "one", "pending"), TodoItem("b", "two", "in_progress"), TodoItem("c", "three", "completed")]
    session.save_todos(first)
    assert session.get_todos() == first
    second = [TodoItem("c", "three", "completed"), TodoItem("z", "四 😀", "pending")]
    session.save_todos(second)
    assert session.get_todos() == second


def test_duplicate_todos_are_kept_as_given(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    items = [TodoItem("1", "same", "pending"), TodoItem("1", "same", "pending"), TodoItem("1", "other", "completed")]
    session.save_todos(items)
    assert session.get_todos() == items


def test_saving_an_empty_todo_list_removes_every_item(new_session: Callable[[], StatefulSession]) -> None:
    session = new_session()
    session.save_todos([TodoItem("1", "x", "pending")])
    session.save_todos([])
    assert session.get_todos() == []


def test_a_todo_with_another_status_is_a_schema_error_and_nothing_is_saved(
    new_session: Callable[[], StatefulSession],
) -> None:
    session = new_session()
    kept = [TodoItem("1", "x", "pending")]
    session.save_todos(kept)
    with pytest.raises(SchemaError) as excinfo:
        session.save_todos([TodoItem("2", "y", "pending"), TodoItem("3", "z", "done")])
    assert excinfo.value.code == "schema_error"
    assert excinfo.value.path.endswith("status")
    assert session.get_todos() == kept


# --- SQLite only: updated_at (R-SES-4 … R-SES-7, R-DB-4) ---


def test_new_session_sets_created_and_updated_at_to_the_clock_in_whole_seconds(
    manager: Manager, clock: Clock
) -> None:
    clock.now = START + 0.9
    session = manager.new_session()
    (info,) = manager.list_sessions()
    assert (info.id, info.created_at, info.updated_at, info.message_count) == (session.session_id, START, START, 0)


WRITES: list[tuple[str, Callable[[StatefulSession], object]]] = [
    ("add_messages", lambda s: s.add_messages([user("x")])),
    ("pop_message", lambda s: s.pop_message()),
    ("clear", lambda s: s.clear()),
    ("save_todos", lambda s: s.save_todos([TodoItem("1", "x", "pending")])),
    ("save_todos of nothing", lambda s: s.save_todos([])),
]


@pytest.mark.parametrize("operation", [op for _, op in WRITES], ids=[name for name, _ in WRITES])
def test_each_write_sets_updated_at_and_keeps_created_at(
    manager: Manager, clock: Clock, operation: Callable[[StatefulSession], object]
) -> None:
    session = manager.new_session()
    session.add_messages(numbered(2))
    now = clock.tick()
    operation(session)
    (info,) = manager.list_sessions()
    assert (info.created_at, info.updated_at) == (START, now)
    assert manager.open_session(session.session_id).session_id == session.session_id


READS: list[tuple[str, Callable[[StatefulSession], object]]] = [
    ("get_messages", lambda s: s.get_messages()),
    ("get_messages with a limit", lambda s: s.get_messages(1)),
    ("get_todos", lambda s: s.get_todos()),
    ("add_messages of nothing", lambda s: s.add_messages([])),
]


@pytest.mark.parametrize("operation", [op for _, op in READS], ids=[name for name, _ in READS])
def test_reads_and_empty_adds_leave_updated_at_alone(
    manager: Manager, clock: Clock, operation: Callable[[StatefulSession], object]
) -> None:
    session = manager.new_session()
    session.add_messages(numbered(2))
    clock.tick()
    operation(session)
    manager.list_sessions()
    manager.open_session(session.session_id)
    assert updated_at(manager, session) == START


def test_pop_of_an_empty_session_returns_none_and_leaves_updated_at_alone(manager: Manager, clock: Clock) -> None:
    session = manager.new_session()
    clock.tick()
    assert session.pop_message() is None
    assert updated_at(manager, session) == START


def test_a_negative_limit_leaves_updated_at_alone(manager: Manager, clock: Clock) -> None:
    session = manager.new_session()
    clock.tick()
    with pytest.raises(ValueError):
        session.get_messages(-1)
    assert updated_at(manager, session) == START


# --- Atomic writes on both stores (R-SES-4, R-SES-7, R-DB-8, R-PG-7) ---


def test_add_is_all_or_nothing_when_the_database_refuses_a_later_message(
    stored: Manager, database: Database, clock: Clock
) -> None:
    session = stored.new_session()
    session.add_messages(numbered(2))
    database.refuse_inserts("messages", "refused by the test", "REFUSE")
    clock.tick()
    with pytest.raises(SessionDatabaseError, match="refused by the test") as excinfo:
        session.add_messages([user("first of batch"), user("REFUSE"), user("third of batch")])
    assert excinfo.value.code == "database_error"
    assert session.get_messages() == numbered(2)
    assert updated_at(stored, session) == START
    assert database.query("SELECT count(*) FROM messages") == [(2,)]
    session.add_messages([user("after")])
    assert session.get_messages() == [*numbered(2), user("after")]


def test_save_todos_is_all_or_nothing_when_the_database_refuses_a_later_item(stored: Manager, database: Database) -> None:
    session = stored.new_session()
    kept = [TodoItem("1", "kept", "pending")]
    session.save_todos(kept)
    database.refuse_inserts("todos", "refused by the test", "REFUSE")
    with pytest.raises(SessionDatabaseError, match="refused by the test"):
        session.save_todos([TodoItem("2", "new", "pending"), TodoItem("3", "REFUSE", "pending")])
    assert session.get_todos() == kept


# --- SQLite only: the stored columns (R-DB-5 … R-DB-7) ---


def test_the_tool_calls_column_holds_the_spec_examples_byte_for_byte(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    session.add_messages(
        [
            assistant("", call("call_1", "read_file", '{"path": "a.go"}')),
            assistant("", call("call_2", "read_file", '{"path":')),
            assistant("", call("call_3", "bash", "")),
        ]
    )
    with raw(db_path) as conn:
        columns = [row[0] for row in conn.execute("SELECT tool_calls FROM messages ORDER BY id")]
    assert columns == [
        '[{"id":"call_1","name":"read_file","arguments":{"path": "a.go"}}]',
        '[{"id":"call_2","name":"read_file","arguments":"{\\"path\\":","arguments_raw":true}]',
        '[{"id":"call_3","name":"bash","arguments":"","arguments_raw":true}]',
    ]


def test_a_message_without_calls_or_call_id_stores_null_in_both_columns(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    session.add_messages([user(""), assistant("text"), result("call_9", "out")])
    with raw(db_path) as conn:
        rows = conn.execute(
            "SELECT role, content, typeof(content), tool_calls, tool_call_id FROM messages ORDER BY id"
        ).fetchall()
    assert rows == [
        ("user", "", "text", None, None),
        ("assistant", "text", "text", None, None),
        ("user", "out", "text", None, "call_9"),
    ]


def test_every_row_of_a_batch_has_the_batch_time_and_the_ids_follow_message_order(
    manager: Manager, clock: Clock, db_path: Path
) -> None:
    session = manager.new_session()
    first = clock.tick()
    session.add_messages(numbered(3))
    second = clock.tick()
    session.add_messages(numbered(2, 3))
    with raw(db_path) as conn:
        rows = conn.execute("SELECT content, created_at FROM messages ORDER BY id").fetchall()
    assert rows == [("m0", first), ("m1", first), ("m2", first), ("m3", second), ("m4", second)]


def test_todos_are_stored_one_row_per_item_with_positions_from_zero(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    session.save_todos([TodoItem("b", "two", "completed"), TodoItem("a", "one", "pending")])
    with raw(db_path) as conn:
        rows = conn.execute("SELECT session_id, position, id, content, status FROM todos ORDER BY position").fetchall()
    assert rows == [(session.session_id, 0, "b", "two", "completed"), (session.session_id, 1, "a", "one", "pending")]


@pytest.mark.parametrize("stored", [None, ""])
def test_a_null_or_empty_tool_call_id_reads_as_no_id(manager: Manager, db_path: Path, stored: str | None) -> None:
    session = manager.new_session()
    session.add_messages([result("call_1", "out")])
    set_column(db_path, newest_row_id(db_path, session), "tool_call_id", stored)
    assert session.get_messages() == [user("out")]


# --- SQLite only: rows that cannot be decoded (R-SES-5, R-DB-6, R-MGR-9) ---


def test_pop_of_an_undecodable_row_raises_corrupt_row_and_the_row_stays(
    manager: Manager, clock: Clock, db_path: Path
) -> None:
    session = manager.new_session()
    session.add_messages([user("older"), assistant("", call("c"))])
    row_id = newest_row_id(db_path, session)
    set_column(db_path, row_id, "tool_calls", "not json")
    clock.tick()
    with pytest.raises(CorruptRow) as excinfo:
        session.pop_message()
    assert excinfo.value.code == "corrupt_row"
    assert f"row {row_id}" in str(excinfo.value)
    assert updated_at(manager, session) == START
    with raw(db_path) as conn:
        assert conn.execute("SELECT id FROM messages ORDER BY id DESC LIMIT 1").fetchone() == (row_id,)
    for limit in (0, 1):
        with pytest.raises(CorruptRow, match=rf"\brow {row_id}\b"):
            session.get_messages(limit)
    set_column(db_path, row_id, "tool_calls", None)
    assert session.pop_message() == assistant("")
    assert session.get_messages() == [user("older")]


def test_an_undecodable_older_row_fails_the_whole_read_and_nothing_partial_is_returned(
    manager: Manager, db_path: Path
) -> None:
    session = manager.new_session()
    session.add_messages([assistant("", call("c"))])
    corrupt_id = newest_row_id(db_path, session)
    session.add_messages(numbered(2))
    set_column(db_path, corrupt_id, "tool_calls", '[{"id": 7}]')
    assert session.get_messages(2) == numbered(2)
    with pytest.raises(CorruptRow, match=rf"\brow {corrupt_id}\b"):
        session.get_messages()
    with pytest.raises(CorruptRow):
        session.get_messages(3)


@pytest.mark.parametrize(
    ("column", "value"),
    [("role", "tool"), ("role", "USER"), ("content", b"\xff\xfe"), ("tool_call_id", b"c"), ("tool_calls", b"[]")],
    ids=["role tool", "role upper-case", "content a blob", "tool_call_id a blob", "tool_calls a blob"],
)
def test_a_row_with_a_bad_role_or_column_type_raises_corrupt_row(
    manager: Manager, db_path: Path, column: str, value: object
) -> None:
    session = manager.new_session()
    session.add_messages([user("x")])
    row_id = newest_row_id(db_path, session)
    set_column(db_path, row_id, column, value)
    with pytest.raises(CorruptRow, match=rf"\brow {row_id}\b"):
        session.get_messages()
    with pytest.raises(CorruptRow):
        session.pop_message()
    assert len(manager.list_sessions()) == 1 and manager.list_sessions()[0].message_count == 1


def test_content_that_is_not_utf8_raises_corrupt_row_naming_the_row(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    session.add_messages([user("x")])
    row_id = newest_row_id(db_path, session)
    with raw(db_path) as conn:
        conn.execute("UPDATE messages SET content = CAST(X'FF' AS TEXT) WHERE id = ?", (row_id,))
    with pytest.raises(CorruptRow, match=rf"\brow {row_id}\b"):
        session.get_messages()


def test_a_stored_todo_with_an_unknown_status_raises_corrupt_row_naming_the_session(
    manager: Manager, db_path: Path
) -> None:
    session = manager.new_session()
    session.save_todos([TodoItem("1", "x", "pending")])
    with raw(db_path) as conn:
        conn.execute("UPDATE todos SET status = 'done'")
    with pytest.raises(CorruptRow, match=session.session_id):
        session.get_todos()
