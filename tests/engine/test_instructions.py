"""AGENTS.md files on real folders: which are found, how each is read, the prompt they make, and
the builder the agent's engine calls at every run (harness9_ref/engine/_instructions.py;
SPEC R-INST-1 … R-INST-4).

Every test lays out real folders under ``tmp_path``: a home folder, repositories marked by a
``.git`` folder or file, nested folders, links, a FIFO, files too large or not UTF-8.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from harness9_ref.engine import (
    DEFAULT_SYSTEM_PROMPT,
    INSTRUCTIONS_CUT_NOTE,
    INSTRUCTIONS_MAX_BYTES,
    INSTRUCTIONS_PREAMBLE,
    AgentEngine,
    InstructionWarning,
    ProjectInstructions,
    find_instruction_files,
    load_instructions,
    read_instruction_file,
)
from harness9_ref.memory.storage import MemorySession
from harness9_ref.schema import ROLE_SYSTEM
from harness9_ref.testing import ScriptedProvider, ScriptedRegistry, steps_from_json


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose root holds a ``.git`` folder, with two levels of folders below it."""
    root = tmp_path / "outer" / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "web").mkdir(parents=True)
    return root


def test_home_then_the_root_down_to_the_working_directory_nearest_last(tmp_path: Path, home: Path, repo: Path) -> None:
    """R-INST-1a, R-INST-1b: a folder without AGENTS.md adds nothing; a file above the root is not read."""
    write(tmp_path / "outer" / "AGENTS.md", "above the root")
    files = [
        write(home / "AGENTS.md", "mine"),
        write(repo / "AGENTS.md", "root"),
        write(repo / "src" / "web" / "AGENTS.md", "web"),
    ]
    assert find_instruction_files(str(repo / "src" / "web"), str(home)) == [str(f) for f in files]
    built = load_instructions(str(repo / "src" / "web"), str(home))
    sections = [f"## {f}\n\n{text}" for f, text in zip(files, ("mine", "root", "web"), strict=True)]
    assert built.prompt == "\n\n".join([DEFAULT_SYSTEM_PROMPT, INSTRUCTIONS_PREAMBLE, *sections])  # R-INST-3
    assert built.warnings == ()


def test_a_git_file_marks_the_root_as_a_worktree_or_submodule_does(tmp_path: Path) -> None:
    root = tmp_path / "worktree"
    write(root / ".git", "gitdir: /elsewhere/.git/worktrees/x\n")
    files = [write(root / "AGENTS.md", "root"), write(root / "a" / "AGENTS.md", "a")]
    assert find_instruction_files(str(root / "a"), None) == [str(f) for f in files]


def test_the_nearest_repository_wins_over_an_enclosing_one(repo: Path) -> None:
    """A repository inside another (a vendored checkout) is a project of its own."""
    write(repo / "AGENTS.md", "outer project")
    inner = repo / "src" / "vendored"
    (inner / ".git").mkdir(parents=True)
    mine = write(inner / "AGENTS.md", "inner project")
    assert find_instruction_files(str(inner), None) == [str(mine)]


def test_outside_a_repository_only_the_working_directory_is_read(tmp_path: Path, home: Path) -> None:
    """R-INST-1b: no .git above: the folders above the working directory are not the project."""
    write(tmp_path / "AGENTS.md", "a stranger's instructions")
    own = write(tmp_path / "scratch" / "AGENTS.md", "scratch")
    assert find_instruction_files(str(tmp_path / "scratch"), str(home)) == [str(own)]
    assert find_instruction_files(str(tmp_path / "scratch" / "deeper"), str(home)) == []


def test_the_working_directory_is_walked_by_its_real_path(tmp_path: Path, repo: Path) -> None:
    """A link to a folder inside the repository finds the repository's files, named by real paths."""
    root_file = write(repo / "AGENTS.md", "root")
    link = tmp_path / "shortcut"
    link.symlink_to(repo / "src")
    assert find_instruction_files(str(link), None) == [str(root_file)]


def test_a_file_already_found_is_not_read_twice(tmp_path: Path, repo: Path) -> None:
    """The home folder inside the project, and a link to the root's file, each count once."""
    root_file = write(repo / "AGENTS.md", "root")
    (repo / "src" / "AGENTS.md").symlink_to(root_file)
    assert find_instruction_files(str(repo / "src"), str(repo)) == [str(root_file)]


