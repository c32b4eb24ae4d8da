"""The waiting row while a turn waits for the model, and the label of a local server, without a
terminal (harness9_ref/tui/_app.py; SPEC R-TUI-26, R-TUI-27).

The provider holds its reply back until the test lets it go (``HeldBack``), as a local server
does while it reads a long prompt; the App's clock of waits is a settable one, so the seconds
shown are exact. ``poll()`` is called as the screen calls it.
"""

from __future__ import annotations

import time
from pathlib import Path

from harness9_ref.engine import AgentEngine, LiteralContext
from harness9_ref.memory.storage import Manager
from harness9_ref.tools import Registry
from harness9_ref.tui import App
from tests.fakes import Clock, HeldBack

WAIT = 10.0


def waiting_app(manager: Manager, workdir: Path, provider: HeldBack, clock: Clock, lang: str = "en") -> App:
    session = manager.new_session(draft=True)
    registry = Registry(workdir)
    engine = AgentEngine(provider, registry, session=session, context=LiteralContext(8192))
    return App(
        engine, manager, session, "smollm2", str(workdir), provider="openai", base_url="http://127.0.0.1:8080/v1",
        lang=lang, registry=registry, monotonic=clock,
    )  # fmt: skip


def asked(app: App, provider: HeldBack) -> None:
    """Send a prompt and wait until the provider has the request (its token update is drawn)."""
    app.editor.set_text("explain the repository")
    app.submit()
    assert provider.asked.wait(WAIT)
    deadline = time.monotonic() + WAIT
    while app.status.used is None or not app.items.empty():
        app.poll()
        assert time.monotonic() < deadline
        time.sleep(0.005)
    app.poll()


def finished(app: App) -> None:
    deadline = time.monotonic() + WAIT
    while app.running:
        app.poll()
        assert time.monotonic() < deadline, "the turn did not finish"
        time.sleep(0.005)
    app.poll()


def test_the_row_shows_the_whole_seconds_of_the_wait_and_goes_with_the_reply(manager: Manager, tmp_path: Path) -> None:
    """R-TUI-27a: not before a whole second, then updated as each second passes; never a line."""
    clock, provider = Clock(0), HeldBack("Hello.")
    app = waiting_app(manager, tmp_path, provider, clock)
    asked(app, provider)
    assert app.waiting_line() is None  # under a second: nothing flickers for a fast model
    clock.now += 1.2
    assert app.poll() is True  # the screen redraws for the new second
    assert app.waiting_line() == "waiting for the model\u2026 1 s"
    assert app.pane_rows(120, 40)[-1] == ("waiting for the model\u2026 1 s", "notice")
    assert app.poll() is False  # the same second: nothing to redraw
    clock.now += 11
    assert app.poll() is True
    assert app.pane_rows(120, 40)[-1] == ("waiting for the model\u2026 12 s", "notice")
    assert not any("waiting" in line.text for line in app.lines)  # no line of the conversation
    provider.release.set()
    finished(app)
    assert app.waiting_line() is None
    assert app.pane_rows(120, 40)[-1] == ("Hello.", "assistant")


def test_ctrl_c_takes_the_row_away_at_once(manager: Manager, tmp_path: Path) -> None:
    """R-TUI-27c, R-TUI-9: the row goes when the interrupted line shows."""
    clock, provider = Clock(0), HeldBack()
    app = waiting_app(manager, tmp_path, provider, clock, lang="zh")
    asked(app, provider)
    clock.now += 3
    app.poll()
    assert app.pane_rows(120, 40)[-1] == ("正在等待模型\u2026 3 秒", "notice")
    app.interrupt()
    assert app.waiting_line() is None
    assert app.pane_rows(120, 40)[-1] == ("已中断", "notice")
    provider.release.set()
    finished(app)


def test_the_label_names_the_local_server(manager: Manager, tmp_path: Path) -> None:
    """R-TUI-26."""
    app = waiting_app(manager, tmp_path, HeldBack(), Clock(0))
    assert "".join(text for text, _ in app.status_segments(200)).startswith(
        "[harness9] openai:smollm2@127.0.0.1:8080  workdir: "
    )
