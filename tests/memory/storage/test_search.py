"""Search equals a scan, with or without the index, whatever others write (SPEC R-SRCH-1 … R-SRCH-3).

``scan`` below restates R-SRCH-1 and R-SRCH-2 over the rows a plain connection reads, sharing no
code with the package. Random histories, changed behind the index's back by another connection
(appends, deletes, whole sessions removed, a Python with other Unicode tables), must give
exactly its answer, through the index and through a Manager that cannot use it.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness9_ref.memory.storage import InvalidArgument, Manager, SearchHit, _index, _sqlite_db
from harness9_ref.schema import Message, ToolCall
from tests.fakes import user
from tests.memory.helpers import Clock, raw

WHITE_SPACE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
ALPHABET = "abcAB İßẞσΣς\u3000\n\r\x00é修𝄞ǅ"


@pytest.fixture
def no_fts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Managers opened inside behave as on an SQLite without FTS5."""
    monkeypatch.setattr(_index, "index_available", lambda: False)
    monkeypatch.setattr("harness9_ref.memory.storage._sqlite_db.index_available", lambda: False)
    yield


def text_of(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def spec_title(content: str) -> str:
    for line in re.split("[\r\n]", content):
        if line.strip(WHITE_SPACE):
            text = line.strip(WHITE_SPACE)
            return text if len(text) <= 60 else text[:59] + "…"
    return ""


def spec_snippet(content: str, term: str) -> str:
    i = content.lower().find(term)
    start, end = max(0, i - 30), i + len(term) + 50
    piece = content[start:end].replace("\r", " ").replace("\n", " ")
    return ("…" if start else "") + piece + ("…" if end < len(content) else "")


def scan(path: Path, query: str, limit: int = 20) -> list[dict[str, Any]]:
    """R-SRCH-1 and R-SRCH-2 by brute force over every row."""
    terms = [t.lower() for t in query.split(None)]
    conn = sqlite3.connect(path)
    conn.text_factory = bytes
    try:
        sessions = {text_of(i): u for i, u in conn.execute("SELECT id, updated_at FROM sessions")}
        rows = [(i, text_of(s), text_of(c), r, t) for i, s, c, r, t in conn.execute(
            "SELECT id, session_id, content, role, tool_call_id FROM messages ORDER BY id"
        )]
    finally:
        conn.close()
    matching: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    firsts: dict[str, str] = {}
    for _, sid, content, role, call_id in rows:
        counts[sid] = counts.get(sid, 0) + 1
        if role == b"user" and not call_id and sid not in firsts:
            firsts[sid] = content
        if all(term in content.lower() for term in terms):
            matching.setdefault(sid, []).append(content)
    found = [sid for sid in matching if sid in sessions]
    found.sort(key=lambda sid: (len(matching[sid]), sessions[sid], sid), reverse=True)
    return [
        {
            "id": sid,
            "updated_at": sessions[sid],
            "message_count": counts[sid],
            "title": spec_title(firsts.get(sid, "")),
            "snippet": spec_snippet(matching[sid][-1], terms[0]),
        }
        for sid in found[:limit]
    ]


def hits(manager: Manager, query: str, limit: int = 20) -> list[dict[str, Any]]:
    return [hit.to_dict() for hit in manager.search(query, limit)]


LETTERS = "abcAB İßẞσΣςé修𝄞ǅ\x00".replace(" ", "")
contents = st.one_of(
    st.text(alphabet=st.sampled_from(ALPHABET), max_size=40),
    st.lists(st.text(alphabet=st.sampled_from(LETTERS), min_size=3, max_size=6), min_size=1, max_size=4).map(" ".join),
)
queries = st.lists(st.text(alphabet=st.sampled_from(ALPHABET), min_size=1, max_size=5), min_size=1, max_size=3).map(
    " ".join
).filter(lambda q: q.split())
actions = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 3), st.lists(contents, min_size=1, max_size=4)),
        st.tuples(st.just("pop"), st.integers(0, 3)),
        st.tuples(st.just("clear"), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.integers(0, 3)),
        st.tuples(st.just("foreign_add"), st.integers(0, 3), contents),
        st.tuples(st.just("foreign_delete"), st.integers(0, 20)),
        st.tuples(st.just("foreign_drop_session"), st.integers(0, 3)),
        st.tuples(st.just("reopen"),),
    ),
    max_size=14,
)


