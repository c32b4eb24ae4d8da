"""Finding and continuing sessions: prefixes, drafts, the recent list and titles (SPEC R-FIND-1 … R-FIND-3).

The conformance cases pin each rule on small examples; these tests add what a step list cannot
show: threads sharing a draft, a second Manager seeing a draft's row appear, titles of contents
SQLite's text functions mishandle, and titles checked against a plain restatement of the rule.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness9_ref.memory.storage import (
    TITLE_LIMIT,
    AmbiguousSessionId,
    Checkpoint,
    InvalidArgument,
    InvalidSessionId,
    Manager,
    SessionError,
    SessionNotFound,
    SessionSummary,
)
from harness9_ref.memory.storage._find import make_title
from harness9_ref.planning import TodoItem
from harness9_ref.schema import Message, ToolCall
from tests.fakes import user
from tests.memory.helpers import START, Clock, raw

WHITE_SPACE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())


def ids_with_prefix(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i:0{8 - len(prefix)}x}-0000-4000-8000-000000000000" for i in range(n)]


# --- R-FIND-1 ---


def test_an_ambiguous_prefix_lists_ten_candidates_most_recent_first(db_path: Path, clock: Clock) -> None:
    made = iter(ids_with_prefix("ab", 12))
    with Manager(db_path, clock=clock, new_id=lambda: next(made)) as manager:
        sessions = []
        for _ in range(12):
            clock.tick()
            sessions.append(manager.new_session())
        with pytest.raises(AmbiguousSessionId) as caught:
            manager.resolve_session_id("AB00")
    newest_first = [s.session_id for s in reversed(sessions)]
    assert caught.value.candidates == tuple(newest_first[:10])
    assert caught.value.code == "ambiguous_session_id"
    assert isinstance(caught.value, SessionError)
    message = str(caught.value)
    assert "\n" not in message and "12 sessions" in message and message.endswith(", …")
    assert all(session_id in message for session_id in newest_first[:10])
    assert newest_first[10] not in message


def test_resolve_refuses_what_is_not_text(manager: Manager) -> None:
    with pytest.raises(InvalidSessionId):
        manager.resolve_session_id(1234)  # type: ignore[arg-type]


def test_a_prefix_never_matches_a_mis_cased_stored_id(db_path: Path) -> None:
    """The text is lower-cased; a stored id must start with it as stored (another program's upper-case id does not)."""
    with Manager(db_path) as manager:
        manager.new_session()
    with raw(db_path) as conn:
        # letters in the prefix: an upper-cased random id may start with eight digits
        conn.execute("UPDATE sessions SET id = 'ABCDEF01-2345-4678-89AB-CDEF01234567'")
    with Manager(db_path) as manager, pytest.raises(SessionNotFound):
        manager.resolve_session_id("abcdef01")


# --- R-FIND-2 ---


def test_a_draft_is_invisible_to_another_manager_until_its_first_write(db_path: Path, clock: Clock) -> None:
    with Manager(db_path, clock=clock) as first, Manager(db_path, clock=clock) as second:
        draft = first.new_session(draft=True)
        assert second.list_sessions() == []
        with pytest.raises(SessionNotFound):
            second.open_session(draft.session_id)
        clock.tick(30)
        draft.add_messages([user("now it exists")])
        info = second.list_sessions()[0]
        assert (info.id, info.created_at, info.updated_at) == (draft.session_id, START + 30, START + 30)
        assert second.open_session(draft.session_id).get_messages() == [user("now it exists")]


def test_a_failed_first_write_leaves_the_draft_a_draft(manager: Manager, db_path: Path) -> None:
    """The row goes in with the write, so a write that rolls back takes the row with it."""
    draft = manager.new_session(draft=True)
    with raw(db_path) as conn:  # make the message insert fail inside the transaction
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    with pytest.raises(SessionError):
        draft.add_messages([user("lost")])
    assert manager.list_sessions() == []
    assert draft.get_messages() == []
    with raw(db_path) as conn:
        conn.execute("DROP TRIGGER refuse")
    draft.add_messages([user("kept")])
    assert [info.id for info in manager.list_sessions()] == [draft.session_id]


def test_threads_saving_one_draft_create_one_row(manager: Manager) -> None:
    draft = manager.new_session(draft=True)
    barrier = threading.Barrier(4)

    def write(i: int) -> None:
        barrier.wait()
        if i % 2:
            draft.add_messages([user(f"m{i}")])
        else:
            draft.save_todos([TodoItem(str(i), "t", "pending")])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [info.message_count for info in manager.list_sessions()] == [2]


def test_a_draft_checkpoint_and_todos_read_back(manager: Manager) -> None:
    draft = manager.new_session(draft=True)
    draft.save_checkpoint(Checkpoint(1, "a" * 64, "summary"))
    assert draft.get_checkpoint() == Checkpoint(1, "a" * 64, "summary")
    assert draft.get_todos() == []


def test_a_draft_of_a_closed_manager_is_closed(db_path: Path) -> None:
    manager = Manager(db_path)
    draft = manager.new_session(draft=True)
    manager.close()
    with pytest.raises(SessionError, match="closed"):
        draft.get_messages()


# --- R-FIND-3 ---


def spec_title(content: str) -> str:
    """R-FIND-3 restated: lines end at CR or LF, blank means only str.isspace characters."""
    for line in re.split("[\r\n]", content):
        if line.strip(WHITE_SPACE):
            text = line.strip(WHITE_SPACE)
            return text if len(text) <= 60 else text[:59] + "…"
    return ""


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \t\r\n\u3000\u2028\x00é修𝄞"), max_size=200))
def test_make_title_is_the_rule(content: str) -> None:
    assert make_title(content) == spec_title(content)
    assert len(make_title(content)) <= TITLE_LIMIT


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lead=st.sampled_from(["", " ", "\n", "\r\n", "\u3000"]),
    repeat=st.integers(0, 12_000),
    body=st.text(alphabet=st.sampled_from("ab 修\x00"), min_size=0, max_size=120),
)
def test_titles_of_long_contents_equal_the_rule(tmp_path: Path, lead: str, repeat: int, body: str) -> None:
    """The title reads only the first bytes of a long message when they settle it; the result never differs."""
    content = lead * repeat + body + "\ntail"
    path = tmp_path / f"t{abs(hash((lead, repeat, body)))}.db"
    with Manager(path) as manager:
        manager.new_session().add_messages([user(content)])
        assert manager.recent_sessions()[0].title == spec_title(content)
    path.unlink()


