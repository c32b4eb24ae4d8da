"""AGENTS.md in the real terminal UI inside tmux (SPEC R-INST-4, R-INST-5).

Same harness as test_screen_tmux.py, on real nested folders under ``tmp_path``: ``/context``
lists the files the system prompt holds, a warning shows once as a notice line however many
prompts follow, and, against an OpenAI-compatible server on 127.0.0.1 (tests/strict_api.py),
an edit between two prompts reaches the model's next request without restarting.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.strict_api import StrictAPI

from .test_screen_tmux import Screen, pytestmark, started  # noqa: F401  (pytestmark: skipped without tmux)
from .test_screen_tmux_context import context


def layout(screen: Screen) -> Path:
    """home/AGENTS.md; work is a repository (.git) with AGENTS.md, a folder named AGENTS.md in
    work/sub, and AGENTS.md in work/sub/deep, the working directory."""
    (screen.db.parent / "AGENTS.md").write_text("Home rule.\n", encoding="utf-8")
    (screen.workdir / ".git").mkdir()
    (screen.workdir / "AGENTS.md").write_text("Root rule.\n", encoding="utf-8")
    deep = screen.workdir / "sub" / "deep"
    deep.mkdir(parents=True)
    (screen.workdir / "sub" / "AGENTS.md").mkdir()
    (deep / "AGENTS.md").write_text("Deep rule.\n" * 30, encoding="utf-8")
    return deep


def flat(text: str) -> str:
    """The text with the UI's own line wrapping (a space turned into a line break) undone."""
    return " ".join(text.split())


def agents_lines(lines: list[str]) -> list[str]:
    """The AGENTS.md lines of /context, each joined with the rows the UI wrapped it onto (a row
    right after one that does not start with a space continues it: /context indents every line
    below its first two)."""
    found: list[str] = []
    joining = False
    for line in lines:
        if line.startswith("    AGENTS.md"):
            found.append(line)
            joining = True
        elif joining and line and not line[0].isspace():
            found[-1] = f"{found[-1]} {line}"
        else:
            joining = False
    return found


def test_context_lists_the_files_and_a_warning_shows_once(screen: Screen) -> None:
    deep = layout(screen)
    started(screen, "--workdir", str(deep))
    warning = f"已跳过 AGENTS.md：{screen.workdir / 'sub' / 'AGENTS.md'} 不是普通文件"
    screen.wait(lambda: warning in flat(screen.history()), "the warning about the folder named AGENTS.md")
    files = agents_lines(context(screen))
    home, root, own = screen.db.parent / "AGENTS.md", screen.workdir / "AGENTS.md", deep / "AGENTS.md"
    assert [re.sub(r"，\S+ tokens$", "", line) for line in files] == [
        f"    AGENTS.md：{home}", f"    AGENTS.md：{root}", f"    AGENTS.md：{own}",
    ]  # fmt: skip
    assert files[2].endswith(f"，{(len(f'## {own}') + 2 + len('Deep rule.' + chr(10)) * 30 - 1) // 4} tokens")
    for prompt in ("one", "two"):
        screen.say(prompt)
        shown = screen.history()  # the screen, as the UI keeps no scrollback: what followed the prompt
        assert warning not in flat(shown[shown.rindex(f"> {prompt}") :])  # R-INST-4: once, not at every run
    (own).write_text("Deep rule, edited.\n", encoding="utf-8")
    edited = agents_lines(context(screen))[2]
    assert edited == f"    AGENTS.md：{own}，{(len(f'## {own}') + 2 + len('Deep rule, edited.')) // 4} tokens"


@pytest.fixture
def api() -> Iterator[StrictAPI]:
    server = StrictAPI(100_000).start()
    yield server
    server.stop()


def test_an_edit_between_two_prompts_reaches_the_model(screen: Screen, api: StrictAPI) -> None:
    deep = layout(screen)
    environ = {"OPENAI_API_KEY": "sk-test-not-a-secret", "OPENAI_BASE_URL": api.url}
    started(screen, "--provider", "openai", "--workdir", str(deep), window=100_000, environ=environ)
    screen.say("first prompt")
    (screen.workdir / "AGENTS.md").write_text("Root rule, second version.\n", encoding="utf-8")
    screen.say("second prompt")
    assert len(api.systems) == 2, api.systems
    assert f"## {screen.workdir / 'AGENTS.md'}\n\nRoot rule.\n\n" in api.systems[0]
    assert f"## {screen.workdir / 'AGENTS.md'}\n\nRoot rule, second version.\n\n" in api.systems[1]
    assert api.systems[1].endswith("Deep rule.\n" * 29 + "Deep rule.")