def apply(path: Path, clock: Clock, plan: list[tuple[Any, ...]], checks: list[str]) -> None:
    ids = [f"{d * 8}-{d * 4}-4{d * 3}-8{d * 3}-{d * 12}" for d in "1234"]
    made = iter(ids)
    manager = Manager(path, clock=clock, new_id=lambda: next(made))
    sessions = [manager.new_session() for _ in ids]
    try:
        for step in plan:
            clock.tick(1)
            kind = step[0]
            if kind == "reopen":
                manager.close()
                manager = Manager(path, clock=clock)
                sessions = [manager.open_session(i) if _exists(path, i) else sessions[k] for k, i in enumerate(ids)]
            elif kind.startswith("foreign"):
                with raw(path) as conn:
                    conn.execute("PRAGMA foreign_keys = ON")
                    if kind == "foreign_add" and _exists(path, ids[step[1]]):
                        conn.execute(
                            "INSERT INTO messages (session_id, role, content, created_at) VALUES (?, 'user', ?, 1)",
                            (ids[step[1]], step[2]),
                        )
                    elif kind == "foreign_delete":
                        conn.execute("DELETE FROM messages WHERE id = ?", (step[1],))
                    elif kind == "foreign_drop_session":
                        conn.execute("DELETE FROM sessions WHERE id = ?", (ids[step[1]],))
            elif _exists(path, ids[step[1]]):  # else every call would be session_not_found
                session = sessions[step[1]]
                if kind == "add":
                    session.add_messages([user(c) for c in step[2]])
                elif kind == "pop":
                    session.pop_message()
                elif kind == "clear":
                    session.clear()
                elif kind == "delete":
                    manager.delete_session(ids[step[1]])
            if kind in ("add", "foreign_add"):  # a query from what was just written, so that it matches
                written = " ".join(step[-1] if kind == "foreign_add" else step[2])
                if written.split():
                    checks = [*checks[:3], " ".join(written.split()[:2])]
            for query in checks:
                assert hits(manager, query) == scan(path, query), (plan, query)
    finally:
        manager.close()


def _exists(path: Path, session_id: str) -> bool:
    with raw(path) as conn:
        return conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=actions, checks=st.lists(queries, min_size=1, max_size=3))
def test_search_equals_a_scan_whatever_others_write(tmp_path: Path, plan: list[tuple[Any, ...]], checks: list[str]) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
        apply(Path(folder) / "sessions.db", Clock(), plan, checks)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(0, 2), contents), max_size=20), query=queries)
def test_search_without_fts_equals_with_it(tmp_path: Path, rows: list[tuple[int, str]], query: str) -> None:
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "sessions.db"
    with Manager(path) as manager:
        assert manager.search_indexed
        sessions = [manager.new_session() for _ in range(3)]
        for which, content in rows:
            sessions[which].add_messages([user(content)])
        with_index = hits(manager, query)
    real = _index.index_available
    holders: tuple[Any, ...] = (_index, _sqlite_db)  # each module that holds the name the Manager calls
    try:
        for module in holders:
            module.index_available = lambda: False
        with Manager(path) as plain:
            assert not plain.search_indexed
            assert hits(plain, query) == with_index == scan(path, query)
    finally:
        for module in holders:
            module.index_available = real
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_a_manager_without_fts_leaves_stale_rows_the_next_one_removes(db_path: Path, no_fts: None) -> None:
    """Writes through a Manager that cannot keep the index are seen by search everywhere."""
    with Manager(db_path) as manager:
        assert not manager.search_indexed
        manager.new_session().add_messages([user("needle one")])
        assert [h.snippet for h in manager.search("needle")] == ["needle one"]


