"""/fork and /rewind without a terminal (harness9_ref/tui/_app.py, _rewind.py; SPEC R-FORK-3 … R-FORK-5).

Driven as in test_app.py, on a real SQLite file through the offline provider: the fork becomes
the current session, the session forked from stays as it was, and a rewind puts the chosen
prompt back in the input line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness9_ref.memory.storage import Manager
from harness9_ref.schema import Message
from harness9_ref.text import STRINGS, error_line, history_lines
from harness9_ref.tui import App
from harness9_ref.tui._rewind import Prompt, rewind_lines, session_prompts

from .test_app import make_app, send, settle, texts
from .test_app_daily import wait_until


def prompted(manager: Manager, tmp_path: Path, prompts: list[str], lang: str = "zh") -> App:
    app = make_app(manager, tmp_path, lang=lang)
    for prompt in prompts:
        send(app, prompt)
    return app


def test_fork_switches_to_a_copy_and_leaves_the_original(manager: Manager, tmp_path: Path) -> None:
    app = prompted(manager, tmp_path, ["first", "second"])
    original = app.session.session_id
    before = manager.open_session(original).get_messages()
    send(app, "/fork")
    fork = app.session.session_id
    assert fork != original
    assert app.engine.session is app.session
    assert manager.open_session(fork).get_messages() == before
    notice = STRINGS["zh"]["fork_done"].format(session=fork, messages=f"{len(before)} 条消息")
    assert texts(app) == [line.text for line in history_lines(before)] + [notice]
    send(app, "third")
    assert manager.open_session(original).get_messages() == before  # the original stays as it was
    assert len(manager.open_session(fork).get_messages()) == len(before) + 2


def test_fork_of_a_session_never_stored_says_so(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, lang="en")
    draft = app.session.session_id
    send(app, "/fork")
    assert texts(app) == ["> /fork", STRINGS["en"]["fork_nothing"]]
    assert app.lines[-1].kind == "error"
    assert app.session.session_id == draft
    assert manager.list_sessions() == []


def on_stored(manager: Manager, tmp_path: Path, messages: list[Message], lang: str = "zh") -> App:
    """The App switched to a stored session holding ``messages``, as /resume leaves it."""
    session = manager.new_session()
    session.add_messages(messages)
    app = make_app(manager, tmp_path, lang=lang)
    app._switch(manager.open_session(session.session_id), [])
    return app


def test_rewind_lists_the_prompts_newest_last(manager: Manager, tmp_path: Path) -> None:
    messages = [
        Message("user", "first\nwith a second line"),
        Message("assistant", "", ()),
        Message("user", "  \t "),
        Message("user", "result", (), "c1"),  # a result is no prompt
        Message("user", "\x1b[2J clear"),
    ]
    app = on_stored(manager, tmp_path, messages, lang="en")
    en = STRINGS["en"]
    send(app, "/rewind")
    assert texts(app) == [
        "> /rewind",
        en["rewind_header"].format(n=3),
        "  [1] first",
        "  [2]",
        "  [3] \x1b[2J clear",  # kept as stored; the pane makes it visible when drawn (R-SAFE-1)
        en["rewind_prompt"],
    ]


def test_choosing_a_prompt_forks_before_it_and_puts_it_in_the_input_line(manager: Manager, tmp_path: Path) -> None:
    app = prompted(manager, tmp_path, ["first", "read README.md", "third"])
    original = app.session.session_id
    stored = manager.open_session(original).get_messages()
    send(app, "/rewind")
    app.editor.set_text(" 2 ")
    app.submit()
    fork = app.session.session_id
    assert fork != original
    kept = manager.open_session(fork).get_messages()
    assert kept == stored[:2]  # the messages before the second prompt
    assert (app.editor.text, app.editor.cursor) == ("read README.md", len("read README.md"))
    notice = STRINGS["zh"]["rewind_done"].format(k=2, session=fork)
    assert texts(app) == [line.text for line in history_lines(kept)] + [notice]
    assert manager.open_session(original).get_messages() == stored
    app.submit()  # sent again, as edited (here: unchanged)
    settle(app)
    assert manager.open_session(fork).get_messages()[2] == Message("user", "read README.md")


@pytest.mark.parametrize("answer", ["", "0", "4", "abc", "n", "p"])
def test_anything_but_a_listed_number_cancels_the_rewind(manager: Manager, tmp_path: Path, answer: str) -> None:
    app = prompted(manager, tmp_path, ["a", "b", "c"])
    sid = app.session.session_id
    sessions = manager.list_sessions()
    send(app, "/rewind")
    send(app, answer)
    assert texts(app)[-1] == STRINGS["zh"]["cancelled"]
    assert (app.session.session_id, app.editor.text, app.listing) == (sid, "", None)
    assert manager.list_sessions() == sessions


def test_rewind_without_a_prompt_says_so(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    send(app, "/rewind")
    assert texts(app) == ["> /rewind", STRINGS["zh"]["rewind_empty"]]
    assert app.listing is None


def test_a_long_session_opens_on_its_newest_page_and_pages_back() -> None:
    messages = [Message("user", f"p{i}") if i % 2 == 0 else Message("assistant", "ok") for i in range(50)]
    prompts = session_prompts(messages)
    assert prompts[:2] == [Prompt(0, "p0"), Prompt(2, "p2")]
    zh = STRINGS["zh"]
    assert rewind_lines(prompts, 3) == [
        zh["rewind_header_page"].format(page=3, n=5),
        *[f"  [{k}] p{2 * (k - 1)}" for k in range(21, 26)],
        zh["rewind_prompt_previous"],
    ]
    assert rewind_lines(prompts, 2)[-1] == zh["rewind_prompt_pages"]
    assert rewind_lines(prompts, 1)[-1] == zh["rewind_prompt_next"]


def test_paging_the_rewind_and_choosing_on_an_earlier_page(manager: Manager, tmp_path: Path) -> None:
    app = on_stored(manager, tmp_path, [m for i in range(12) for m in (Message("user", f"p{i + 1}"), Message("assistant", "ok"))])
    send(app, "/rewind")
    assert texts(app)[1] == STRINGS["zh"]["rewind_header_page"].format(page=2, n=2)
    send(app, "p")
    assert texts(app)[-2] == "  [10] p10"
    send(app, "11")  # not on this page
    assert texts(app)[-1] == STRINGS["zh"]["cancelled"]
    send(app, "/rewind")
    send(app, "p")
    send(app, "3")
    assert len(app.session.get_messages()) == 4
    assert app.editor.text == "p3"


def test_a_prompt_of_several_lines_comes_back_as_one_line(manager: Manager, tmp_path: Path) -> None:
    app = on_stored(manager, tmp_path, [Message("user", "fix\r\nthe\ttests\u2028now\n")])
    send(app, "/rewind")
    send(app, "1")
    assert app.editor.text == "fix thetests now"  # lines joined by one space; a tab is not typed
    assert app.session.get_messages() == []


@pytest.mark.parametrize("command", ["/fork", "/rewind"])
def test_not_while_a_turn_runs(manager: Manager, tmp_path: Path, command: str) -> None:
    app = make_app(manager, tmp_path, ask=True)
    app.editor.set_text("run sleep 2")
    app.submit()
    wait_until(app, "the question", lambda: app.asking is not None)
    sid = app.session.session_id
    app.answer("yes")  # the command now runs for two seconds
    app.editor.set_text(command)
    app.submit()
    assert texts(app)[-1] == error_line(STRINGS["zh"]["busy_command"].format(command=command))
    assert (app.session.session_id, app.listing) == (sid, None)
    settle(app)
