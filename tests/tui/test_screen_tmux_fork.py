"""/fork and /rewind in the real program inside tmux (harness9_ref/tui; SPEC R-FORK-3 … R-FORK-5).

Same harness as test_screen_tmux.py: a private tmux server, the offline provider, a real SQLite
file, the screen read with ``capture-pane``. What the screen shows is checked against the
database the program wrote.
"""

from __future__ import annotations

from harness9_ref.memory.storage import Manager
from harness9_ref.schema import Message
from harness9_ref.text import STRINGS

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)

ZH, EN = STRINGS["zh"], STRINGS["en"]


def rows(screen: Screen) -> list[str]:
    return [row.rstrip() for row in screen.rows()]


def stored(screen: Screen) -> dict[str, list[str]]:
    with Manager(screen.db, read_only=True) as manager:
        return {info.id: [m.content for m in manager.open_session(info.id).get_messages()] for info in manager.list_sessions()}


def test_fork_switches_to_a_copy_with_a_confirmation(screen: Screen) -> None:
    started(screen, "--lang", "en").say("first prompt")
    original = screen.status().group(2)
    screen.type("/fork")  # the pane is the fork's afterwards, so the command is not echoed
    screen.keys("Enter")
    screen.wait(lambda: screen.status().group(2) != original, "the fork in the status bar")
    screen.wait_idle()
    fork = screen.status().group(2)
    assert fork != original
    sessions = stored(screen)
    (fork_id,) = [sid for sid in sessions if sid.startswith(fork)]
    (original_id,) = [sid for sid in sessions if sid.startswith(original)]
    assert sessions[fork_id] == sessions[original_id]
    assert EN["fork_done"].format(session=fork_id, messages="2 messages") in screen.history()
    assert rows(screen)[0] == "> first prompt"  # the fork's conversation, then the confirmation
    screen.say("second prompt")
    after = stored(screen)
    assert after[original_id] == sessions[original_id]  # the original is untouched
    assert after[fork_id][2] == "second prompt"


def test_fork_before_anything_is_stored_says_so(screen: Screen) -> None:
    started(screen).say("/fork")
    assert ZH["fork_nothing"] in rows(screen)
    assert not screen.db.exists() or stored(screen) == {}


def test_rewind_lists_the_prompts_and_puts_the_chosen_one_back_to_edit(screen: Screen) -> None:
    with Manager(screen.db) as manager:
        session = manager.new_session()
        session.add_messages(
            [
                Message("user", "first task"),
                Message("assistant", "ok"),
                Message("user", "second \x1b[2J task"),  # an escape sequence is shown, not obeyed
                Message("assistant", "ok"),
                Message("user", "third task"),
                Message("assistant", "ok"),
            ]
        )
        source = session.session_id
    started(screen, "--resume", source).say("/rewind")
    shown = rows(screen)
    at = shown.index(ZH["rewind_header"].format(n=3))
    assert shown[at + 1 : at + 5] == ["  [1] first task", "  [2] second \ufffd[2J task", "  [3] third task", ZH["rewind_prompt"]]
    screen.type("2")
    screen.keys("Enter")
    screen.wait(lambda: screen.status().group(2) != source[:8], "the fork in the status bar")
    # The input line takes what typing takes: the escape character is left out (R-FORK-5).
    screen.wait(lambda: rows(screen)[-1] == "> second [2J task", "the prompt in the input line")
    fork = screen.status().group(2)
    sessions = stored(screen)
    (fork_id,) = [sid for sid in sessions if sid.startswith(fork)]
    assert sessions[fork_id] == ["first task", "ok"]
    assert sessions[source][4] == "third task"  # the session rewound from is whole
    assert ZH["rewind_done"].format(k=2, session=fork_id) in screen.history()
    screen.keys("C-a", "C-k")  # edit it: here, a new prompt in its place
    screen.say("second task, done right")
    assert stored(screen)[fork_id][2] == "second task, done right"


def test_a_cancelled_rewind_changes_nothing(screen: Screen) -> None:
    started(screen).say("only prompt")
    sid = screen.status().group(2)
    screen.say("/rewind")
    screen.say("x")
    assert [row for row in rows(screen) if row][-4:-2] == ["> x", ZH["cancelled"]]
    assert screen.status().group(2) == sid
    assert len(stored(screen)) == 1


def test_tab_completes_fork_and_rewind(screen: Screen) -> None:
    started(screen)
    screen.type("/f")
    screen.keys("Tab")
    screen.wait(lambda: rows(screen)[-1] == "> /fork", "/fork completed")
    screen.keys("C-a", "C-k")
    screen.type("/rew")
    screen.keys("Tab")
    screen.wait(lambda: rows(screen)[-1] == "> /rewind", "/rewind completed")
