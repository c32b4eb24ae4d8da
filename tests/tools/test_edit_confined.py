"""Changes go only inside the working directory as it is when they are written (SPEC R-TOOL-14,
R-TOOL-15, R-TOOL-16; harness9_ref/tools/_walk.py, _edit.py).

Real folders, real symbolic links and hard links, and a real swap made while the question waits:
the approval callback is the moment the user reads the diff, when a checkout, a build tool or
any other process may change the tree, so the tests swap there. The conformance protocol cannot
run anything while a question waits (conformance/pending.txt); these tests are where the
requirement is judged.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness9_ref.tools import (
    CHANGED_WHILE_ASKING,
    ESCAPES_WORKDIR,
    HARD_LINKED,
    LINK_ON_PATH,
    PATH_REPLACED,
    Answer,
    FileChange,
    Registry,
    _read_file,
)
from harness9_ref.tools._walk import Where
from tests.tools.test_approval import Answers
from tests.tools.test_edit import edit, write


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """``work/sub/notes.txt`` inside, ``outside/notes.txt`` with the same text beside it."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "sub").mkdir(parents=True)
    outside.mkdir()
    (work / "sub" / "notes.txt").write_text("old\n", encoding="utf-8")
    (outside / "notes.txt").write_text("old\n", encoding="utf-8")
    return work, outside


def swapping(swap: Callable[[], None]) -> Callable[[str | FileChange], Answer]:
    """An approval callback that makes ``swap`` while the user reads the diff, then says yes."""

    def approve(request: str | FileChange) -> Answer:
        swap()
        return "yes"

    return approve


def link_out(work: Path, outside: Path, folder: str = "sub") -> Callable[[], None]:
    """Move ``work/<folder>`` aside and put a link to ``outside`` in its place."""

    def swap() -> None:
        os.rename(work / folder, work / f"{folder}.moved")
        os.symlink(outside, work / folder)

    return swap


