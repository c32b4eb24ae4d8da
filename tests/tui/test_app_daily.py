"""The UI's daily-tool features without a terminal (harness9_ref/tui/_app.py;
SPEC R-TUI-14 … R-TUI-19, R-APPR-2, R-APPR-8, R-APPR-11, R-INT-4).

Driven as in test_app.py: type into ``editor``, ``submit()``, keys through ``approval_key`` and
``interrupt()``, and ``poll()`` until the worker is done. Commands are real ``bash`` commands of
the offline provider's ``run …`` prompts.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager, session_folder
from harness9_ref.schema import Message
from harness9_ref.text import STRINGS, PaneLine
from harness9_ref.tools import DECLINED, AllowRule
from harness9_ref.tui import App, ApprovalRequest, approval_header, help_lines

from .test_app import WAIT, make_app, send, settle, start_figure, texts

NOW = 1779000000


def stored(manager: Manager, n: int, workdir: Path) -> list[str]:
    """``n`` sessions of ``workdir`` with two messages each, the first one the most recent; their ids."""
    ids = []
    for i in range(n):
        session = manager.new_session(workdir=session_folder(str(workdir)))
        session.add_messages([Message("user", f"task {i}"), Message("assistant", "ok")])
        ids.append(session.session_id)
    listed = [s.id for s in manager.recent_sessions(n)]
    assert sorted(listed) == sorted(ids)
    return listed


def wait_until(app: App, what: str, predicate: object) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():  # type: ignore[operator]
        app.poll()
        assert time.monotonic() < deadline, f"waited for {what}: {texts(app)}"
        time.sleep(0.005)


# /help (R-TUI-14) and the languages (R-TUI-17).


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_help_shows_the_commands_and_keys(manager: Manager, tmp_path: Path, lang: str) -> None:
    app = make_app(manager, tmp_path, lang=lang)
    send(app, "/help")
    assert texts(app) == ["> /help", *help_lines(lang)]


def test_help_works_while_a_turn_runs(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, ask=True)
    app.editor.set_text("run echo hi")
    app.submit()
    wait_until(app, "the question", lambda: app.asking is not None)
    app.editor.set_text("")
    app.approval_key("n")
    settle(app)
    send(app, "/help")
    assert texts(app)[-len(help_lines()) :] == help_lines()


def test_english_lines(manager: Manager, tmp_path: Path) -> None:
    en = STRINGS["en"]
    app = make_app(manager, tmp_path, lang="en")
    send(app, "/nope")
    send(app, "/resume")
    send(app, "/search")
    send(app, "/search zzz")
    assert texts(app) == [
        "> /nope",
        "unknown command: /nope",
        "> /resume",
        en["no_sessions"],
        "> /search",
        en["search_usage"],
        "> /search zzz",
        en["search_empty"],
    ]


def test_an_unknown_language_is_refused(manager: Manager, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        make_app(manager, tmp_path, lang="fr")


# The ctx part from start-up (R-TUI-15).


def test_the_start_figure_is_the_engines_in_long_session_mode(manager: Manager, tmp_path: Path) -> None:
    """R-TUI-15: the context report's total at start, after /new and after /resume."""
    app = make_app(manager, tmp_path, long_session=True)
    empty = app.status.used
    assert empty == start_figure(app) == app.engine.context_report().total > 0
    send(app, "x" * 3000)
    send(app, "/new")  # the calibration learnt from the run counts too (R-LONG-3)
    assert app.status.used == app.engine.context_report().total > 0
    send(app, "/resume")
    send(app, "1")
    assert app.status.used == app.engine.context_report().total > 750
    literal = make_app(manager, tmp_path).start_status().used
    assert literal is not None and literal < empty  # the estimate, a token per 4 bytes


# Listings (R-TUI-18, R-TUI-19).


def test_resume_pages_through_more_than_ten_sessions(manager: Manager, tmp_path: Path) -> None:
    ids = stored(manager, 23, tmp_path)
    app = make_app(manager, tmp_path)
    app.clock = lambda: NOW
    send(app, "/resume")
    page1 = texts(app)[1:]
    assert page1[0] == "可用会话（第 1 页，本页 10 条）："
    assert len(page1) == 12 and page1[-1] == "输入序号选择，n 下一页（其他 Enter 取消）："
    assert [line.split()[1] for line in page1[1:11]] == [i[:8] for i in ids[:10]]
    send(app, "n")
    page2 = texts(app)[-12:]
    assert page2[0] == "可用会话（第 2 页，本页 10 条）："
    assert page2[1].startswith(f"  [11] {ids[10][:8]}  ")
    send(app, "n")
    page3 = texts(app)[-5:]
    assert page3[0] == "可用会话（第 3 页，本页 3 条）："
    assert page3[-1] == "输入序号选择，p 上一页（其他 Enter 取消）："
    send(app, "p")
    assert texts(app)[-12] == "可用会话（第 2 页，本页 10 条）："
    send(app, "12")
    assert app.session.session_id == ids[11]
    assert texts(app) == [f"> {manager.open_session(ids[11]).get_messages(0)[0].content}", "ok"]
    assert app.editor.history == ["/resume"]  # answers to a listing are not remembered


