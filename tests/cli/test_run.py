"""``run PROMPT`` in process (harness9_ref/cli/_run_prompt.py; SPEC R-CLI-7)."""

from __future__ import annotations

import io
from pathlib import Path

from harness9_ref.cli import run_prompt
from harness9_ref.engine import AgentEngine
from harness9_ref.memory.storage import MemorySession
from harness9_ref.offline import OfflineProvider
from harness9_ref.testing import Failure, ScriptedProvider
from harness9_ref.tools import Registry


class ClosedPipe(io.StringIO):
    """Standard output whose reader went away (``harness9-ref run … | head -1``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_text_to_out_activity_and_session_to_err(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    out, err = io.StringIO(), io.StringIO()
    engine = AgentEngine(OfflineProvider(), Registry(tmp_path), session=MemorySession())
    assert run_prompt(engine, "sid-1", "read a.txt", out, err) == 0
    assert out.getvalue().startswith("Reading a.txt.\nThe tool calls of the last step returned:\n")
    assert out.getvalue().endswith("\n") and not out.getvalue().endswith("\n\n")
    assert err.getvalue() == '\u2192 read_file {"path": "a.txt"}\n\u2190 read_file: alpha\nsession: sid-1\n'


def test_a_failed_run_is_one_error_line_then_the_session(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    provider = ScriptedProvider([Failure("overloaded", "anthropic: HTTP 529 overloaded_error: Overloaded", ("par",))])
    engine = AgentEngine(provider, Registry(tmp_path))
    assert run_prompt(engine, "sid-2", "hello", out, err) == 1
    assert out.getvalue() == "par\n"
    assert err.getvalue() == "harness9-ref: error: anthropic: HTTP 529 overloaded_error: Overloaded\nsession: sid-2\n"


def test_a_closed_standard_output_does_not_stop_the_run(tmp_path: Path) -> None:
    err = io.StringIO()
    session = MemorySession()
    engine = AgentEngine(OfflineProvider(), Registry(tmp_path), session=session)
    assert run_prompt(engine, "sid-3", "hello", ClosedPipe(), err) == 0
    assert err.getvalue() == "session: sid-3\n"
    assert [m.role for m in session.get_messages(0)] == ["user", "assistant"]
