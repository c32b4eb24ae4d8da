"""AGENTS.md in the real command (SPEC R-INST-4, R-INST-6).

``show --system`` runs as a subprocess on nested folders of a repository under ``tmp_path``;
``run`` talks to an OpenAI-compatible server on 127.0.0.1 (tests/strict_api.py), which records
each request's system message, so the test sees what the model was sent, and the session
database is read back byte for byte to show that none of it was stored.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness9_ref.engine import DEFAULT_SYSTEM_PROMPT, INSTRUCTIONS_PREAMBLE
from tests.cli.helpers import cli, environment, one_error, seed, session_of
from tests.strict_api import StrictAPI


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    values = environment(tmp_path)
    (tmp_path / "home").mkdir()
    return values


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """``repo`` (a ``.git`` folder) with ``repo/app/web``; AGENTS.md at home, root and web."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "app" / "web").mkdir(parents=True)
    (tmp_path / "home" / "AGENTS.md").write_text("Home rule.\n", encoding="utf-8")
    (root / "AGENTS.md").write_text("Root rule.\n", encoding="utf-8")
    (root / "app" / "web" / "AGENTS.md").write_text("Web rule.\n", encoding="utf-8")
    return root


def expected(*sections: tuple[Path, str]) -> str:
    parts = [f"## {path}\n\n{text}" for path, text in sections]
    return "\n\n".join([DEFAULT_SYSTEM_PROMPT, INSTRUCTIONS_PREAMBLE, *parts]) + "\n"


def test_show_system_prints_the_prompt_a_run_would_send_from_here(tmp_path: Path, env: dict[str, str], repo: Path) -> None:
    """R-INST-6a, R-INST-6b: from the current directory, nearest file last, without a session or a database."""
    result = cli(["show", "--system"], env, repo / "app" / "web")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == expected(
        (tmp_path / "home" / "AGENTS.md", "Home rule."),
        (repo / "AGENTS.md", "Root rule."),
        (repo / "app" / "web" / "AGENTS.md", "Web rule."),
    )
    assert not (tmp_path / "home" / "sessions.db").exists()  # no database opened, none created


def test_show_system_follows_workdir_and_a_folder_outside_any_repository(tmp_path: Path, env: dict[str, str]) -> None:
    """Outside a repository only the working directory's own file counts (R-INST-1)."""
    (tmp_path / "loose" / "inner").mkdir(parents=True)
    (tmp_path / "loose" / "AGENTS.md").write_text("not mine", encoding="utf-8")
    (tmp_path / "loose" / "inner" / "AGENTS.md").write_text("inner", encoding="utf-8")
    result = cli(["--workdir", "loose/inner", "show", "--system"], env, tmp_path)
    assert result.stdout == expected((tmp_path / "loose" / "inner" / "AGENTS.md", "inner"))
    assert cli(["show", "--system"], env, tmp_path / "home").stdout == DEFAULT_SYSTEM_PROMPT + "\n"


def test_show_system_warns_on_standard_error_and_uses_the_rest(tmp_path: Path, env: dict[str, str], repo: Path) -> None:
    """R-INST-2a, R-INST-2b: a file not UTF-8, a folder named AGENTS.md and a dangling link: one line each."""
    (tmp_path / "home" / "AGENTS.md").write_bytes(b"caf\xe9\n")
    (repo / "app" / "AGENTS.md").mkdir()
    (repo / "app" / "web" / "AGENTS.md").unlink()
    (repo / "app" / "web" / "AGENTS.md").symlink_to(repo / "nowhere.md")
    result = cli(["show", "--system", "--lang", "en"], env, repo / "app" / "web")
    assert result.returncode == 0
    assert result.stdout == expected((repo / "AGENTS.md", "Root rule."))
    assert result.stderr.splitlines() == [
        f"harness9-ref: warning: AGENTS.md skipped: {tmp_path / 'home' / 'AGENTS.md'} is not valid UTF-8",
        f"harness9-ref: warning: AGENTS.md skipped: {repo / 'app' / 'AGENTS.md'} is not a regular file",
        f"harness9-ref: warning: AGENTS.md skipped: cannot read {repo / 'app' / 'web' / 'AGENTS.md'}"
        f" ({os.strerror(2)})",
    ]


