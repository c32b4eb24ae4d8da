"""The engine's own tools, recall and todo (harness9_ref/engine/_own_tools.py; SPEC R-RCL).

The conformance cases (conformance/cases/engine_tools/) pin every observation over a list of
messages; these tests check what a case cannot: the history over a real session with the run's
unsaved messages after it, that nothing outside that history is read, paging of any text, and
failures of the session turned into observations.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness9_ref.engine import (
    ENGINE_TOOLS,
    RECALL_MAX_BYTES,
    RECALL_NO_MATCH,
    RECALL_SEARCH_LIMIT,
    HistorySource,
    ListHistory,
    SessionHistory,
    recall,
    run_engine_tool,
    write_todos,
)
from harness9_ref.memory.storage import Manager, MemorySession, SessionDatabaseError
from harness9_ref.planning import PLAN_HEADER, TodoItem, plan_block
from harness9_ref.schema import Message, ToolCall
from tests.spec_text import spec_section

_HEADER = re.compile(r"\[message (\d+) \(([^)]*)\): bytes (\d+)-(\d+) of (\d+)(?:; next page at offset (\d+))?\]\n")


def _user(content: str) -> Message:
    return Message("user", content)


def _read_all_pages(history: HistorySource, position: int) -> tuple[str, list[int]]:
    """The body put back together from its pages by following each page's next offset; the page sizes."""
    text, sizes, offset = "", [], 0
    while True:
        page = recall(history, json.dumps({"position": position, "offset": offset}))
        header = _HEADER.match(page)
        assert header is not None, page
        assert int(header.group(3)) == offset
        sizes.append(int(header.group(4)) - offset)
        text += page[header.end() :]
        if header.group(6) is None:
            assert int(header.group(4)) == int(header.group(5))
            return text, sizes
        offset = int(header.group(6))


@given(st.text(max_size=3 * RECALL_MAX_BYTES))
def test_pages_put_back_together_give_the_content_each_within_the_bound(content: str) -> None:
    content = content.encode("utf-8", "replace").decode("utf-8")  # no lone surrogate (R-MSG-6)
    text, sizes = _read_all_pages(ListHistory([_user(content)]), 0)
    assert text == content
    assert all(size <= RECALL_MAX_BYTES for size in sizes)
    assert all(size > RECALL_MAX_BYTES - 4 for size in sizes[:-1])  # only a character's bytes go to the next page


def test_definitions_are_spec_text_byte_for_byte() -> None:
    lines = [json.dumps(tool.to_dict(), separators=(",", ":"), ensure_ascii=False) for tool in ENGINE_TOOLS]
    section = spec_section("Recall and the plan")
    assert "\n".join(lines) in section


def test_session_history_continues_positions_past_the_stored_messages() -> None:
    session = MemorySession()
    session.add_messages([_user("stored zero"), _user("stored one")])
    history = SessionHistory(session, [_user("unsaved two")])
    assert history.count() == 3
    assert [history.read(p).content for p in range(3)] == ["stored zero", "stored one", "unsaved two"]
    assert recall(history, '{"position": 2}') == "[message 2 (user): bytes 0-11 of 11]\nunsaved two"
    assert recall(history, '{"query": "stored"}').splitlines()[1:] == [
        "message 1 (user, 10 bytes): stored one",
        "message 0 (user, 11 bytes): stored zero",
    ]


def test_session_history_sees_only_the_stored_messages_it_was_given() -> None:
    """A message stored after the history was made (another process) is not part of it (R-RCL-4)."""
    session = MemorySession()
    session.add_messages([_user("mine")])
    history = SessionHistory(session, [_user("this run")], stored=1)
    session.add_messages([_user("added later, mine too")])
    assert history.count() == 2
    assert history.read(1).content == "this run"
    assert list(history.scan()) == [_user("mine"), _user("this run")]
    assert recall(history, '{"query": "later"}') == RECALL_NO_MATCH


def test_recall_never_reads_another_session(tmp_path: Path) -> None:
    with Manager(tmp_path / "sessions.db") as manager:
        other = manager.new_session()
        other.add_messages([_user("secret of the other session")] * 3)
        mine = manager.new_session()
        mine.add_messages([_user("my own words")])
        history = SessionHistory(mine)
        assert recall(history, '{"query": "secret"}') == RECALL_NO_MATCH
        assert recall(history, '{"position": 1}').startswith("error: no message at position 1;")
        assert recall(history, '{"position": 0}').endswith("\nmy own words")


