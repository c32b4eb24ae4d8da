"""One figure for one context in the App, in process (harness9_ref/tui/_app.py; SPEC R-TUI-35,
R-TUI-36, R-TUI-37).

The App as the program wires it in long-session mode, a real engine and the offline provider:
after every turn the status bar holds the engine's ``context_report()`` total, the figure
``/context`` heads with; a compaction that did not shrink the figure is no notice.
"""

from __future__ import annotations

from pathlib import Path

from harness9_ref.memory.storage import Manager
from harness9_ref.schema import ROLE_ASSISTANT, Message
from harness9_ref.testing import Failure, ScriptedProvider

from .test_app import make_app, send, texts


def test_after_each_turn_the_bar_holds_the_reports_total(manager: Manager, tmp_path: Path) -> None:
    app = make_app(manager, tmp_path, None, 2000, long_session=True)
    for n in range(1, 7):
        send(app, f"prompt number {n}: tell me about the context window")
        report = app.engine.context_report()
        assert (app.status.used, app.status.window) == (report.total, report.window), n  # R-TUI-37
    assert any("\u26a1" in line for line in texts(app, "notice"))  # six prompts at 2K compact on the way


def test_a_recovery_that_dropped_nothing_is_no_notice(manager: Manager, tmp_path: Path) -> None:
    """R-LONG-7b announces a recovery even when its view is the one refused; R-TUI-36 shows no line for it."""
    provider = ScriptedProvider([Failure("context_length_exceeded", "prompt is too long"), Message(ROLE_ASSISTANT, "ok")])
    app = make_app(manager, tmp_path, provider, 100_000, long_session=True)
    send(app, "hello")
    assert texts(app) == ["> hello", "ok"]
    assert app.status.used == app.engine.context_report().total
