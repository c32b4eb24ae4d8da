"""Sessions per folder from the command line (SPEC R-CLI-52 … R-CLI-55, R-FIND-4, R-FIND-6, R-FIND-7).

The real command in a subprocess, in two real folders ``projA`` and ``projB`` under a private
home (``HOME``), with the offline provider: what ``-c`` continues in each, what ``--any-folder``
changes, and how the folder reads (``~`` for the home folder, a link resolved).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager
from harness9_ref.text import strings_for
from tests.cli.helpers import cli, one_error, seed, session_of, stored

OLD = "0ddf01de-0000-4000-8000-000000000001"  # a session of a file from before format 5
T0 = 1_767_225_600


@pytest.fixture
def home(tmp_path: Path, env: dict[str, str]) -> Path:
    """``HOME`` of every run, holding the two project folders."""
    path = tmp_path / "user"
    for name in ("projA", "projB"):
        (path / name).mkdir(parents=True)
    env["HOME"] = str(path)
    return path


def run(env: dict[str, str], folder: Path, *args: str) -> tuple[str, list[str], str]:
    """``run`` in ``folder`` with the offline provider: the session, standard error's lines, standard output."""
    result = cli(["--provider", "offline", *args], env, folder)
    assert result.returncode == 0, result.stderr
    return session_of(result), result.stderr.splitlines(), result.stdout


def test_continue_in_another_folder_never_takes_the_first_folders_session(
    env: dict[str, str], home: Path, db: Path
) -> None:
    """R-CLI-52: the scenario of a user's two projects; the model of B never sees A's secret."""
    a, _, _ = run(env, home / "projA", "run", "secret plan for A")
    b, lines, out = run(env, home / "projB", "-c", "run", "what were we doing?")
    assert b != a and "secret plan for A" not in out
    assert lines[0] == strings_for("en")["cli_continue_none_here"].format(folder="~/projB")
    again, lines, _ = run(env, home / "projA", "-c", "run", "and the plan?")
    assert again == a and not [line for line in lines if "started in" in line]
    assert stored(db)[a][::2] == ["secret plan for A", "and the plan?"] and stored(db)[b][::2] == ["what were we doing?"]
    with Manager(db) as manager:
        assert manager.session_origin(a) == (str((home / "projA").resolve()), "offline")


def test_any_folder_and_resume_say_where_the_session_was_started(env: dict[str, str], home: Path) -> None:
    """R-CLI-52a, R-CLI-53: the line names both folders, the home folder as ``~``."""
    a, _, _ = run(env, home / "projA", "run", "secret plan for A")
    notice = strings_for("en")["cli_other_folder"].format(folder="~/projA", here="~/projB")
    taken, lines, out = run(env, home / "projB", "-c", "--any-folder", "run", "go on")
    assert taken == a and notice in lines and "secret plan for A" in out
    resumed, lines, _ = run(env, home / "projB", "--lang", "zh", "--resume", a[:8], "run", "more")
    assert resumed == a and strings_for("zh")["cli_other_folder"].format(folder="~/projA", here="~/projB") in lines
    message = one_error(cli(["--any-folder", "run", "x"], env, home / "projB"), status=2)
    assert message == "--any-folder goes with -c/--continue"


def test_a_session_of_unknown_folder_is_taken_only_with_any_folder(
    env: dict[str, str], home: Path, db: Path
) -> None:
    """R-CLI-52a: a session stored before format 5 is no folder's; R-FIND-6: its folder reads as unknown."""
    seed(db, [(OLD, T0, ["from before folders"])])
    fresh, _, _ = run(env, home / "projA", "-c", "run", "hello")
    assert fresh != OLD
    taken, lines, _ = run(env, home / "projA", "-c", "--any-folder", "run", "the old one")
    assert taken == fresh  # the newest of any folder is the one just written
    old, lines, _ = run(env, home / "projA", "--resume", OLD, "run", "the old one")
    assert old == OLD and strings_for("en")["cli_other_folder"].format(folder="(folder unknown)", here="~/projA") in lines


def test_a_folder_reached_through_a_link_is_the_same_folder(env: dict[str, str], home: Path) -> None:
    """R-FIND-4a: the folder is recorded with its links resolved, so a link's sessions are its target's."""
    (home / "link").symlink_to(home / "projA")
    a, _, _ = run(env, home / "projA", "run", "first")
    through, lines, _ = run(env, home / "projB", "--workdir", str(home / "link"), "-c", "run", "second")
    assert through == a and not [line for line in lines if "started in" in line]


def test_sessions_lists_this_folders_and_show_names_the_origin(env: dict[str, str], home: Path) -> None:
    """R-CLI-54, R-CLI-55: the folder column with ``~``, the provider, and ``show``'s last line."""
    a, _, _ = run(env, home / "projA", "run", "plan A")
    b, _, _ = run(env, home / "projB", "run", "plan B")
    listed = cli(["sessions"], env, home / "projA").stdout.splitlines()
    assert len(listed) == 1 and listed[0].startswith(a) and listed[0].endswith("2 messages  ~/projA  offline  plan A")
    every = cli(["sessions", "--any-folder"], env, home / "projA").stdout
    assert "  ~/projB  offline  plan B" in every and "  ~/projA  offline  plan A" in every
    shown = cli(["show", b], env, home / "projA").stdout.splitlines()
    assert shown[-1] == "started in ~/projB with offline"
    empty = home / "projC"
    empty.mkdir()
    nothing = cli(["sessions"], env, empty)
    assert (nothing.returncode, nothing.stdout) == (0, "")
    assert nothing.stderr == strings_for("en")["cli_sessions_elsewhere"].format(folder="~/projC") + "\n"


def test_a_fork_keeps_its_sources_folder(env: dict[str, str], home: Path) -> None:
    """R-FIND-7: forked from projB, a session of projA is still projA's: listed there, not in projB."""
    a, _, _ = run(env, home / "projA", "run", "plan A")
    fork = cli(["fork", a], env, home / "projB").stdout.strip()
    assert fork != a
    listed = cli(["sessions"], env, home / "projA").stdout
    assert sorted(line[:36] for line in listed.splitlines()) == sorted([a, fork])
    assert cli(["sessions"], env, home / "projB").stdout == ""


def test_a_folder_name_with_control_characters_is_shown_safely(env: dict[str, str], home: Path) -> None:
    """R-FIND-6: the folder goes through the terminal-safe filter like the rest of the line."""
    evil = home / "evil\x1b[31m"
    evil.mkdir()
    run(env, evil, "run", "plan")
    listed = cli(["sessions"], env, evil).stdout
    assert "\x1b" not in listed and "~/evil" in listed
