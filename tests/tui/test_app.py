"""The UI's behaviour without a terminal (harness9_ref/tui/_app.py; SPEC R-TUI-2 … R-TUI-11, R-TUI-15).

``App`` is driven as the screen drives it: type into ``editor``, ``submit()``, ``interrupt()``,
and ``poll()`` until the worker thread is done. The provider is the offline one, or a script.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness9_ref.engine import AgentEngine, LiteralContext, LongSession, SaveAsItGoes
from harness9_ref.memory.context import new_summarization_compactor
from harness9_ref.memory.storage import Manager, MemorySession, SessionDatabaseError, session_folder
from harness9_ref.offline import OfflineProvider
from harness9_ref.provider import LLMProvider
from harness9_ref.schema import Message
from harness9_ref.testing import Failure, ScriptedProvider
from harness9_ref.text import PaneLine, context_lines
from harness9_ref.tools import Registry
from harness9_ref.tui import App, Approver, session_context

WAIT = 10.0


def make_app(
    manager: Manager,
    workdir: Path,
    provider: LLMProvider | None = None,
    window: int = 2000,
    *,
    long_session: bool = False,
    lang: str = "zh",
    ask: bool = False,
) -> App:
    """The App as the program wires it: a draft session of ``workdir`` (R-FIND-4a), the registry
    (asking first when ``ask``)."""
    provider = provider if provider is not None else OfflineProvider()
    session = manager.new_session(draft=True, workdir=session_folder(str(workdir)), provider="offline")
    approver = Approver() if ask else None
    registry = Registry(workdir, approve=approver)
    engine = AgentEngine(
        provider,
        registry,
        session=session,
        compactor=new_summarization_compactor(provider, window),
        context=LongSession(window) if long_session else LiteralContext(window),
    )
    return App(
        engine,
        manager,
        session,
        "openai/gpt-4o-mini",
        str(workdir),
        provider="offline",
        lang=lang,
        registry=registry,
        approver=approver,
        long_session=long_session,
    )


def start_figure(app: App) -> int:
    """R-TUI-15: the engine's figure in long-session mode, else the estimate of what is stored."""
    if app.long_session:
        return app.engine.context_report().total
    return session_context(app.session, app.system_prompt, app.registry.available_tools())


def settle(app: App) -> None:
    deadline = time.monotonic() + WAIT
    while app.running:
        app.poll()
        assert time.monotonic() < deadline, "the turn did not finish"
        time.sleep(0.005)
    app.poll()


def send(app: App, text: str) -> None:
    app.editor.set_text(text)
    app.submit()
    settle(app)


def texts(app: App, kind: str | None = None) -> list[str]:
    """The pane's texts after the start screen's pointer to /help (R-TUI-23, checked on its own below)."""
    lines = app.lines[1:] if app.lines[:1] == [PaneLine(app.texts["start_hint"], "notice")] else app.lines
    return [line.text for line in lines if kind is None or line.kind == kind]


def status(app: App) -> str:
    return "".join(text for text, _ in app.status_segments(200))