def test_writes_without_the_index_are_caught_up(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Manager(db_path) as indexed:
        session = indexed.new_session()
        session.add_messages([user("needle kept"), user("needle popped")])
    monkeypatch.setattr("harness9_ref.memory.storage._sqlite_db.index_available", lambda: False)
    with Manager(db_path) as plain:
        plain.open_session(session.session_id).pop_message()
        plain.open_session(session.session_id).add_messages([user("needle added")])
    monkeypatch.undo()
    with Manager(db_path) as indexed, raw(db_path) as conn:
        assert [h.message_count for h in indexed.search("needle")] == [2]
        assert indexed.search("popped") == []
        assert conn.execute("SELECT COUNT(*) FROM messages_fts_docsize").fetchone() == (2,)
        assert hits(indexed, "needle") == scan(db_path, "needle")


def test_open_indexes_a_file_of_the_go_original(db_path: Path) -> None:
    with raw(db_path) as conn:
        conn.executescript(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
            "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,"
            " content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT, created_at INTEGER NOT NULL,"
            " FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE);"
        )
        conn.execute("BEGIN")
        conn.execute("INSERT INTO sessions VALUES ('s', 1, 2)")
        conn.executemany(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES ('s', 'user', ?, 1)",
            [(f"row {i} {'needle' if i % 1000 == 0 else ''}",) for i in range(_index.TAIL_BATCH * 2 + 5)],
        )
        conn.execute("COMMIT")
    with Manager(db_path) as manager, raw(db_path) as conn:
        assert conn.execute("SELECT value FROM messages_fts_meta WHERE key = 'watermark'").fetchone() == (
            _index.TAIL_BATCH * 2 + 5,
        )
        assert manager.search("needle")[0].snippet == "row 4000 needle"
        assert hits(manager, "needle") == scan(db_path, "needle")


def test_another_unicode_version_rebuilds_the_index(db_path: Path) -> None:
    with Manager(db_path) as manager:
        manager.new_session().add_messages([user("ẞ upper sharp s")])
    with raw(db_path) as conn:  # as if written by a Python whose str.lower differs
        conn.execute("UPDATE messages_fts_meta SET value = 'harness9-ref 1; unicode 1.0' WHERE key = 'format'")
        conn.execute("DELETE FROM messages_fts")
    with Manager(db_path) as manager, raw(db_path) as conn:
        assert [h.snippet for h in manager.search("ß")] == ["ẞ upper sharp s"]
        assert conn.execute("SELECT value FROM messages_fts_meta WHERE key = 'format'").fetchone() == (
            _index.INDEX_FORMAT,
        )
        assert conn.execute("SELECT body FROM messages_fts").fetchall() == [("ß upper sharp s",)]


def test_invalid_utf8_content_is_searched_with_replacement_characters(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    with raw(db_path) as conn:  # another program appends bytes that are not UTF-8, as text and as a blob
        for content in ("CAST(X'6e6565646c65ff206865726520c3' AS TEXT)", "X'6e656564ff6c65'"):
            conn.execute(
                f"INSERT INTO messages (session_id, role, content, created_at) VALUES (?, 'user', {content}, 1)",
                (session.session_id,),
            )
    session.add_messages([user("a write of ours indexes them")])
    assert [h.snippet for h in manager.search("needle")] == ["needle\ufffd here \ufffd"]
    assert [h.message_count for h in manager.search("need\ufffd")] == [3]
    assert [h.title for h in manager.search("need\ufffdle")] == ["needle\ufffd here \ufffd"]
    assert hits(manager, "need") == scan(db_path, "need")


def test_search_hit_fields_and_tool_calls(manager: Manager, clock: Clock) -> None:
    session = manager.new_session()
    clock.tick(7)
    session.add_messages(
        [
            user("Find it"),
            Message("assistant", "", (ToolCall("c1", "bash", '{"q":"findme"}'),)),
            Message("user", "findme here", tool_call_id="c1"),
        ]
    )
    assert manager.search("FINDME") == [SearchHit(session.session_id, 1_700_000_007, 3, "Find it", "findme here")]


@pytest.mark.parametrize("query", ["", "   ", "\u3000\u2028", "\x1c\x85"])
def test_blank_queries_are_refused(manager: Manager, query: str) -> None:
    with pytest.raises(InvalidArgument):
        manager.search(query)


def test_negative_limit_is_refused(manager: Manager) -> None:
    with pytest.raises(InvalidArgument):
        manager.search("x", -1)


def test_the_index_changes_in_the_transaction_of_each_write(manager: Manager, db_path: Path) -> None:
    """Rows of the index come and go with their messages, so it never outgrows the file."""
    a, b = manager.new_session(), manager.new_session()
    a.add_messages([user("one"), user("two"), user("three")])
    b.add_messages([user("four")])
    a.pop_message()

    def indexed() -> list[tuple[int, str]]:
        with raw(db_path) as conn:
            return conn.execute("SELECT rowid, body FROM messages_fts ORDER BY rowid").fetchall()

    assert [body for _, body in indexed()] == ["one", "two", "four"]
    a.clear()
    assert [body for _, body in indexed()] == ["four"]
    manager.delete_session(b.session_id)
    assert indexed() == []


def test_searches_and_writes_from_threads_and_two_managers(db_path: Path) -> None:
    """Concurrent writers and searchers: every search answers as a scan of some committed state."""
    with Manager(db_path) as first, Manager(db_path) as second:
        sessions = [first.new_session(), second.new_session()]
        errors: list[BaseException] = []
        stop = threading.Event()

        def write(k: int) -> None:
            try:
                for i in range(60):
                    sessions[k].add_messages([user(f"needle {k} {i}"), user("filler")])
                    if i % 7 == 0:
                        sessions[k].pop_message()
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        def search(manager: Manager) -> None:
            try:
                while not stop.is_set():
                    for hit in manager.search("needle"):
                        assert hit.snippet.startswith("needle ")
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        writers = [threading.Thread(target=write, args=(k,)) for k in range(2)]
        readers = [threading.Thread(target=search, args=(m,)) for m in (first, second)]
        for thread in writers + readers:
            thread.start()
        for thread in writers:
            thread.join()
        stop.set()
        for thread in readers:
            thread.join()
        assert errors == []
        assert hits(first, "needle") == hits(second, "needle") == scan(db_path, "needle")
        assert [h.message_count for h in first.search("needle")] == [60 * 2 - 9] * 2  # 9 pops took a filler each