def test_resume_age_is_counted_from_the_clock(manager: Manager, tmp_path: Path) -> None:
    stored(manager, 1, tmp_path)
    app = make_app(manager, tmp_path)
    updated = manager.recent_sessions(1)[0].updated_at
    app.clock = lambda: updated + 2 * 86400 + 5
    send(app, "/resume")
    assert texts(app)[2].split("  ")[2] == "2 天前"


def test_search_lists_hits_with_snippets_and_opens_one(manager: Manager, tmp_path: Path) -> None:
    stored(manager, 3, tmp_path)
    app = make_app(manager, tmp_path)
    send(app, "/search TASK 1")
    hit = manager.search("task 1")[0]
    assert texts(app)[1:] == [
        "匹配的会话（1 条）：",
        f"  [1] {hit.id[:8]}  刚刚  2 条消息  {hit.snippet}",
        "输入序号选择（非数字 Enter 取消）：",
    ]
    send(app, "1")
    assert app.session.session_id == hit.id


def test_search_pages(manager: Manager, tmp_path: Path) -> None:
    stored(manager, 12, tmp_path)
    app = make_app(manager, tmp_path)
    send(app, "/search task")
    assert texts(app)[1] == "匹配的会话（第 1 页，本页 10 条）："
    send(app, "n")
    assert texts(app)[-4:] == [
        "匹配的会话（第 2 页，本页 2 条）：",
        texts(app)[-3],
        texts(app)[-2],
        "输入序号选择，p 上一页（其他 Enter 取消）：",
    ]
    assert texts(app)[-3].startswith("  [11] ")
    send(app, "x")
    assert texts(app)[-1] == "已取消" and app.listing is None


# Approval (R-APPR-2).


def asked(app: App, command: str) -> None:
    app.editor.set_text(f"run {command}")
    app.submit()
    wait_until(app, "the question", lambda: app.asking is not None)
    assert app.lines[-3:] == [  # R-APPR-11: the header, the command, the question
        PaneLine(approval_header(command, app.lang), "notice"),
        PaneLine(command, "command"),
        PaneLine(STRINGS[app.lang]["approve_prompt"], "notice"),
    ]
    assert app.input_prompt == "? "
    app.pane_rows(80, 24)  # drawn, as the screen does: the command has been shown from its top


def results(app: App) -> list[str]:
    return [t for t in texts(app, "tool") if t.startswith("\u2190 bash")]


def test_y_runs_the_command(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, ask=True)
    asked(app, "echo approved")
    assert app.approval_key("x") and app.asking is not None  # a stray key is swallowed; still asking
    app.approval_key("y")
    settle(app)
    assert "已允许" in texts(app) and results(app) == ["\u2190 bash: approved"]


@pytest.mark.parametrize("key", ["n", "\x1b", "\n"])
def test_n_esc_and_enter_decline(manager: Manager, tmp_path: Path, key: str) -> None:
    (tmp_path / "keep").write_text("x")
    app = make_app(manager, tmp_path, ask=True)
    asked(app, "rm keep")
    if key == "\n":
        app.submit()
    else:
        app.approval_key(key)
    settle(app)
    assert (tmp_path / "keep").exists()
    assert "已拒绝" in texts(app) and results(app) == [f"\u2190 bash: {DECLINED}"]


def test_a_means_always_until_new(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, ask=True, lang="en")
    asked(app, "echo one")
    app.approval_key("a")
    app.approval_key("s")  # R-APPR-8: every command, this session only
    settle(app)
    assert "allowed; no more questions in this session" in texts(app)
    send(app, "run echo two")  # not asked
    assert results(app) == ["\u2190 bash: one", "\u2190 bash: two"]
    send(app, "/new")  # R-APPR-2: a new session asks again
    asked(app, "echo three")
    app.approval_key("y")
    settle(app)


def test_resume_asks_again_too(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, ask=True)
    asked(app, "echo one")
    app.approval_key("a")
    app.approval_key("s")  # R-APPR-8: every command, this session only
    settle(app)
    send(app, "/resume")
    send(app, "1")
    asked(app, "echo again")
    app.approval_key("n")
    settle(app)


def test_ctrl_c_declines_and_cancels_the_turn(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, ask=True)
    asked(app, "echo never")
    app.approval_key("\x03")
    settle(app)
    assert texts(app).index("已拒绝") < texts(app).index("已中断")
    assert results(app) == [f"\u2190 bash: {DECLINED}"]
    assert not app.exiting and not app.running


