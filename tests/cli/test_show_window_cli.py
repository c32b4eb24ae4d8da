"""``show`` names a window the session learned from its server (SPEC R-WIN-7, R-LONG-16)."""

from __future__ import annotations

from pathlib import Path

from harness9_ref.memory.storage import ContextState, Manager
from harness9_ref.schema import Message
from tests.cli.helpers import cli, environment


def _session(home: Path, state: ContextState | None) -> str:
    with Manager(home / "sessions.db") as manager:
        session = manager.new_session()
        session.add_messages([Message("user", "hello"), Message("assistant", "hi")])
        if state is not None:
            session.save_context_state(state)
        return session.session_id


def test_show_ends_with_the_learned_window(tmp_path: Path) -> None:
    env = environment(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    learned = ContextState(120, 100, 0, window=2048, window_source="error", window_model="smollm2")
    sid = _session(home, learned)
    shown = cli(["show", sid], env, tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-1] == "window: 2K tokens (learned from the model server's overflow error, for smollm2)"
    zh = cli(["--lang", "zh", "show", sid], env, tmp_path)
    assert zh.stdout.splitlines()[-1] == "窗口：2K tokens（从模型服务的超长错误得知，模型 smollm2）"


def test_show_says_nothing_of_a_window_nobody_learned(tmp_path: Path) -> None:
    env = environment(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    sid = _session(home, ContextState(120, 100, 0))
    shown = cli(["show", sid], env, tmp_path)
    assert shown.returncode == 0 and "window" not in shown.stdout.splitlines()[-1]
