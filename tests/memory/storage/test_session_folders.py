"""Sessions that record their folder and provider, and the format-4 upgrade that adds them
(SPEC R-FIND-4, R-FIND-5, R-FIND-7, R-DB-2, R-DB-12, R-DB-13), on real SQLite files."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness9_ref.memory.storage import InvalidArgument, Manager, SessionNotFound, session_folder
from harness9_ref.schema import Message
from tests.memory.storage.test_checkpoints import assert_spec_schema, fixture_copy, table_rows, user_version

A = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
B = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"


def test_a_format_4_file_gains_the_columns_keeping_every_row(tmp_path: Path) -> None:
    """R-DB-2c, R-DB-13: every row as stored, each session of unknown folder and provider."""
    path = fixture_copy("sessions-v4.db", tmp_path)
    assert user_version(path) == 4
    before = table_rows(path)
    with Manager(path) as manager:
        assert [s.id for s in manager.recent_sessions()] == [B, A]
        assert manager.session_origin(A) == ("", "")
        assert manager.recent_sessions(workdir="/anywhere") == []
    assert user_version(path) == 5
    assert_spec_schema(path)
    after = table_rows(path)
    assert after.pop("sessions") == [(*row, "", "") for row in before.pop("sessions")]
    assert after.pop("file_changes") == []  # R-UNDO-2c: the table the same step adds
    assert after == before


def test_a_read_only_manager_reads_a_format_4_file_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    """R-DB-12b: the upgrade happens in a copy in memory; the file keeps its bytes and version."""
    path = fixture_copy("sessions-v4.db", tmp_path)
    bytes_before = path.read_bytes()
    with Manager(path, read_only=True) as manager:
        assert manager.session_origin(B) == ("", "")
        assert [s.title for s in manager.recent_sessions()] == ["a second conversation", "plan for project A"]
    assert path.read_bytes() == bytes_before and user_version(path) == 4


def test_a_session_records_its_folder_and_provider(tmp_path: Path) -> None:
    """R-FIND-4a, R-FIND-4b: given at creation (a draft's with its first write), read back as given."""
    with Manager(tmp_path / "s.db") as manager:
        draft = manager.new_session(draft=True, workdir="/home/u/项目", provider="openai:gpt-4o-mini")
        with pytest.raises(SessionNotFound):
            manager.session_origin(draft.session_id)  # no row yet (R-FIND-2a)
        draft.add_messages([Message("user", "hello")])
        assert manager.session_origin(draft.session_id) == ("/home/u/项目", "openai:gpt-4o-mini")
        for bad in ({"workdir": "/a\x00b"}, {"provider": "\ud800"}, {"workdir": 3}):
            with pytest.raises(InvalidArgument):
                manager.new_session(**bad)
        with pytest.raises(InvalidArgument):
            manager.recent_sessions(workdir="")
        assert [s.id for s in manager.recent_sessions(workdir="/home/u/项目")] == [draft.session_id]


def test_a_fork_records_its_sources_folder(tmp_path: Path) -> None:
    """R-FIND-7: whatever folder forks it, a fork is its source's folder's session."""
    with Manager(tmp_path / "s.db") as manager:
        source = manager.new_session(workdir="/home/u/projA", provider="offline")
        source.add_messages([Message("user", "plan")])
        fork = manager.fork_session(source.session_id, 0)
        assert manager.session_origin(fork.session_id) == ("/home/u/projA", "offline")


def test_the_folder_is_the_resolved_path(tmp_path: Path) -> None:
    """R-FIND-4a: a link and its target are one folder; a name that is not UTF-8 reads with U+FFFD."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert session_folder(str(tmp_path / "link")) == session_folder(str(tmp_path / "real")) == str((tmp_path / "real").resolve())
    odd = tmp_path / "caf\udce9"  # the byte 0xE9 alone, as os.fsdecode gives it
    assert session_folder(str(odd)).endswith("caf\ufffd")