def test_search_shows_at_most_the_limit_newest_first() -> None:
    history = ListHistory([_user(f"match {i}") for i in range(RECALL_SEARCH_LIMIT + 5)])
    lines = recall(history, '{"query": "match"}').splitlines()
    assert lines[0] == f"[recall: {RECALL_SEARCH_LIMIT} of {RECALL_SEARCH_LIMIT + 5} matches, newest first]"
    assert [int(line.split()[1]) for line in lines[1:]] == list(range(RECALL_SEARCH_LIMIT + 4, 4, -1))


class _FailingHistory:
    """A session that fails when read, as a deleted or closed one does."""

    def count(self) -> int:
        return 1

    def read(self, position: int) -> Message:
        raise SessionDatabaseError("the database is gone")

    def scan(self) -> Iterable[Message]:
        raise SessionDatabaseError("the database is gone")


@pytest.mark.parametrize("arguments", ['{"position": 0}', '{"query": "x"}'])
def test_a_failing_history_is_an_observation(arguments: str) -> None:
    observation = run_engine_tool("recall", arguments, _FailingHistory(), lambda items: None)
    assert observation == "error: the database is gone"


def test_a_failing_save_is_an_observation_and_saves_nothing() -> None:
    session = MemorySession()
    session.save_todos([TodoItem("1", "old", "pending")])

    def save(items: list[TodoItem]) -> None:
        raise SessionDatabaseError("disk full")

    arguments = '{"todos": [{"content": "new", "status": "pending"}]}'
    assert run_engine_tool("todo", arguments, ListHistory([]), save) == "error: disk full"
    assert session.get_todos() == [TodoItem("1", "old", "pending")]


def test_todo_saves_through_the_session() -> None:
    session = MemorySession()
    arguments = '{"todos": [{"content": "read", "status": "completed"}, {"content": "fix", "status": "in_progress"}]}'
    observation = run_engine_tool("todo", arguments, ListHistory([]), session.save_todos)
    assert observation == "plan saved:\n- [completed] read\n- [in_progress] fix"
    assert session.get_todos() == [TodoItem("1", "read", "completed"), TodoItem("2", "fix", "in_progress")]
    assert plan_block(session.get_todos()) == PLAN_HEADER + "\n- [completed] read\n- [in_progress] fix"


def test_bad_todo_arguments_never_call_save() -> None:
    saved: list[list[TodoItem]] = []
    observation = write_todos('{"todos": [{"content": "ok", "status": "pending"}, {"content": "x"}]}', saved.append)
    assert observation == 'error: invalid arguments for todo: todos[1]: missing required member "status"'
    assert saved == []


def test_a_lone_surrogate_in_a_todo_is_an_observation_not_a_crash() -> None:
    observation = run_engine_tool("todo", '{"todos": [{"content": "\\ud800", "status": "pending"}]}', ListHistory([]), print)
    assert observation.startswith("error: ")
    assert "\ud800" not in observation


def test_an_empty_plan_has_no_block() -> None:
    assert plan_block([]) == ""


def test_a_result_is_labelled_with_the_call_it_answers() -> None:
    call = Message("assistant", "", (ToolCall("a", "bash", "{}"), ToolCall("b", "read_file", "{}")))
    history = ListHistory([call, Message("user", "out a", tool_call_id="a"), Message("user", "out b", tool_call_id="b")])
    assert recall(history, '{"position": 2}').startswith("[message 2 (user, result of call b to read_file): ")


def test_recall_in_a_deleted_session_is_an_observation(tmp_path: Path) -> None:
    with Manager(tmp_path / "sessions.db") as manager:
        session = manager.new_session()
        session.add_messages([_user("soon gone")])
        history = SessionHistory(session, stored=1)
        manager.delete_session(session.session_id)
        for arguments in ('{"position": 0}', '{"query": "gone"}'):
            observation = run_engine_tool("recall", arguments, history, session.save_todos)
            assert observation.startswith("error: ") and "\n" not in observation, observation
