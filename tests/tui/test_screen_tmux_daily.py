"""The daily-tool features in the real program inside tmux (harness9_ref/tui; SPEC R-TUI-14 …
R-TUI-19, R-APPR-2, R-APPR-5, R-INT-4).

Same harness as test_screen_tmux.py: a private tmux server, the offline provider, the screen
read with ``capture-pane``. Commands really run (``run …`` prompts of the offline provider),
so the approval question and Ctrl+C act on real processes.
"""

from __future__ import annotations

import time

from harness9_ref.memory.storage import Manager, session_folder
from harness9_ref.schema import Message
from harness9_ref.text import STRINGS
from harness9_ref.tools import CHANGE_DECLINED, DECLINED
from harness9_ref.tui import help_lines

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)

ZH, EN = STRINGS["zh"], STRINGS["en"]


def rows(screen: Screen) -> list[str]:
    return [row.rstrip() for row in screen.rows()]


def test_help_lists_the_commands_and_keys(screen: Screen) -> None:
    started(screen).say("/help")
    shown = rows(screen)
    at = shown.index("> /help")
    assert shown[at + 1 : at + 1 + len(help_lines())] == help_lines()


def test_lang_en_speaks_english(screen: Screen) -> None:
    started(screen, "--lang", "en").say("/help")
    assert all(line in rows(screen) for line in help_lines("en"))
    screen.say("/hepl")
    assert "unknown command: /hepl" in rows(screen)
    screen.say("/resume")
    assert EN["no_sessions"] in rows(screen)
    assert screen.status().group(3) is not None  # the bar's labels are the same in both languages


def test_resume_pages_through_twelve_sessions(screen: Screen) -> None:
    with Manager(screen.db) as manager:
        for i in range(12):
            session = manager.new_session(workdir=session_folder(str(screen.workdir)))  # the UI's folder (R-TUI-43)
            session.add_messages([Message("user", f"task number {i}"), Message("assistant", "ok")])
        listed = [s.id for s in manager.recent_sessions(12)]
    started(screen).say("/resume")
    shown = rows(screen)
    at = shown.index("可用会话（第 1 页，本页 10 条）：")
    assert [row.split()[1] for row in shown[at + 1 : at + 11]] == [sid[:8] for sid in listed[:10]]
    assert shown[at + 11] == ZH["resume_prompt_next"]
    screen.say("n")
    shown = rows(screen)
    at = shown.index("可用会话（第 2 页，本页 2 条）：")
    assert shown[at + 1].startswith(f"  [11] {listed[10][:8]}  刚刚  2 条消息  task number ")
    assert shown[at + 3] == ZH["resume_prompt_previous"]
    screen.type("12")
    screen.keys("Enter")
    screen.wait(lambda: screen.status().group(2) == listed[11][:8], "the twelfth session in the status bar")
    assert rows(screen)[0].startswith("> task number ")


def answer_question(screen: Screen, command: str, key: str) -> None:
    screen.type(f"run {command}")
    screen.keys("Enter")
    screen.wait(lambda: screen.rows()[-1].rstrip() == "?", "the question's input line")
    shown = rows(screen)  # R-APPR-11: the command on its numbered row, the question on the next
    assert shown[shown.index(f"1 | {command}") + 1] == ZH["approve_prompt"]
    screen.answer(key)


def test_approval_yes_no_and_always(screen: Screen) -> None:
    (screen.workdir / "keep").write_text("x", encoding="utf-8")
    started(screen)
    answer_question(screen, "echo ran-after-yes", "y")
    screen.wait_text("\u2190 bash: ran-after-yes")
    screen.wait_idle()
    answer_question(screen, "rm keep", "n")
    screen.wait_text(f"\u2190 bash: {DECLINED}")
    screen.wait_idle()
    assert (screen.workdir / "keep").exists()
    answer_question(screen, "rm keep", "Enter")  # Enter means no
    screen.wait_idle()
    assert (screen.workdir / "keep").exists()
    answer_question(screen, "echo first-always", "a")
    screen.wait_text(ZH["allow_prompt"].split("{")[0])  # R-APPR-8: the rule question
    screen.answer("s")  # every command, this session only
    screen.wait_text("\u2190 bash: first-always")
    screen.wait_idle()
    screen.say("run echo not-asked")
    assert "\u2190 bash: not-asked" in rows(screen)
    assert "1 | echo not-asked" not in rows(screen)


def test_ctrl_c_ends_a_running_command_within_three_seconds(screen: Screen) -> None:
    started(screen)
    answer_question(screen, "sleep 30", "y")
    screen.wait_text('\u2192 bash {"command": "sleep 30"}')
    screen.wait_text(ZH["approve_yes"])
    time.sleep(0.3)  # the command is running
    pressed = time.monotonic()
    screen.keys("C-c")
    screen.wait_text(ZH["interrupted"])
    screen.wait_idle()
    assert time.monotonic() - pressed < 3.0
    assert not screen.dead()
    screen.say("hello again")  # the input line is ready
    assert 'Offline reply to "hello again".' in rows(screen)


def test_an_edit_shows_its_diff_before_the_question(screen: Screen) -> None:
    target = screen.workdir / "a.txt"
    target.write_text("colour = red\n", encoding="utf-8")
    started(screen)
    screen.type("edit a.txt red => blue")
    screen.keys("Enter")
    screen.wait(lambda: screen.rows()[-1].rstrip() == "?", "the question's input line")
    shown = rows(screen)
    at = shown.index(ZH["approve_change_prompt"].format(subject="edit_file a.txt"))
    assert shown[at - 5 : at] == ["--- a/a.txt", "+++ b/a.txt", "@@ -1 +1 @@", "-colour = red", "+colour = blue"]
    assert target.read_text(encoding="utf-8") == "colour = red\n"  # nothing written while it asks
    screen.answer("y")
    screen.wait_text("\u2190 edit_file: edited a.txt: +1 -1 lines")
    screen.wait_idle()
    assert target.read_text(encoding="utf-8") == "colour = blue\n"
    screen.type("write a.txt gone")
    screen.keys("Enter")
    screen.wait(lambda: screen.rows()[-1].rstrip() == "?", "the second question's input line")
    screen.answer("n")
    screen.wait_text(f"\u2190 write_file: {CHANGE_DECLINED}")
    screen.wait_idle()
    assert target.read_text(encoding="utf-8") == "colour = blue\n"