def test_a_title_of_invalid_utf8_text_has_replacement_characters(manager: Manager, db_path: Path) -> None:
    session = manager.new_session()
    session.add_messages([user("placeholder")])
    with raw(db_path) as conn:
        conn.execute("UPDATE messages SET content = CAST(X'666978ff20626f7567' AS TEXT)")
    assert manager.recent_sessions()[0].title == "fix\ufffd boug"


def test_recent_sessions_summary_fields(manager: Manager, clock: Clock) -> None:
    session = manager.new_session()
    clock.tick(5)
    session.add_messages(
        [
            Message("assistant", "", (ToolCall("c", "bash", "{}"),)),
            Message("user", "out", tool_call_id="c"),
            user("  Title here  \nrest"),
        ]
    )
    assert manager.recent_sessions() == [
        SessionSummary(session.session_id, START, START + 5, 3, "Title here")
    ]
    assert manager.recent_sessions()[0].to_dict()["title"] == "Title here"


@pytest.mark.parametrize(("limit", "offset"), [(-1, 0), (0, -1)])
def test_recent_sessions_refuses_negative_arguments(manager: Manager, limit: int, offset: int) -> None:
    with pytest.raises(InvalidArgument):
        manager.recent_sessions(limit, offset)


def test_recent_sessions_with_huge_limit_and_offset(manager: Manager) -> None:
    manager.new_session().add_messages([user("x")])
    assert len(manager.recent_sessions(2**70)) == 1
    assert manager.recent_sessions(1, 2**70) == []
