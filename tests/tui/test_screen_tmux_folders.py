"""Sessions per folder as a person meets them in the terminal UI, the real program inside tmux
(harness9_ref/tui; SPEC R-TUI-43, R-CLI-52a/b, R-CLI-53, R-FIND-6).

Same harness as test_screen_tmux.py. The SQLite file holds sessions written beforehand by a
Manager, one of the screen's working folder and one of another folder (the newer), so a UI
that took the newest session of the database would show the wrong conversation.
"""

from __future__ import annotations

import re
import time

from harness9_ref.memory.storage import Manager, session_folder
from harness9_ref.schema import Message
from tests.fakes import Clock

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)
from .test_screen_tmux_daily import rows
from .test_screen_tmux_fork import EN

ELSEWHERE = "/srv/projA"  # never created: a session's folder is only a record (R-FIND-4a)


def shows(screen: Screen, line: str) -> bool:
    """Whether ``line`` is in the pane's history, where the program may have wrapped it at a space."""
    return re.sub(r"\s+", " ", line) in re.sub(r"\s+", " ", screen.history())


def two_folders(screen: Screen) -> tuple[str, str]:
    """A session of the screen's folder, then one of another folder a minute newer: their ids."""
    minute_ago = Clock(time.time() - 60)
    with Manager(screen.db, clock=minute_ago) as manager:
        here = manager.new_session(workdir=session_folder(str(screen.workdir)), provider="offline")
        here.add_messages([Message("user", "plan for this folder"), Message("assistant", "ok here")])
    with Manager(screen.db) as manager:
        other = manager.new_session(workdir=ELSEWHERE, provider="offline")
        other.add_messages([Message("user", "secret plan for A"), Message("assistant", "ok A")])
        return here.session_id, other.session_id


def test_c_continues_this_folders_session_not_the_newest(screen: Screen) -> None:
    """R-TUI-43, R-CLI-52a: -c takes the newest session of the UI's folder, and says nothing."""
    here, _ = two_folders(screen)
    started(screen, "-c", "--lang", "en")
    assert screen.status().group(2) == here[:8]
    shown = rows(screen)
    assert "> plan for this folder" in shown
    assert "secret plan for A" not in screen.history()
    assert not any(line.startswith("harness9-ref:") for line in shown)


def test_c_in_a_folder_without_a_session_starts_one_and_names_the_flag(screen: Screen) -> None:
    """R-CLI-52b: another folder's session is never taken without --any-folder; the notice says so."""
    with Manager(screen.db) as manager:
        other = manager.new_session(workdir=ELSEWHERE, provider="offline")
        other.add_messages([Message("user", "secret plan for A"), Message("assistant", "ok A")])
    started(screen, "-c", "--lang", "en")
    folder = session_folder(str(screen.workdir))
    screen.wait(lambda: shows(screen, EN["cli_continue_none_here"].format(folder=folder)), "the notice")
    assert screen.status().group(2) != other.session_id[:8]
    assert "secret plan for A" not in screen.history()


def test_c_any_folder_takes_the_newest_and_says_where_it_was_started(screen: Screen) -> None:
    """R-CLI-52a, R-CLI-53: with --any-folder the newest of any folder, and one line naming both folders."""
    _, other = two_folders(screen)
    started(screen, "-c", "--any-folder", "--lang", "en")
    assert screen.status().group(2) == other[:8]
    line = EN["cli_other_folder"].format(folder=ELSEWHERE, here=session_folder(str(screen.workdir)))
    screen.wait(lambda: shows(screen, line), "the other folder's line")
    assert "> secret plan for A" in rows(screen)


def test_resume_names_the_other_folder_and_opening_it_says_so(screen: Screen) -> None:
    """R-TUI-43: /resume shows another folder's session with its folder (this folder's without),
    and opening it adds R-CLI-53's line after its history."""
    here, other = two_folders(screen)
    started(screen, "--lang", "en").say("/resume")
    shown = rows(screen)
    (theirs,) = [row for row in shown if other[:8] in row]
    (ours,) = [row for row in shown if here[:8] in row]
    assert theirs.endswith(f"2 messages  {ELSEWHERE}  secret plan for A")
    assert ours.endswith("2 messages  plan for this folder")
    number = theirs.split("]")[0].strip(" [")
    screen.type(number)
    screen.keys("Enter")
    screen.wait(lambda: screen.status().group(2) == other[:8], "the other folder's session in the status bar")
    line = EN["cli_other_folder"].format(folder=ELSEWHERE, here=session_folder(str(screen.workdir)))
    screen.wait(lambda: shows(screen, line), "the other folder's line")
    history = re.sub(r"\s+", " ", screen.history())
    assert history.index("> secret plan for A") < history.rindex(re.sub(r"\s+", " ", line))