def test_a_folder_named_agents_md_is_skipped_with_a_warning(repo: Path) -> None:
    (repo / "src" / "AGENTS.md").mkdir()
    used = write(repo / "src" / "web" / "AGENTS.md", "web")
    built = load_instructions(str(repo / "src" / "web"), None)
    assert [f.path for f in built.files] == [str(used)]
    assert [(w.kind, w.path) for w in built.warnings] == [("not_a_file", str(repo / "src" / "AGENTS.md"))]


def test_a_dangling_link_is_unreadable_with_the_systems_reason(repo: Path) -> None:
    (repo / "AGENTS.md").symlink_to(repo / "gone.md")
    built = load_instructions(str(repo), None)
    assert built.files == ()
    assert built.warnings == (InstructionWarning("unreadable", str(repo / "AGENTS.md"), 0, os.strerror(2)),)


def test_a_fifo_named_agents_md_is_never_opened(repo: Path) -> None:
    """Opening a FIFO would block the run until something writes to it (R-INST-2)."""
    os.mkfifo(repo / "AGENTS.md")
    file, warning = read_instruction_file(str(repo / "AGENTS.md"))
    assert file is None and warning is not None and warning.kind == "not_a_file"


def test_a_fifo_swapped_in_after_the_look_is_not_read(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-INST-2: the opened entry is looked at again, so a FIFO put in the file's place between the
    look and the open is skipped, never read. Faked: no test can time a swap into that gap."""
    looked = os.stat(write(repo / "notes.md", "Use tabs.\n"))
    os.mkfifo(repo / "AGENTS.md")
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: looked if path == str(repo / "AGENTS.md") else real_stat(path, *a, **k))
    file, warning = read_instruction_file(str(repo / "AGENTS.md"))
    assert file is None
    assert warning == InstructionWarning("not_a_file", str(repo / "AGENTS.md"), looked.st_size)


def test_a_file_that_shrank_after_the_look_is_used_as_read(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-INST-2b: only bytes read past the limit make a cut, so a file cut down to exactly the limit
    between the look (which saw it larger) and the read is used whole, with no warning. Faked: no
    test can time a write into that gap."""
    looked = os.stat(write(repo / "larger.md", "z" * (INSTRUCTIONS_MAX_BYTES + 100)))
    write(repo / "AGENTS.md", "z" * INSTRUCTIONS_MAX_BYTES)
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: looked if path == str(repo / "AGENTS.md") else real_stat(path, *a, **k))
    file, warning = read_instruction_file(str(repo / "AGENTS.md"))
    assert warning is None
    assert file is not None and file.text == "z" * INSTRUCTIONS_MAX_BYTES and not file.cut


@pytest.mark.skipif(not Path("/proc/self/mem").is_file(), reason="needs Linux's /proc/self/mem")
def test_a_file_that_fails_to_read_is_unreadable_with_the_systems_reason(repo: Path) -> None:
    """R-INST-2: a regular file that opens but cannot be read (here /proc/self/mem, whose first
    page no process maps: EIO) is skipped with the system's words, even for a superuser."""
    (repo / "AGENTS.md").symlink_to("/proc/self/mem")
    built = load_instructions(str(repo), None)
    assert built.files == ()
    assert built.warnings == (InstructionWarning("unreadable", str(repo / "AGENTS.md"), 0, os.strerror(errno.EIO)),)


def test_a_file_not_utf8_is_skipped_and_the_rest_used(home: Path, repo: Path) -> None:
    write(home / "AGENTS.md", b"caf\xe9 latin-1\n")
    root = write(repo / "AGENTS.md", "root")
    built = load_instructions(str(repo), str(home))
    assert [f.path for f in built.files] == [str(root)]
    assert [w.kind for w in built.warnings] == ["not_utf8"]