def test_exit_while_asking_answers_no(manager: Manager, tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("x")
    app = make_app(manager, tmp_path, ask=True)
    asked(app, "rm keep")
    app.request_exit()
    app.shutdown()
    assert (tmp_path / "keep").exists()
    assert app.approve("rm keep") == "no"  # a closed UI answers at once


def test_a_question_after_ctrl_c_is_answered_no(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, ask=True)
    app.interrupt()  # idle: ends the program, and questions get no from now on
    assert app.exiting and app.approve("ls") == "no"


# Interrupts (R-INT-4).


def test_ctrl_c_ends_a_running_command_within_three_seconds(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    app.editor.set_text("run sleep 30")
    app.submit()
    wait_until(app, "the command to start", lambda: any(t.startswith("\u2192 bash") for t in texts(app)))
    time.sleep(0.2)
    started = time.monotonic()
    app.interrupt()
    assert texts(app)[-1] == "已中断"
    settle(app)
    assert time.monotonic() - started < 3.0
    assert not app.running and app.input_prompt == "> " and not app.exiting
    assert results(app) and results(app)[0].startswith("\u2190 bash: (no output)")


HIDDEN = "echo Cleaning up, will not touch: \nrm -rf important_dir"


def test_every_line_of_a_command_has_a_numbered_row_of_its_own(manager: Manager, tmp_path: Path) -> None:
    """R-APPR-11c: the second line of a command is never joined to the first; the question has a
    row of its own after the command, and y answers the command shown."""
    app = make_app(manager, tmp_path, ask=True, lang="en")
    request = ApprovalRequest(HIDDEN)
    app.handle(request)
    assert app.pane_rows(60, 20)[-4:] == [
        ("Command to run, 2 line(s) (each after its number and |):", "notice"),
        ("1 | echo Cleaning up, will not touch: ", "command"),
        ("2 | rm -rf important_dir", "command"),
        ("Run the command above? [y]es / [n]o / [a]lways…", "notice"),
    ]
    app.approval_key("y")
    assert request.wait() == "yes"


def test_control_characters_of_a_command_are_shown_escaped(manager: Manager, tmp_path: Path) -> None:
    """R-APPR-11b: an escape sequence, a tab and a right-to-left override are shown, not obeyed."""
    app = make_app(manager, tmp_path, ask=True, lang="en")
    app.handle(ApprovalRequest("echo safe\x1b[2K\r\trm -rf x \u202eesrever"))
    rows = [row for row, kind in app.pane_rows(80, 20) if kind == "command"]
    assert rows == ["1 | echo safe\\x1b[2K\\r\\trm -rf x \\u202eesrever"]


def tall(lines: int) -> str:
    return "\n".join(f"echo line {k}" for k in range(1, lines)) + "\nrm -rf important_dir"


def test_y_and_a_wait_until_a_tall_command_has_been_shown_from_its_top(manager: Manager, tmp_path: Path) -> None:
    """R-APPR-11d: a command taller than the pane is read from its first line before y or a
    counts; paging up shows it, and then y answers."""
    app = make_app(manager, tmp_path, ask=True, lang="en")
    request = ApprovalRequest(tall(30))
    app.handle(request)
    app.pane_rows(60, 10)  # the bottom of the pane: the last rows of the command and the question
    for key in ("y", "a"):
        assert app.approval_key(key)
        assert not request.answered and app.choosing is None
        assert texts(app)[-2:] == [STRINGS["en"]["approve_read_first"], STRINGS["en"]["approve_prompt"]]
    app.page(7)
    app.pane_rows(60, 10)  # not yet the top
    app.approval_key("y")
    assert not request.answered
    app.page(100)
    assert (approval_header(tall(30), "en"), "notice") in app.pane_rows(60, 10)
    app.page(-100)
    app.pane_rows(60, 10)
    app.approval_key("y")
    assert request.wait() == "yes"


@pytest.mark.parametrize("key", ["n", "\x1b", "\n"])
def test_declining_a_tall_command_needs_no_reading(manager: Manager, tmp_path: Path, key: str) -> None:
    """R-APPR-11d: no, Enter and Esc answer at once, the command unread."""
    app = make_app(manager, tmp_path, ask=True, lang="en")
    request = ApprovalRequest(tall(30))
    app.handle(request)
    app.pane_rows(60, 10)
    app.approval_key(key)
    assert request.wait() == "no"


def test_a_command_that_fits_is_answered_at_once(manager: Manager, tmp_path: Path) -> None:
    """R-APPR-11d: a command whose header row is on the screen at the first drawing needs no paging."""
    app = make_app(manager, tmp_path, ask=True, lang="en")
    request = ApprovalRequest(tall(5))
    app.handle(request)
    app.pane_rows(60, 10)
    app.approval_key("y")
    assert request.wait() == "yes"


def test_the_rule_offered_and_added_shows_a_tab_escaped(manager: Manager, tmp_path: Path) -> None:
    """R-APPR-8b, R-APPR-11b: a rule's word holding a tab is offered and named with \\t."""
    app = make_app(manager, tmp_path, ask=True, lang="en")
    request = ApprovalRequest("printf 'a\tb'")
    app.handle(request)
    app.pane_rows(80, 20)
    app.approval_key("a")
    assert "[1] printf 'a\\tb'  [2] printf 'a\\tb' *" in texts(app)[-1]
    app.approval_key("1")
    assert request.wait() == AllowRule(["printf", "a\tb"])
    assert texts(app)[-1].startswith("allowed; commands matching printf 'a\\tb' now run")