def test_an_edit_is_refused_when_its_folder_became_a_link_out_while_asking(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    registry = Registry(work, approve=swapping(link_out(work, outside)))
    assert edit(registry, "sub/notes.txt", "old", "new") == LINK_ON_PATH.format(part="sub", path="sub/notes.txt")
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "old\n"
    assert (work / "sub.moved" / "notes.txt").read_text(encoding="utf-8") == "old\n"


def test_a_new_file_is_not_created_through_a_folder_that_became_a_link_out(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    registry = Registry(work, approve=swapping(link_out(work, outside)))
    assert write(registry, "sub/new.txt", "x") == LINK_ON_PATH.format(part="sub", path="sub/new.txt")
    assert sorted(os.listdir(outside)) == ["notes.txt"]


def test_a_replacing_write_is_refused_when_its_folder_became_a_link_out(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    registry = Registry(work, approve=swapping(link_out(work, outside)))
    assert write(registry, "sub/notes.txt", "mine\n") == LINK_ON_PATH.format(part="sub", path="sub/notes.txt")
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "old\n"


def test_a_deeper_folder_swapped_is_named(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    (work / "a" / "b").mkdir(parents=True)
    (work / "a" / "b" / "notes.txt").write_text("old\n", encoding="utf-8")
    registry = Registry(work, approve=swapping(link_out(work, outside, "a/b")))
    assert edit(registry, "a/b/notes.txt", "old", "new") == LINK_ON_PATH.format(part="a/b", path="a/b/notes.txt")
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "old\n"


def test_a_folder_to_be_made_that_appears_as_a_link_is_not_followed(tree: tuple[Path, Path]) -> None:
    work, outside = tree

    def swap() -> None:
        os.symlink(outside, work / "deep")

    registry = Registry(work, approve=swapping(swap))
    assert write(registry, "deep/er/new.txt", "x") == LINK_ON_PATH.format(part="deep", path="deep/er/new.txt")
    assert sorted(os.listdir(outside)) == ["notes.txt"]


def test_folders_missing_when_shown_are_made_one_by_one_inside(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    assert write(Registry(work), "deep/er/new.txt", "x") == "wrote deep/er/new.txt: 1 line, 1 byte (new file)"
    assert (work / "deep" / "er" / "new.txt").read_text(encoding="utf-8") == "x"


def test_a_folder_that_appeared_while_asking_is_a_replaced_one(tree: tuple[Path, Path]) -> None:
    work, _ = tree

    def swap() -> None:
        (work / "deep").mkdir()

    registry = Registry(work, approve=swapping(swap))
    assert write(registry, "deep/new.txt", "x") == PATH_REPLACED.format(part="deep", path="deep/new.txt")
    assert list((work / "deep").iterdir()) == []


def test_a_folder_replaced_by_another_with_the_same_files_is_refused(tree: tuple[Path, Path]) -> None:
    work, _ = tree

    def swap() -> None:
        os.rename(work / "sub", work / "sub.moved")
        shutil.copytree(work / "sub.moved", work / "sub")

    registry = Registry(work, approve=swapping(swap))
    assert edit(registry, "sub/notes.txt", "old", "new") == PATH_REPLACED.format(part="sub", path="sub/notes.txt")
    assert (work / "sub" / "notes.txt").read_text(encoding="utf-8") == "old\n"


def test_a_folder_removed_while_asking_is_not_made_again(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    registry = Registry(work, approve=swapping(lambda: shutil.rmtree(work / "sub")))
    assert write(registry, "sub/new.txt", "x") == PATH_REPLACED.format(part="sub", path="sub/new.txt")
    assert not (work / "sub").exists()


def test_a_file_replaced_by_another_with_the_same_bytes_is_refused(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    target = work / "sub" / "notes.txt"

    def swap() -> None:
        os.rename(target, work / "notes.moved")
        target.write_text("old\n", encoding="utf-8")  # the same bytes, another file

    for tool, arguments in (
        ("edit_file", {"path": "sub/notes.txt", "old_text": "old", "new_text": "new"}),
        ("write_file", {"path": "sub/notes.txt", "content": "new\n"}),
    ):
        registry = Registry(work, approve=swapping(swap))
        observation = registry.execute(tool, json.dumps(arguments))
        assert observation == PATH_REPLACED.format(part="sub/notes.txt", path="sub/notes.txt")
        assert target.read_text(encoding="utf-8") == "old\n"
        assert (work / "notes.moved").read_text(encoding="utf-8") == "old\n"
        os.unlink(work / "notes.moved")


def test_a_file_swapped_for_a_link_out_is_refused(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    target = work / "sub" / "notes.txt"

    def swap() -> None:
        os.unlink(target)
        os.symlink(outside / "notes.txt", target)

    registry = Registry(work, approve=swapping(swap))
    assert edit(registry, "sub/notes.txt", "old", "new") == LINK_ON_PATH.format(
        part="sub/notes.txt", path="sub/notes.txt"
    )
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "old\n"


def test_a_new_file_made_as_a_link_while_asking_is_not_followed(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    registry = Registry(work, approve=swapping(lambda: os.symlink(outside / "made.txt", work / "sub" / "new.txt")))
    assert write(registry, "sub/new.txt", "x") == CHANGED_WHILE_ASKING.format(path="sub/new.txt")
    assert sorted(os.listdir(outside)) == ["notes.txt"]


def test_a_file_with_another_hard_link_is_not_changed_nor_asked_about(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    os.unlink(outside / "notes.txt")
    os.link(work / "sub" / "notes.txt", outside / "notes.txt")  # the same file, named outside too
    approve = Answers()
    registry = Registry(work, approve=approve)
    refused = HARD_LINKED.format(path="sub/notes.txt", n=2)
    assert edit(registry, "sub/notes.txt", "old", "new") == refused
    assert write(registry, "sub/notes.txt", "new\n") == refused
    assert approve.asked == []
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "old\n"
    assert registry.execute("read_file", json.dumps({"path": "sub/notes.txt"})) == "old\n"  # reading is harmless


def test_a_hard_link_made_while_asking_stops_the_write(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    os.unlink(outside / "notes.txt")

    def swap() -> None:
        os.link(work / "sub" / "notes.txt", outside / "notes.txt")

    registry = Registry(work, approve=swapping(swap))
    assert edit(registry, "sub/notes.txt", "old", "new") == HARD_LINKED.format(path="sub/notes.txt", n=2)
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "old\n"


def test_a_link_inside_is_followed_when_checked_and_the_diff_names_its_target(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    os.symlink(work / "sub", work / "alias")
    approve = Answers("yes")
    assert edit(Registry(work, approve=approve), "alias/notes.txt", "old", "new") == "edited alias/notes.txt: +1 -1 lines"
    (change,) = approve.asked
    assert isinstance(change, FileChange) and change.diff.startswith("--- a/sub/notes.txt\n+++ b/sub/notes.txt\n")
    assert (work / "sub" / "notes.txt").read_text(encoding="utf-8") == "new\n"
    assert (work / "alias").is_symlink()


def test_dot_dot_and_absolute_paths_are_confined_as_resolved(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    registry = Registry(work)
    assert write(registry, "sub/../top.txt", "x") == "wrote sub/../top.txt: 1 line, 1 byte (new file)"
    assert (work / "top.txt").read_text(encoding="utf-8") == "x"
    inside = str(work / "sub" / "notes.txt")
    assert edit(registry, inside, "old", "new") == f"edited {inside}: +1 -1 lines"
    for path in ("../outside/notes.txt", "sub/../../outside/new.txt", str(outside / "notes.txt"), str(outside / "n.txt")):
        assert write(registry, path, "x") == ESCAPES_WORKDIR.format(path=path)
    assert sorted(os.listdir(outside)) == ["notes.txt"]
    assert (outside / "notes.txt").read_text(encoding="utf-8") == "old\n"


def test_read_file_does_not_follow_a_folder_swapped_after_resolving(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    work, outside = tree
    (outside / "notes.txt").write_text("secret\n", encoding="utf-8")
    locate = _read_file.locate

    def locate_then_swap(workdir: str, path: str) -> Where | str:
        where = locate(workdir, path)
        link_out(work, outside)()  # between resolving the path and opening it
        return where

    monkeypatch.setattr(_read_file, "locate", locate_then_swap)
    observation = Registry(work).execute("read_file", json.dumps({"path": "sub/notes.txt"}))
    assert observation == f"error: cannot read sub/notes.txt: {os.strerror(errno.ELOOP)}"


def _copy_back(work: Path) -> Path:
    shutil.copytree(work.with_name("work.moved"), work)
    return work  # the copy, which the write must not reach


def _link_back(work: Path) -> Path:
    os.symlink(work.with_name("work.moved"), work)
    return work.with_name("work.moved")  # the original, reached through the link


@pytest.mark.parametrize(("put_back", "message"), [(_copy_back, PATH_REPLACED), (_link_back, LINK_ON_PATH)])
def test_the_working_directory_swapped_while_asking_is_named_as_dot(
    tree: tuple[Path, Path], put_back: Callable[[Path], Path], message: str
) -> None:
    """The working directory moved away while asking, and a copy or a link put in its place."""
    work, _ = tree
    untouched: list[Path] = []

    def swap() -> None:
        os.rename(work, work.with_name("work.moved"))
        untouched.append(put_back(work))

    registry = Registry(work, approve=swapping(swap))
    assert edit(registry, "sub/notes.txt", "old", "new") == message.format(part=".", path="sub/notes.txt")
    assert (untouched[0] / "sub" / "notes.txt").read_text(encoding="utf-8") == "old\n"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_refusals_leave_no_descriptor_open(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    before = len(os.listdir("/proc/self/fd"))
    assert write(Registry(work, approve=swapping(link_out(work, outside))), "sub/a/b.txt", "x").startswith("error: ")
    assert write(Registry(work, approve=swapping(lambda: (work / "new").mkdir())), "new/c.txt", "x").startswith("error: ")
    assert write(Registry(work), "sub.moved/notes.txt/x", "x").startswith("error: cannot write")  # a file where a folder goes
    assert edit(Registry(work), "sub.moved/notes.txt", "old", "new") == "edited sub.moved/notes.txt: +1 -1 lines"
    assert len(os.listdir("/proc/self/fd")) == before
