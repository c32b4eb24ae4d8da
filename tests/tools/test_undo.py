"""Putting back the files of dropped turns (harness9_ref/tools/_undo.py; SPEC R-UNDO-4) on real files:
the registry records each change as the engine would, then ``plan_restores`` and ``restore`` undo them."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
from pathlib import Path

from harness9_ref.memory.storage import FileChangeRecord
from harness9_ref.tools import (
    CHANGED_SINCE,
    CHANGED_WHILE_ASKING,
    NOT_KEPT,
    PATH_REPLACED,
    WRITE_FAILED,
    Registry,
    plan_restores,
    restore,
    restored_line,
)


def changed(registry: Registry, calls: list[tuple[str, dict[str, str]]]) -> list[FileChangeRecord]:
    """Run ``calls`` through the registry, recording each change under its call's number; newest first."""
    records: list[FileChangeRecord] = []
    for number, (tool, arguments) in enumerate(calls):
        call_id = f"c{number}"

        def record(path: str, before: bytes | None, after: bytes, call_id: str = call_id) -> None:
            records.append(FileChangeRecord.of(call_id, path, before, after))

        registry.execute_recorded(tool, json.dumps(arguments), record)
    return records[::-1]


def test_a_file_edited_three_times_returns_to_before_the_first_edit(tmp_path: Path) -> None:
    """R-UNDO-4a: the oldest record's before is the target; the diff runs from now to it."""
    (tmp_path / "a.txt").write_text("one\n")
    registry = Registry(tmp_path)
    records = changed(
        registry,
        [
            ("edit_file", {"path": "a.txt", "old_text": "one", "new_text": "two"}),
            ("edit_file", {"path": "a.txt", "old_text": "two", "new_text": "three"}),
            ("write_file", {"path": "a.txt", "content": "four\n"}),
        ],
    )
    assert [r.tool_call_id for r in records] == ["c2", "c1", "c0"]
    (only,) = plan_restores(str(tmp_path), records)
    assert only.diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-four\n+one\n"
    assert restore(only) is None
    assert (tmp_path / "a.txt").read_text() == "one\n"


def test_a_file_back_to_its_old_content_is_left_out(tmp_path: Path) -> None:
    """R-UNDO-4a: nothing to put back."""
    (tmp_path / "a.txt").write_text("x")
    records = changed(
        Registry(tmp_path),
        [
            ("edit_file", {"path": "a.txt", "old_text": "x", "new_text": "y"}),
            ("edit_file", {"path": "a.txt", "old_text": "y", "new_text": "x"}),
        ],
    )
    assert plan_restores(str(tmp_path), records) == []


def test_a_change_not_kept_or_a_file_changed_since_is_left(tmp_path: Path) -> None:
    """R-UNDO-4a: each says why; nothing is planned for it."""
    (tmp_path / "a.txt").write_text("mine")
    records = [
        FileChangeRecord("c1", "a.txt", True, b"old", b"new"),
        FileChangeRecord("c2", "big.txt", True, None, None),
    ]
    restores = plan_restores(str(tmp_path), records)
    assert [(r.path, r.problem, r.plan) for r in restores] == [("a.txt", CHANGED_SINCE, None), ("big.txt", NOT_KEPT, None)]


def test_a_file_changed_while_the_question_waited_is_not_written(tmp_path: Path) -> None:
    """R-UNDO-4c: the bytes shown are checked again when writing, for a write and a removal."""
    records = changed(
        Registry(tmp_path),
        [("write_file", {"path": "new.txt", "content": "n"}), ("write_file", {"path": "b.txt", "content": "b"})],
    )
    (tmp_path / "c.txt").write_text("old")
    records += changed(Registry(tmp_path), [("write_file", {"path": "c.txt", "content": "new"})])
    restores = plan_restores(str(tmp_path), records)
    assert [r.removes for r in restores] == [True, False, True]
    for name in ("b.txt", "c.txt", "new.txt"):
        (tmp_path / name).write_text("meanwhile")
    assert all(restore(r) is not None for r in restores)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {n: "meanwhile" for n in ("b.txt", "c.txt", "new.txt")}


def test_a_restore_never_follows_a_link_out_of_the_working_directory(tmp_path: Path) -> None:
    """R-UNDO-4c, R-TOOL-14: a folder swapped for a link after the question is refused."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "sub").mkdir(parents=True)
    outside.mkdir()
    records = changed(Registry(work), [("write_file", {"path": "sub/a.txt", "content": "new"})])
    (restore_it,) = plan_restores(str(work), records)
    (outside / "a.txt").write_text("new")
    os.rename(work / "sub", tmp_path / "moved")
    (work / "sub").symlink_to(outside)
    assert restore(restore_it) is not None
    assert (outside / "a.txt").read_text() == "new"


def test_a_removal_refused_when_writing_says_why(tmp_path: Path) -> None:
    """R-UNDO-4c, R-TOOL-14: a file removed meanwhile, its folder replaced, or a file that can no
    longer be opened (a socket in its place) is left, the observation saying why, and the line
    after the yes names it."""
    (tmp_path / "sub").mkdir()
    records = changed(
        Registry(tmp_path),
        [("write_file", {"path": p, "content": "n"}) for p in ("gone.txt", "sub/new.txt", "sock")],
    )
    gone, sock, sub_new = plan_restores(str(tmp_path), records)
    assert [gone.path, sock.path, sub_new.path] == ["gone.txt", "sock", "sub/new.txt"]
    (tmp_path / "gone.txt").unlink()
    os.rename(tmp_path / "sub", tmp_path / "sub.moved")
    shutil.copytree(tmp_path / "sub.moved", tmp_path / "sub")  # the same bytes in another folder
    (tmp_path / "sock").unlink()
    with socket.socket(socket.AF_UNIX) as server:
        here = os.getcwd()
        os.chdir(tmp_path)  # a socket's path is short; bound by its name in its folder
        try:
            server.bind("sock")
        finally:
            os.chdir(here)
        outcomes = [restore(item) for item in (gone, sub_new, sock)]
    assert outcomes == [
        CHANGED_WHILE_ASKING.format(path="gone.txt"),
        PATH_REPLACED.format(part="sub", path="sub/new.txt"),
        WRITE_FAILED.format(path="sock", reason=os.strerror(errno.ENXIO)),
    ]
    assert (tmp_path / "sub" / "new.txt").read_text() == "n"
    assert restored_line(gone, outcomes[0], "en") == f"not restored: gone.txt: {outcomes[0]}"