def test_a_file_too_large_is_cut_at_a_character_boundary_with_a_note(repo: Path) -> None:
    """R-INST-2b: 32768 bytes at most; a three-byte character across the limit is left out whole."""
    text = "x" * (INSTRUCTIONS_MAX_BYTES - 1) + "中" + "after the limit"
    write(repo / "AGENTS.md", text)
    size = len(text.encode("utf-8"))
    built = load_instructions(str(repo), None)
    (file,) = built.files
    assert file.text == "x" * (INSTRUCTIONS_MAX_BYTES - 1) and file.cut
    note = INSTRUCTIONS_CUT_NOTE.format(used=INSTRUCTIONS_MAX_BYTES - 1, size=size)
    assert built.prompt.endswith(file.text + "\n\n" + note)
    assert built.warnings == (InstructionWarning("too_large", str(repo / "AGENTS.md"), size),)


def test_a_file_of_exactly_the_limit_is_whole(repo: Path) -> None:
    write(repo / "AGENTS.md", "y" * INSTRUCTIONS_MAX_BYTES)
    built = load_instructions(str(repo), None)
    assert built.warnings == () and not built.files[0].cut and len(built.files[0].text) == INSTRUCTIONS_MAX_BYTES


def test_without_a_file_the_prompt_is_the_base_alone(repo: Path) -> None:
    write(repo / "AGENTS.md", "\ufeff \n\n")  # a byte order mark and white space: empty, no warning
    assert load_instructions(str(repo), None, base="base") == load_instructions(str(repo / "src"), None, base="base")
    assert load_instructions(str(repo), None, base="base").prompt == "base"


def test_the_builder_reads_the_files_again_at_every_call(repo: Path) -> None:
    """R-INST-4a: an edit, a new file and a removed file apply from the next build."""
    builder = ProjectInstructions(str(repo / "src"), None, base="base")
    assert builder() == "base"
    write(repo / "AGENTS.md", "version 1")
    assert "## " + str(repo / "AGENTS.md") + "\n\nversion 1" in builder()
    write(repo / "AGENTS.md", "version 2")
    write(repo / "src" / "AGENTS.md", "src")
    prompt = builder()
    assert "version 1" not in prompt and prompt.endswith("version 2\n\n## " + str(repo / "src" / "AGENTS.md") + "\n\nsrc")
    (repo / "AGENTS.md").unlink()
    (repo / "src" / "AGENTS.md").unlink()
    assert builder() == "base"
    assert builder.last is not None and builder.last.files == ()


def test_a_warning_is_reported_once_per_change(repo: Path) -> None:
    """R-INST-4b: not at every build; again when it comes back or the too-large file's size changes."""
    seen: list[InstructionWarning] = []
    builder = ProjectInstructions(str(repo), None, on_warning=seen.append)
    path = repo / "AGENTS.md"
    write(path, b"\xff")
    builder()
    builder()
    assert [w.kind for w in seen] == ["not_utf8"]
    write(path, "fixed")
    builder()
    write(path, b"\xff")
    builder()
    assert [w.kind for w in seen] == ["not_utf8", "not_utf8"]
    write(path, "z" * (INSTRUCTIONS_MAX_BYTES + 1))
    builder()
    builder()
    write(path, "z" * (INSTRUCTIONS_MAX_BYTES + 2))
    builder()
    assert [(w.kind, w.size) for w in seen[2:]] == [
        ("too_large", INSTRUCTIONS_MAX_BYTES + 1),
        ("too_large", INSTRUCTIONS_MAX_BYTES + 2),
    ]


def test_the_engine_sends_the_files_each_run_and_stores_none_of_them(repo: Path) -> None:
    """R-INST-4 with R-ENG-3: the request's system message follows an edit between two runs; the
    session holds the prompts and replies only."""
    write(repo / "AGENTS.md", "MARKER-ONE")
    replies = [{"message": {"role": "assistant", "content": text}} for text in ("first", "second")]
    provider = ScriptedProvider(steps_from_json(replies))
    session = MemorySession()
    engine = AgentEngine(provider, ScriptedRegistry(), prompt_builder=ProjectInstructions(str(repo), None), session=session)
    engine.run("one")
    write(repo / "AGENTS.md", "MARKER-TWO")
    engine.run("two")
    systems = [request.messages[0] for request in provider.requests]
    assert [m.role for m in systems] == [ROLE_SYSTEM, ROLE_SYSTEM]
    assert systems[0].content.endswith("MARKER-ONE") and systems[1].content.endswith("MARKER-TWO")
    stored = session.get_messages(0)
    assert [m.content for m in stored] == ["one", "first", "two", "second"]
