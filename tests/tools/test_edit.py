"""``edit_file`` and ``write_file`` on real files (harness9_ref/tools/_edit.py; SPEC R-TOOL-10 …
R-TOOL-13, R-APPR-4).

The conformance cases pin the observations; these tests check what the protocol cannot reach:
the file on disk after a change (its bytes, its mode), a file the user edits while the question
waits, and the callback's view of the change.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

from harness9_ref.tools import (
    CHANGE_APPROVAL_REQUIRED,
    CHANGE_DECLINED,
    CHANGED_WHILE_ASKING,
    NOT_A_REGULAR_FILE,
    READ_FAILED,
    Answer,
    FileChange,
    Registry,
    _edit,
    require_yes,
    subject,
    unified_diff,
)
from tests.tools.test_approval import Answers


def edit(registry: Registry, path: str, old: str, new: str) -> str:
    return registry.execute("edit_file", json.dumps({"path": path, "old_text": old, "new_text": new}))


def write(registry: Registry, path: str, content: str) -> str:
    return registry.execute("write_file", json.dumps({"path": path, "content": content}))


def test_the_callback_gets_the_change_with_its_diff_and_subject(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    approve = Answers("yes")
    assert edit(Registry(tmp_path, approve=approve), "a.txt", "two", "2") == "edited a.txt: +1 -1 lines"
    (change,) = approve.asked
    assert change == FileChange("edit_file", "a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n")
    assert isinstance(change, FileChange) and change.subject == "edit_file a.txt"
    assert (tmp_path / "a.txt").read_bytes() == b"one\n2\n"


def test_a_file_changed_while_the_question_waits_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n", encoding="utf-8")

    def approve(request: str | FileChange) -> Answer:
        target.write_text("the user's own edit\n", encoding="utf-8")  # typed while the question was on screen
        return "yes"

    registry = Registry(tmp_path, approve=approve)
    assert edit(registry, "a.txt", "old", "new") == CHANGED_WHILE_ASKING.format(path="a.txt")
    assert target.read_text(encoding="utf-8") == "the user's own edit\n"


def test_a_file_made_while_a_new_file_waits_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "n.txt"

    def approve(request: str | FileChange) -> Answer:
        target.write_text("made meanwhile", encoding="utf-8")
        return "yes"

    assert write(Registry(tmp_path, approve=approve), "n.txt", "mine") == CHANGED_WHILE_ASKING.format(path="n.txt")
    assert target.read_text(encoding="utf-8") == "made meanwhile"


def test_a_file_removed_while_the_question_waits_is_not_made_again(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n", encoding="utf-8")

    def approve(request: str | FileChange) -> Answer:
        target.unlink()
        return "yes"

    assert edit(Registry(tmp_path, approve=approve), "a.txt", "old", "new") == CHANGED_WHILE_ASKING.format(path="a.txt")
    assert not target.exists()


def test_a_read_that_fails_is_a_cannot_read_observation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-TOOL-7: a disk error while the file is read (staged: no real disk fails on demand)."""

    def failing(fd: int) -> bytes:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    (tmp_path / "a.txt").write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(_edit, "_read_all", failing)
    expected = READ_FAILED.format(path="a.txt", reason=os.strerror(errno.EIO))
    assert edit(Registry(tmp_path), "a.txt", "old", "new") == expected
    assert write(Registry(tmp_path), "a.txt", "new\n") == expected


def test_a_replaced_file_keeps_its_mode_and_its_inode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("echo one\n", encoding="utf-8")
    target.chmod(0o751)
    inode = target.stat().st_ino
    registry = Registry(tmp_path)
    assert write(registry, "run.sh", "echo two\n") == "wrote run.sh: 1 line, 9 bytes (replaced: +1 -1 lines)"
    assert edit(registry, "run.sh", "two", "three") == "edited run.sh: +1 -1 lines"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.stat().st_ino == inode
    assert target.read_text(encoding="utf-8") == "echo three\n"


def test_declined_and_refused_changes_write_nothing_and_run_mode_names_the_subject(tmp_path: Path) -> None:
    reported: list[str | FileChange] = []
    assert write(Registry(tmp_path, approve=Answers("no")), "a.txt", "x") == CHANGE_DECLINED
    assert write(Registry(tmp_path, approve=Answers(RuntimeError("gone"))), "a.txt", "x") == CHANGE_DECLINED
    assert write(Registry(tmp_path, approve=require_yes(reported.append)), "a.txt", "x") == CHANGE_APPROVAL_REQUIRED
    assert [subject(change) for change in reported] == ["write_file a.txt"]
    assert list(tmp_path.iterdir()) == []


def test_a_lone_surrogate_is_written_as_the_replacement_character(tmp_path: Path) -> None:
    assert write(Registry(tmp_path), "s.txt", "a\ud800b") == "wrote s.txt: 1 line, 5 bytes (new file)"
    assert (tmp_path / "s.txt").read_bytes() == "a\ufffdb".encode()


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    registry = Registry(tmp_path)
    assert edit(registry, "pipe", "a", "b") == NOT_A_REGULAR_FILE.format(path="pipe")
    assert write(registry, "pipe", "x") == NOT_A_REGULAR_FILE.format(path="pipe")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes any file")
def test_an_unwritable_file_is_one_line_naming_the_reason(tmp_path: Path) -> None:
    target = tmp_path / "ro.txt"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o444)
    assert edit(Registry(tmp_path), "ro.txt", "old", "new") == "error: cannot write ro.txt: Permission denied"
    assert target.read_text(encoding="utf-8") == "old\n"


def test_the_diff_matches_difflib_and_marks_a_missing_final_newline() -> None:
    assert unified_diff(b"a\nb", b"a\nb\n", "f") == (
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    )
    assert unified_diff(b"same\n", b"same\n", "f") == ""
    assert unified_diff(None, b"", "f") == ""