def test_show_system_makes_control_characters_visible_unless_raw(tmp_path: Path, env: dict[str, str], repo: Path) -> None:
    """R-SAFE-2b: a file's escape sequence is shown, not obeyed; ``--raw`` writes it as it is."""
    (repo / "AGENTS.md").write_text("tab\there \x1b[2J", encoding="utf-8")
    shown = cli(["show", "--system"], env, repo).stdout
    assert "tab\there \ufffd[2J" in shown and "\x1b" not in shown
    assert "tab\there \x1b[2J" in cli(["show", "--system", "--raw"], env, repo).stdout


def test_show_system_with_a_session_resolves_it_first(tmp_path: Path, env: dict[str, str], repo: Path) -> None:
    """A known SESSION gives the same prompt (none is stored); an unknown one is an error, with
    nothing on standard output."""
    seed(tmp_path / "home" / "sessions.db", [("3f2a0000-0000-4000-8000-000000000001", 1_700_000_000, ["hi"])])
    plain = cli(["show", "--system"], env, repo).stdout
    assert cli(["show", "--system", "3f2a"], env, repo).stdout == plain
    unknown = cli(["show", "--system", "beef"], env, repo)
    assert unknown.stdout == ""
    assert "beef" in one_error(unknown)


def test_show_needs_a_session_without_system(env: dict[str, str], tmp_path: Path) -> None:
    assert one_error(cli(["show"], env, tmp_path), status=2) == "the following arguments are required: SESSION"


@pytest.fixture
def api() -> Iterator[StrictAPI]:
    server = StrictAPI(4000).start()
    yield server
    server.stop()


def test_run_sends_the_files_and_stores_none_of_them(tmp_path: Path, env: dict[str, str], repo: Path, api: StrictAPI) -> None:
    """R-INST-4a: the request's system message carries every file, and an edit made between two
    prompts of one session reaches the next request; the database holds none of it, summaries
    and checkpoints included (the small window makes the second prompt summarise)."""
    model = {**env, "OPENAI_API_KEY": "sk-test-not-a-secret", "OPENAI_BASE_URL": api.url}
    (repo / "AGENTS.md").write_text("ROOT-MARKER-ONE\n", encoding="utf-8")
    web = repo / "app" / "web"
    base = ["--provider", "openai", "--model", "gpt-4o-mini", "--context-window", "1500"]
    first = cli([*base, "run", "hello " * 200], model, web)
    assert first.returncode == 0, first.stderr
    session = session_of(first)
    (repo / "AGENTS.md").write_text("ROOT-MARKER-TWO\n", encoding="utf-8")
    for n in range(3):
        again = cli([*base, "--resume", session, "run", f"prompt {n} " + "more " * 150], model, web)
        assert again.returncode == 0, again.stderr
    assert "ROOT-MARKER-ONE" in api.systems[0] and "Web rule." in api.systems[0]
    assert all("ROOT-MARKER-TWO" in system and "ROOT-MARKER-ONE" not in system for system in api.systems[1:])
    assert api.summarizer_prompts, "the window was meant to make a summary"
    stored = b"".join(path.read_bytes() for path in (tmp_path / "home").iterdir() if path.name.startswith("sessions.db"))
    assert b"hello hello" in stored  # the file is the session's: the prompts are there
    for text in (b"ROOT-MARKER", b"Web rule.", b"Home rule.", INSTRUCTIONS_PREAMBLE.encode()[:40]):
        assert text not in stored


def test_run_warns_once_on_standard_error(env: dict[str, str], repo: Path) -> None:
    """R-INST-4b: ``run`` writes a warning line on standard error, in the language chosen."""
    (repo / "AGENTS.md").write_bytes(b"\xff\xfe")
    result = cli(["--provider", "offline", "--lang", "zh", "run", "hi"], env, repo)
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if "AGENTS.md" in line]
    assert warnings == [f"harness9-ref: 警告：已跳过 AGENTS.md：{repo / 'AGENTS.md'} 不是有效的 UTF-8 文本"]  # R-LANG-2
