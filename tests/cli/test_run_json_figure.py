"""``run --json`` tells the figure ``/context`` tells (SPEC R-TUI-35, R-TUI-37, R-TUI-36, R-CLI-16b).

Prompt after prompt on one session at a small window (the offline provider's long replies
compact it on the way): in process, the engine the program builds, run by ``run_prompt`` as
``run --json`` runs it, is asked for its ``context_report()`` after each run, whose total must
be the run's closing token update, the last line before the terminal one; the real command
closes each run so; no compaction line of plain ``run`` reports a context that grew.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from harness9_ref.cli import (
    build_engine,
    build_provider,
    build_registry,
    open_manager,
    open_session,
    resolve_settings,
    run_prompt,
)
from harness9_ref.cli._wiring import build_instructions, session_lock
from harness9_ref.engine import AgentEngine, LongSession
from harness9_ref.memory.storage import MemorySession
from harness9_ref.schema import ROLE_ASSISTANT, Message
from harness9_ref.testing import Failure, ScriptedProvider
from harness9_ref.tools import Registry
from tests.cli.helpers import cli
from tests.cli.test_run_json import checked, of_type

WINDOW = "2000"
OPTIONS = ["--provider", "offline", "--context-window", WINDOW]
NOTICE = re.compile(r"^\u26a1 context compacted\S* .*\u2014 (\S+) \u2192 (\S+) tokens")


def test_each_runs_closing_token_update_is_the_context_reports_total(env: dict[str, str], work: Path) -> None:
    """In process, one engine as the program builds it, run after run: the closing token update
    is ``context_report()``'s total and window at that moment, the figure ``/context`` shows."""
    options: dict[str, object] = {"command": "run", "prompt": "x", "provider": "offline", "context_window": WINDOW}
    settings = resolve_settings(options, env, str(work))
    compactions: list[dict[str, Any]] = []
    with open_manager(settings) as manager:
        registry = build_registry(settings, None)
        session = open_session(manager, settings, session_lock(settings), lambda line: None)
        engine = build_engine(settings, build_provider(settings), session, registry, build_instructions(settings))
        try:
            for n in range(1, 8):
                out, err = io.StringIO(), io.StringIO()
                prompt = f"prompt number {n}: tell me about the context window"
                assert run_prompt(engine, session.session_id, prompt, out, err, as_json=True) == 0, err.getvalue()
                items = checked(out.getvalue())
                assert [item["type"] for item in items[-2:]] == ["token_update", "done"]  # R-TUI-37
                report = engine.context_report()
                assert items[-2]["data"] == {"estimated_tokens": report.total, "context_window": report.window}, n
                compactions += of_type(items, "compaction")
        finally:
            registry.close()
    assert compactions, "seven prompts at 2K compact on the way"


def test_the_command_closes_each_run_with_a_token_update(env: dict[str, str], work: Path) -> None:
    """The real command: the closing token update comes right before the terminal line (R-CLI-16b)."""
    session = ""
    for n in range(1, 4):
        resume = ["--resume", session] if session else []
        result = cli([*OPTIONS, *resume, "run", "--json", f"prompt number {n}"], env, work)
        assert result.returncode == 0, result.stderr
        items = checked(result.stdout)
        session = items[0]["data"]["id"]
        assert [item["type"] for item in items[-2:]] == ["token_update", "done"]
        assert items[-2]["data"]["context_window"] == int(WINDOW)
        assert items[-2]["data"]["estimated_tokens"] > max(u["estimated_tokens"] for u in of_type(items, "token_update")[:-1])


def test_plain_run_shows_no_notice_of_growth(env: dict[str, str], work: Path) -> None:
    session = ""
    notices: list[tuple[str, str]] = []
    for n in range(1, 8):
        resume = ["--resume", session] if session else []
        result = cli([*OPTIONS, *resume, "run", f"prompt number {n}: tell me about the context window"], env, work)
        assert result.returncode == 0, result.stderr
        session = result.stderr.splitlines()[-1].split("session: ")[-1]
        notices += [(m.group(1), m.group(2)) for m in map(NOTICE.match, result.stderr.splitlines()) if m]
    assert notices, "seven prompts at 2K compact on the way"
    for before, after in notices:  # R-TUI-36
        assert _tokens(after) <= _tokens(before), notices


def _tokens(text: str) -> float:
    """A count as R-FMT writes it back to a number (``1.1K`` is 1100)."""
    return float(text[:-1]) * 1000 if text.endswith("K") else float(text)


def recovered(tmp_path: Path) -> AgentEngine:
    """An engine whose first call is refused as too long (R-LONG-7): its recovery is announced
    even when, as here, there is nothing to drop, so the figure stays what it was."""
    provider = ScriptedProvider([Failure("context_length_exceeded", "prompt is too long"), Message(ROLE_ASSISTANT, "ok")])
    return AgentEngine(provider, Registry(tmp_path), session=MemorySession(), context=LongSession(100_000))


def test_a_compaction_that_did_not_shrink_is_an_event_but_no_notice(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_prompt(recovered(tmp_path), "sid-1", "hello", out, err, as_json=True) == 0
    [event] = of_type(checked(out.getvalue()), "compaction")  # R-CLI-16b: the event stays
    assert event["tokens_after"] >= event["tokens_before"]
    out, err = io.StringIO(), io.StringIO()
    assert run_prompt(recovered(tmp_path), "sid-2", "hello", out, err) == 0
    assert "context compacted" not in err.getvalue()  # R-TUI-36: no notice of it
    assert out.getvalue() == "ok\n"
