"""The agent in a long session against an API that enforces its window (SPEC R-LONG-1, R-LONG, R-CLI-5, R-CLI-7).

``harness9-ref --context-window 4000 run …`` with ``--resume`` between prompts, against an
OpenAI-compatible server on 127.0.0.1 that counts a token per 3 bytes and rejects every request
above the window with HTTP 400 ``context_length_exceeded`` (tests/strict_api.py). Every prompt
must succeed, the summary must be carried from prompt to prompt, and no request may be above
the window. Most prompts go through ``main()`` in this process (fast); a few through the real
command in a subprocess.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness9_ref.cli import main
from harness9_ref.memory.context import RECALL_NOTE, REQUESTS_HEADER, SUMMARY_RECALL
from harness9_ref.memory.storage import Manager, message_anchor
from tests.cli.helpers import ROOT, cli, session_of
from tests.strict_api import StrictAPI

WINDOW = 4000
SESSION = re.compile(r"session: ([0-9a-f-]{36})")


@pytest.fixture
def api() -> Iterator[StrictAPI]:
    server = StrictAPI(WINDOW).start()
    yield server
    server.stop()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    (path / "big.txt").write_text("".join(f"line {i:05d}: some output of a build\n" for i in range(1200)), encoding="utf-8")
    (path / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    return path


@pytest.fixture
def environment(tmp_path: Path, api: StrictAPI, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "HARNESS9_HOME": str(tmp_path / "home"),
        "OPENAI_API_KEY": "sk-test-not-a-secret",
        "OPENAI_BASE_URL": api.url,
        "LLM_MODEL": "gpt-4o-mini",
    }
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def prompts(n: int) -> Iterator[str]:
    for i in range(n):
        if i % 6 == 2:
            yield "read big.txt"  # 46 KB: far more than the whole window
        elif i % 6 == 4:
            yield f"run seq 1 {400 + i}"
        else:
            yield f"prompt {i}: keep going with the refactoring of module_{i % 5}.py " + "and explain why " * 10


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_hundred_prompts_in_a_4000_token_window_all_succeed(
    environment: dict[str, str], api: StrictAPI, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--context-window", str(WINDOW), "--workdir", str(workdir)]
    session_id: str | None = None
    for prompt in prompts(100):
        resume: list[str] = ["--resume", session_id] if session_id else []
        status, out, err = run([*base, *resume, "run", prompt], capsys)
        assert status == (3 if prompt.startswith("run ") else 0), err  # R-CLI-50: a command not run for want of --yes
        assert "Traceback" not in err and out.strip()
        found = SESSION.search(err)
        assert found
        session_id = found.group(1)
    assert api.rejected == 0 and max(api.sizes) <= WINDOW, f"{api.rejected} requests above the window"
    assert len(api.summarizer_prompts) >= 2
    # A first summary that does not shrink what it replaces fails (R-FOLD-6); from the first one
    # kept on, every summary is carried over into the next.
    incremental = [p.startswith("<previous-summary>") for p in api.summarizer_prompts]
    assert True in incremental[:3] and all(incremental[incremental.index(True) :]), "the summary is carried over"
    assert session_id is not None
    with Manager(Path(environment["HARNESS9_HOME"]) / "sessions.db") as manager:
        session = manager.open_session(session_id)
        stored = session.get_messages()
        checkpoint = session.get_checkpoint()
    assert sum(1 for m in stored if m.role == "user" and not m.tool_call_id) == 100  # nothing lost
    assert checkpoint is not None and checkpoint.anchor == message_anchor(stored[checkpoint.covered - 1])
    # R-LONG-1: the agent offers its own tools, summaries say so, and carry the user's words and the plan.
    assert {tuple(names) for names in api.tools_offered} == {("read_file", "bash", "edit_file", "write_file", "recall", "todo")}
    assert all(p.endswith(SUMMARY_RECALL) for p in api.summarizer_prompts)
    assert REQUESTS_HEADER in checkpoint.summary and RECALL_NOTE.split("{")[0] in checkpoint.summary
    with Manager(Path(environment["HARNESS9_HOME"]) / "sessions.db") as manager:
        state = manager.open_session(session_id).get_context_state()
    assert state is not None and state.input_tokens > 0  # R-LONG-16: the next --resume starts calibrated


def test_the_real_command_resumes_from_the_checkpoint(environment: dict[str, str], api: StrictAPI, workdir: Path) -> None:
    env = {**os.environ, **environment, "PYTHONPATH": str(ROOT)}
    base = ["--context-window", str(WINDOW), "--workdir", str(workdir)]
    session_id: str | None = None
    for prompt in ["read big.txt", "what did the file say?", "read big.txt", "and the end of it?"]:
        resume: list[str] = ["--resume", session_id] if session_id else []
        done = cli([*base, *resume, "run", prompt], env, workdir)
        assert done.returncode == 0, done.stderr
        session_id = session_of(done)
    assert api.rejected == 0 and max(api.sizes) <= WINDOW
    assert api.summarizer_prompts, "two 46 KB files in a 4000-token window need a summary"
    assert session_id is not None
    with Manager(Path(environment["HARNESS9_HOME"]) / "sessions.db") as manager:
        assert manager.open_session(session_id).get_checkpoint() is not None