def test_a_prompt_streams_a_reply_and_shows_the_ctx_part(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    sid = app.session.session_id
    start = start_figure(app)
    assert start > 0 and app.status.used == start
    assert status(app) == (
        f"[harness9] offline  workdir: {tmp_path}  \u2502  session: {sid[:8]}...  ctx: {start}/2K ({start * 100 // 2000}%)"
    )
    send(app, "hello")
    assert texts(app)[0] == "> hello"
    assert texts(app, "assistant")[0].startswith('Offline reply to "hello".\nThis conversation holds 2 messages')
    assert app.status.window == 2000 and app.status.used is not None
    assert status(app).endswith(f"ctx: {app.status.used}/2K ({app.status.used * 100 // 2000}%)")
    assert app.status_segments(200)[-1][1] == 10
    assert app.input_prompt == "> "


def test_read_shows_the_tool_call_and_its_result(manager: Manager, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello world\nsecond line\n")
    app = make_app(manager, tmp_path)
    send(app, "read notes.txt")
    assert texts(app) == [
        "> read notes.txt",
        "Reading notes.txt.",
        '\u2192 read_file {"path": "notes.txt"}',
        "\u2190 read_file: hello world \uff082 \u884c\uff0c24 B\uff09",  # zh: R-TUI-17b
        texts(app)[4],
    ]
    assert texts(app)[4].startswith("The tool calls of the last step returned:\n- read_file notes.txt: 2 lines")


def test_compaction_is_announced_within_a_few_turns(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, window=2000)
    for prompt in ("one", "two", "three", "four", "five"):
        send(app, prompt)
    notices = [t for t in texts(app, "notice") if t.startswith("\u26a1 上下文已压缩 \u2014 ")]
    assert len(notices) == 1, texts(app, "notice")
    assert notices[0].endswith("（10 → 8 条消息）")
    assert texts(app).index(notices[0]) == texts(app).index("> five") + 1


def test_new_switches_session_clears_the_pane_and_shows_the_start_figure(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    old = app.session.session_id
    send(app, "hello")
    send(app, "/new")
    assert app.session.session_id != old
    assert app.engine.session is app.session
    assert app.lines == [PaneLine(f"已新建会话 {app.session.session_id}", "notice")]  # R-TUI-23
    assert app.status.used == start_figure(app) and app.status.window == 2000
    assert app.session.session_id[:8] in status(app)
    assert status(app).endswith(f"ctx: {app.status.used}/2K ({app.status.used * 100 // 2000}%)")
    assert manager.recent_sessions() == manager.recent_sessions(10, 0)
    assert app.session.session_id not in [s.id for s in manager.recent_sessions()]  # a draft until used
    send(app, "again")
    assert manager.open_session(old).get_messages(0)[0].content == "hello"
    assert app.session.get_messages(0)[0].content == "again"


def test_resume_lists_sessions_and_a_number_opens_one(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    first = app.session.session_id
    send(app, "remember me")
    send(app, "/new")
    send(app, "/resume")
    assert texts(app)[:2] == [f"已新建会话 {app.session.session_id}", "> /resume"]
    listing = texts(app, "notice")[1:]
    assert listing == [
        "可用会话（1 条）：",  # the new session holds nothing yet: not listed (R-TUI-18)
        f"  [1] {first[:8]}  刚刚  2 条消息  remember me",
        "输入序号选择（非数字 Enter 取消）：",
    ]
    number = "1"
    assert app.listing is not None
    send(app, number)
    assert app.listing is None
    assert app.session.session_id == first
    assert app.engine.session is app.session
    assert texts(app)[0] == "> remember me"
    assert texts(app, "assistant")[0].startswith('Offline reply to "remember me".')
    assert app.status.used == start_figure(app) > 0
    assert app.editor.history == ["remember me", "/new", "/resume"]  # the number is not remembered


def test_resume_shows_and_says_another_folders_session(manager: Manager, tmp_path: Path) -> None:
    """R-TUI-43: /resume lists every folder's sessions, another folder's with its folder, and
    opening it says where it was started and that tools run here; /new records the UI's folder."""
    other = manager.new_session(workdir="/srv/projA", provider="offline")
    other.add_messages([Message("user", "plan for A"), Message("assistant", "ok")])
    app = make_app(manager, tmp_path, lang="en")
    send(app, "here")
    send(app, "/resume")
    listing = texts(app, "notice")
    (item,) = [line for line in listing if "plan for A" in line]  # the two may share a second: either order
    number = item.split("]")[0].strip(" [")
    assert item == f"  [{number}] {other.session_id[:8]}  just now  2 messages  /srv/projA  plan for A"
    assert next(line for line in listing if "  here" in line).endswith("2 messages  here")  # the UI's own folder: none
    send(app, number)
    assert app.session.session_id == other.session_id
    here = session_folder(str(tmp_path))
    assert texts(app, "notice")[-1] == f"harness9-ref: this session was started in /srv/projA; its tools now run in {here}"
    send(app, "/new")
    send(app, "next")
    assert manager.session_origin(app.session.session_id) == (here, "offline")


@pytest.mark.parametrize("answer", ["x", "", "0", "9", "1 2", "-1"])
def test_anything_but_a_listed_number_cancels(manager: Manager, tmp_path: Path, answer: str) -> None:
    app = make_app(manager, tmp_path)
    send(app, "something to list")
    sid = app.session.session_id
    send(app, "/resume")
    assert app.listing is not None
    send(app, answer)
    assert texts(app)[-1] == "已取消"
    assert app.session.session_id == sid and app.listing is None


def test_resume_without_sessions(tmp_path: Path) -> None:
    with Manager(tmp_path / "s.db") as manager:
        app = make_app(manager, tmp_path)
        manager.delete_session(app.session.session_id)
        send(app, "/resume")
        assert texts(app)[-1] == "没有可恢复的会话"
        assert app.listing is None


def test_unknown_commands_are_not_sent(manager: Manager, tmp_path: Path) -> None:
    provider = ScriptedProvider([])
    app = make_app(manager, tmp_path, provider)
    send(app, "/help me")
    assert texts(app) == ["> /help me", "未知命令：/help me"]
    assert provider.requests == []


def test_errors_are_one_line_and_the_ui_keeps_running(manager: Manager, tmp_path: Path) -> None:
    provider = ScriptedProvider([Failure("rate_limit", "openai: HTTP 429 rate_limit_exceeded: slow down\nplease")])
    app = make_app(manager, tmp_path, provider)
    send(app, "hello")
    assert texts(app) == ["> hello", "错误：openai: HTTP 429 rate_limit_exceeded: slow down please"]
    assert not app.exiting and not app.running


class GatedProvider(OfflineProvider):
    """The offline provider, holding its first chunk until ``gate`` is set."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        super().__init__(chunk_delay=0.001, sleep=self._hold)

    def _hold(self, _: float) -> None:
        self.gate.wait(WAIT)


def test_ctrl_c_cancels_a_running_turn_and_keeps_the_conversation(manager: Manager, tmp_path: Path) -> None:
    provider = GatedProvider()
    app = make_app(manager, tmp_path, provider)
    app.editor.set_text("hello")
    app.submit()
    assert app.running and app.input_prompt == "* "
    app.editor.set_text("too early")
    app.submit()
    assert app.editor.text == "too early"  # refused, kept for later
    assert texts(app)[-1].startswith("错误：")
    app.interrupt()
    provider.gate.set()
    settle(app)
    assert not app.exiting
    assert texts(app) == ["> hello", texts(app)[1], "已中断"]
    assert not any(t.startswith("错误：cancelled") for t in texts(app))
    assert [m.content for m in app.session.get_messages(0)] == ["hello"]  # R-ENG-12: the prompt is kept


def test_ctrl_c_when_idle_ends_the_program(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    app.interrupt()
    assert app.exiting


def test_exit_ends_the_program(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    send(app, "  /exit ")
    assert app.exiting


def test_exit_while_running_cancels_the_turn_first(manager: Manager, tmp_path: Path) -> None:
    provider = GatedProvider()
    app = make_app(manager, tmp_path, provider)
    app.editor.set_text("hello")
    app.submit()
    app.editor.set_text("/exit")
    app.submit()
    assert app.exiting
    provider.gate.set()
    app.shutdown()
    assert not app.worker or app.worker.join(0)
    assert [m.content for m in app.session.get_messages(0)] == ["hello"]


def test_new_and_resume_wait_for_the_running_turn(manager: Manager, tmp_path: Path) -> None:
    provider = GatedProvider()
    app = make_app(manager, tmp_path, provider)
    sid = app.session.session_id
    app.editor.set_text("hello")
    app.submit()
    app.editor.set_text("/new")
    app.submit()
    assert app.session.session_id == sid
    assert texts(app)[-1] == "错误：运行中不能使用 /new；请先按 Ctrl+C 中断"
    provider.gate.set()
    settle(app)


def test_resume_at_start_shows_the_stored_messages(manager: Manager, tmp_path: Path) -> None:
    session = manager.new_session()
    session.add_messages([Message("user", "earlier"), Message("assistant", "answer")])
    provider = OfflineProvider()
    engine = AgentEngine(provider, Registry(tmp_path))
    app = App(engine, manager, session, "m", str(tmp_path), provider="offline", notices=["notice line"])
    assert app.lines == [
        PaneLine("notice line", "notice"),
        PaneLine("输入 /help 查看命令和按键", "notice"),  # R-TUI-23: after the notices, before the history
        PaneLine("> earlier", "user"),
        PaneLine("answer", "assistant"),
    ]
    assert engine.session is session


def test_log_warnings_show_as_error_lines(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    logger = logging.getLogger("harness9_ref.test_app")
    handler = app.log_handler()
    logger.addHandler(handler)
    try:
        logger.warning("could not save %d messages", 2)
    finally:
        logger.removeHandler(handler)
    app.poll()
    assert texts(app) == ["错误：could not save 2 messages"]  # no echo: nothing was typed


def test_pane_rows_wrap_and_scroll(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path)
    app.lines = [PaneLine("a" * 25, "assistant"), PaneLine("中文" * 5, "user"), PaneLine("x\ty", "tool")]
    assert app.pane_rows(10, 10) == [
        ("a" * 10, "assistant"),
        ("a" * 10, "assistant"),
        ("a" * 5, "assistant"),
        ("中文中文中", "user"),
        ("文中文中文", "user"),
        ("x    y", "tool"),
    ]
    assert app.pane_rows(10, 2) == [("文中文中文", "user"), ("x    y", "tool")]
    app.page(2)
    assert app.pane_rows(10, 2) == [("a" * 5, "assistant"), ("中文中文中", "user")]
    app.page(100)
    assert app.pane_rows(10, 2) == [("a" * 10, "assistant"), ("a" * 10, "assistant")]
    app.page(-100)
    assert app.pane_rows(10, 1) == [("x    y", "tool")]


def wait_for_line(app: App, prefix: str) -> str:
    """Poll until a pane line starting with ``prefix`` appears (/compact works on a thread)."""
    deadline = time.monotonic() + WAIT
    while True:
        app.poll()
        found = [text for text in texts(app) if text.startswith(prefix)]
        if found:
            return found[-1]
        assert time.monotonic() < deadline, f"no line starting with {prefix!r} in {texts(app)}"
        time.sleep(0.005)


def test_compact_summarises_now_with_a_focus_and_shows_the_notice(manager: Manager, tmp_path: Path) -> None:
    """/compact [focus] (SPEC R-LONG-9, R-TUI-6): the summary is made and stored whatever the budget."""
    summaries: list[str] = []

    class Recording(OfflineProvider):
        def generate(self, messages, available_tools):  # type: ignore[no-untyped-def]
            summaries.append(messages[-1].content)
            return super().generate(messages, available_tools)

    app = make_app(manager, tmp_path, Recording(), 100_000, long_session=True)
    for i in range(5):
        send(app, f"prompt {i}")
    send(app, "/compact the failing tests")
    at = texts(app).index("> /compact the failing tests")
    assert texts(app)[at + 1] == "正在压缩上下文…"
    notice = wait_for_line(app, "\u26a1 上下文已压缩")
    assert notice.endswith("（11 → 8 条消息）")
    assert summaries[-1].startswith("Conversation to summarize:")
    assert summaries[-1].endswith("\n\nPay particular attention to: the failing tests")
    checkpoint = manager.open_session(app.session.session_id).get_checkpoint()
    assert checkpoint is not None and checkpoint.covered == 4


@pytest.mark.parametrize(
    ("lang", "line"),
    [("zh", "错误：还没有足够早的内容可以总结"), ("en", "error: nothing is old enough to summarise yet")],
)
def test_compact_with_nothing_to_summarise_shows_an_error_line(
    manager: Manager, tmp_path: Path, lang: str, line: str
) -> None:
    app = make_app(manager, tmp_path, None, 100_000, long_session=True, lang=lang)
    send(app, "only one prompt")
    send(app, "/compact")
    assert wait_for_line(app, line.partition("：")[0] if lang == "zh" else "error: ") == line  # R-LANG-3
    assert manager.open_session(app.session.session_id).get_checkpoint() is None


def test_compact_sets_the_status_bar_to_the_notices_figure(manager: Manager, tmp_path: Path) -> None:
    """R-TUI-21b: after /compact the bar, the notice and /context show one figure."""
    app = make_app(manager, tmp_path, None, 100_000, long_session=True)
    for i in range(5):
        send(app, f"prompt {i}")
    send(app, "/compact")
    notice = wait_for_line(app, "\u26a1 上下文已压缩：总结了较早的对话 \u2014 ")
    after = notice.split(" \u2192 ")[1].split(" tokens")[0]
    assert re.search(rf"ctx: {re.escape(after)}/100K \(\d+%\)$", status(app))
    assert app.status.used == app.engine.context_report().total


def test_context_lists_the_report_and_waits_for_a_running_turn(manager: Manager, tmp_path: Path) -> None:
    """R-TUI-20a: /context's lines are those of the engine's report; during a turn it is refused."""
    app = make_app(manager, tmp_path, None, 100_000, long_session=True, lang="en")
    send(app, "hello")
    send(app, "/context")
    header = wait_for_line(app, "next request: ")
    shown = texts(app)[texts(app).index(header) :]
    assert shown == context_lines(app.engine.context_report(), "en")
    app.editor.set_text("again")
    app.submit()  # running until the UI thread sees RUN_FINISHED
    app.editor.set_text("/context")
    app.submit()
    assert texts(app)[-1] == "error: /context is not available while a turn is running; press Ctrl+C first"
    settle(app)


class _ReadOnlySession(MemorySession):
    """A session whose every save fails as a read-only database's does."""

    def add_messages(self, msgs: Sequence[Message]) -> None:
        raise SessionDatabaseError("sessions.db: attempt to write a readonly database")


def test_a_turn_that_could_not_be_saved_says_so(manager: Manager, tmp_path: Path) -> None:
    """R-TUI-22: the save_failed event of a durable engine is one line of the error kind."""
    provider = OfflineProvider()
    session = _ReadOnlySession()
    engine = AgentEngine(provider, Registry(tmp_path), session=session, context=LiteralContext(2000), saving=SaveAsItGoes())
    app = App(
        engine, manager, session, "openai/gpt-4o-mini", str(tmp_path), provider="offline", lang="en", registry=Registry(tmp_path)
    )
    send(app, "hello")
    assert texts(app, "error")[-1] == (
        "⚠ 2 of 2 messages of this turn were not saved: sessions.db: attempt to write a readonly database"
    )


@pytest.mark.parametrize(
    ("lang", "hint", "new"),
    [("zh", "输入 /help 查看命令和按键", "已新建会话 "), ("en", "Type /help for the commands and keys", "new session ")],
    ids=["zh", "en"],
)
def test_the_start_screen_points_to_help_and_new_says_it_worked(
    manager: Manager, tmp_path: Path, lang: str, hint: str, new: str
) -> None:
    """R-TUI-23 in both languages: the first line of a new UI, and /new's only line."""
    app = make_app(manager, tmp_path, lang=lang)
    assert app.lines == [PaneLine(hint, "notice")]
    send(app, "/new")
    assert app.lines == [PaneLine(new + app.session.session_id, "notice")]
