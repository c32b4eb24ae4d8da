"""Options, environment and defaults (harness9_ref/cli/_settings.py, _parser.py; SPEC R-CLI-2 … R-CLI-4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness9_ref.cli import (
    DEFAULT_MODEL,
    OFFLINE_NOTICE,
    choose_provider,
    parse_args,
    provider_for_model,
    resolve_settings,
)


def test_the_offline_notice() -> None:
    assert OFFLINE_NOTICE == (
        "harness9-ref: no API key set (OPENAI_API_KEY or ANTHROPIC_API_KEY); using the offline provider"
    )


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("openai/gpt-4o-mini", "openai"),
        ("gpt-4o", "openai"),
        ("claude-sonnet-4-20250514", "anthropic"),
        ("Claude-3-Haiku", "anthropic"),
        ("anthropic/claude-sonnet-4", "openai"),  # routed: an OpenAI-compatible router
        ("claude/sonnet", "openai"),
        ("deepseek-chat", "openai"),
        ("", "openai"),
    ],
)
def test_provider_for_model(model: str, provider: str) -> None:
    assert provider_for_model(model) == provider


OPENAI = {"OPENAI_API_KEY": "sk-o"}
ANTHROPIC = {"ANTHROPIC_API_KEY": "sk-a"}


@pytest.mark.parametrize(
    ("model", "requested", "env", "result"),
    [
        ("gpt-4o", None, OPENAI, ("openai", False, "sk-o", None)),
        (
            "gpt-4o",
            None,
            {**OPENAI, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
            ("openai", False, "sk-o", "http://127.0.0.1:9/v1"),
        ),
        ("gpt-4o", None, ANTHROPIC, ("offline", True, "", None)),
        ("gpt-4o", None, {"OPENAI_API_KEY": ""}, ("offline", True, "", None)),
        ("claude-sonnet-4", None, ANTHROPIC, ("anthropic", False, "sk-a", None)),
        ("claude-sonnet-4", None, {**ANTHROPIC, "ANTHROPIC_BASE_URL": ""}, ("anthropic", False, "sk-a", None)),
        ("claude-sonnet-4", None, OPENAI, ("offline", True, "", None)),
        ("gpt-4o", "anthropic", ANTHROPIC, ("anthropic", False, "sk-a", None)),
        ("claude-sonnet-4", "openai", OPENAI, ("openai", False, "sk-o", None)),
        ("gpt-4o", "offline", {**OPENAI, **ANTHROPIC}, ("offline", False, "", None)),
        ("gpt-4o", "anthropic", OPENAI, ("offline", True, "", None)),
    ],
)
def test_choose_provider(model: str, requested: str | None, env: dict[str, str], result: tuple[object, ...]) -> None:
    assert choose_provider(model, requested, env) == result


def test_defaults(tmp_path: Path) -> None:
    settings = resolve_settings({}, {}, str(tmp_path))
    assert settings.command == "tui" and settings.prompt is None
    assert settings.model == DEFAULT_MODEL == "openai/gpt-4o-mini"
    assert (settings.provider, settings.fell_back) == ("offline", True)
    assert settings.db_path is None and settings.context_window is None and settings.resume is None
    assert settings.workdir == str(tmp_path)
    assert settings.max_turns == 50


def test_an_option_overrides_the_environment_which_overrides_the_default(tmp_path: Path) -> None:
    assert resolve_settings({}, {"LLM_MODEL": "gpt-4o"}, str(tmp_path)).model == "gpt-4o"
    assert resolve_settings({}, {"LLM_MODEL": ""}, str(tmp_path)).model == DEFAULT_MODEL
    assert resolve_settings({"model": "o3"}, {"LLM_MODEL": "gpt-4o"}, str(tmp_path)).model == "o3"


def test_parsed_options_resolve(tmp_path: Path) -> None:
    argv = [
        "--model", "claude-sonnet-4", "--db", str(tmp_path / "x.db"), "--context-window", "2000",
        "--resume", "abc", "--workdir", "sub", "--max-turns", "3", "run", "hello",
    ]  # fmt: skip
    settings = resolve_settings(parse_args(argv), {"ANTHROPIC_API_KEY": "k"}, str(tmp_path))
    assert settings.command == "run" and settings.prompt == "hello"
    assert (settings.model, settings.provider, settings.api_key) == ("claude-sonnet-4", "anthropic", "k")
    assert settings.db_path == tmp_path / "x.db"
    assert (settings.context_window, settings.resume, settings.max_turns) == (2000, "abc", 3)
    assert settings.workdir == str(tmp_path / "sub")


def test_options_may_follow_run() -> None:
    assert parse_args(["run", "hi", "--provider", "offline"]) == {
        "command": "run",
        "prompt": "hi",
        "provider": "offline",
    }
    assert parse_args(["--provider", "offline", "run", "hi"]) == {
        "command": "run",
        "prompt": "hi",
        "provider": "offline",
    }
    assert parse_args([]) == {}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bogus"], "harness9-ref: error: unrecognized arguments: --bogus\n"),
        (
            ["--provider", "local"],
            "harness9-ref: error: argument --provider: invalid choice: 'local' (choose from ",  # wording varies
        ),
        (
            ["--context-window", "0"],
            "harness9-ref: error: argument --context-window: expected a positive integer, got '0'\n",
        ),
        (["--max-turns", "x"], "harness9-ref: error: argument --max-turns: expected a positive integer, got 'x'\n"),
        (["run"], "harness9-ref: error: the following arguments are required: PROMPT\n"),
        (["run", "  "], "harness9-ref: error: PROMPT is empty\n"),
        (
            ["hello"],
            "harness9-ref: error: unknown command 'hello'; "
            "to send a prompt without the UI use: harness9-ref run PROMPT\n",
        ),
    ],
)
def test_bad_options_are_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(message) and captured.err.count("\n") == 1 and captured.err.endswith("\n")
