"""Options, environment and defaults (harness9_ref/cli/_settings.py, _parser.py; SPEC R-CLI-2 … R-CLI-4, R-CLI-20 …
R-CLI-22, R-LANG-1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness9_ref.cli import (
    DEFAULT_MODEL,
    LOCAL_TIMEOUT,
    MAX_TIMEOUT,
    OFFLINE_NOTICE,
    CliError,
    UsageError,
    build_engine,
    build_provider,
    build_summarizer,
    choose_provider,
    locale_language,
    offline_notice,
    parse_args,
    provider_for_model,
    request_model_of,
    resolve_settings,
)
from harness9_ref.engine import RetryingSummarizer
from harness9_ref.memory.storage import MemorySession
from harness9_ref.offline import OfflineProvider
from harness9_ref.provider import DEFAULT_TIMEOUT, AnthropicProvider, OpenAIProvider
from harness9_ref.text import in_language
from harness9_ref.tools import Registry


def test_the_offline_notice() -> None:
    assert OFFLINE_NOTICE == "harness9-ref: no API key set ({key}); using the offline provider"
    assert offline_notice("ANTHROPIC_API_KEY") == (
        "harness9-ref: no API key set (ANTHROPIC_API_KEY); using the offline provider"
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
LLAMA = "http://127.0.0.1:8080/v1"  # llama.cpp's llama-server
PROXY = "http://127.0.0.1:9000"


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
        ("gpt-4o", None, ANTHROPIC, ("offline", True, "", None, "OPENAI_API_KEY")),
        ("gpt-4o", None, {"OPENAI_API_KEY": ""}, ("offline", True, "", None, "OPENAI_API_KEY")),
        ("claude-sonnet-4", None, ANTHROPIC, ("anthropic", False, "sk-a", None)),
        ("claude-sonnet-4", None, {**ANTHROPIC, "ANTHROPIC_BASE_URL": ""}, ("anthropic", False, "sk-a", None)),
        ("claude-sonnet-4", None, OPENAI, ("offline", True, "", None, "ANTHROPIC_API_KEY")),
        ("gpt-4o", "anthropic", ANTHROPIC, ("anthropic", False, "sk-a", None)),
        ("claude-sonnet-4", "openai", OPENAI, ("openai", False, "sk-o", None)),
        ("gpt-4o", "offline", {**OPENAI, **ANTHROPIC}, ("offline", False, "", None)),
        # R-CLI-21: another base URL needs no key; the key is named as missing, for the notice
        ("gpt-4o", None, {"OPENAI_BASE_URL": LLAMA}, ("openai", False, "", LLAMA, "OPENAI_API_KEY")),
        ("gpt-4o", "openai", {"OPENAI_BASE_URL": LLAMA}, ("openai", False, "", LLAMA, "OPENAI_API_KEY")),
        ("claude-x", None, {"ANTHROPIC_BASE_URL": PROXY}, ("anthropic", False, "", PROXY, "ANTHROPIC_API_KEY")),
        ("gpt-4o", None, {**OPENAI, "OPENAI_BASE_URL": LLAMA}, ("openai", False, "sk-o", LLAMA)),  # a key is sent
        # the official endpoint, however spelled, without a key: offline, as without a base URL (R-CLI-4)
        ("gpt-4o", None, {"OPENAI_BASE_URL": "HTTPS://api.openai.com/v1/"}, ("offline", True, "", None, "OPENAI_API_KEY")),
        ("claude-x", None, {"ANTHROPIC_BASE_URL": "https://api.anthropic.com"}, ("offline", True, "", None, "ANTHROPIC_API_KEY")),
        ("claude-x", None, {"OPENAI_BASE_URL": LLAMA}, ("offline", True, "", None, "ANTHROPIC_API_KEY")),  # the other's URL
    ],
)
def test_choose_provider(model: str, requested: str | None, env: dict[str, str], result: tuple[object, ...]) -> None:
    expected = result if len(result) == 5 else (*result, "")  # missing_key is "" unless it fell back
    assert tuple(choose_provider(model, requested, env)) == expected


@pytest.mark.parametrize(
    ("requested", "env", "message"),
    [
        ("anthropic", OPENAI, "--provider anthropic needs ANTHROPIC_API_KEY"),
        ("openai", {"OPENAI_API_KEY": ""}, "--provider openai needs OPENAI_API_KEY"),
        (
            None,
            {**OPENAI, "OPENAI_BASE_URL": "127.0.0.1:9/v1"},
            "openai: invalid base URL '127.0.0.1:9/v1': expected http:// or https:// and a host",
        ),
        (
            "anthropic",
            {**ANTHROPIC, "ANTHROPIC_BASE_URL": "https://"},
            "anthropic: invalid base URL 'https://': expected http:// or https:// and a host",
        ),
        (  # R-CLI-21: without a key the base URL now matters, so a typo is not answered offline
            None,
            {"OPENAI_BASE_URL": "127.0.0.1:8080/v1"},
            "openai: invalid base URL '127.0.0.1:8080/v1': expected http:// or https:// and a host",
        ),
        ("openai", {"OPENAI_BASE_URL": "https://api.openai.com/v1"}, "--provider openai needs OPENAI_API_KEY"),
    ],
)
def test_choose_provider_refuses(requested: str | None, env: dict[str, str], message: str) -> None:
    with pytest.raises(CliError) as exc:
        choose_provider("gpt-4o", requested, env)
    assert str(exc.value) == message


def test_defaults(tmp_path: Path) -> None:
    settings = resolve_settings({}, {}, str(tmp_path))
    assert settings.command == "tui" and settings.prompt is None
    assert settings.model == DEFAULT_MODEL == "openai/gpt-4o-mini"
    assert (settings.provider, settings.fell_back, settings.missing_key) == ("offline", True, "OPENAI_API_KEY")
    assert settings.db_path == Path.home() / ".harness9" / "sessions.db" and settings.db_source is None
    assert settings.context_window is None and settings.resume is None and not settings.continue_last
    assert (settings.yes, settings.lang, settings.ttl_days) == (False, "en", None)  # R-LANG-1: no locale is English
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
        (
            ["--context-window", "100000001"],
            "harness9-ref: error: argument --context-window: expected at most 100000000 tokens, got '100000001'\n",
        ),
        (["--resume", "abcd", "-c"], "harness9-ref: error: --resume and --continue cannot be used together\n"),
        (["--lang", "fr"], "harness9-ref: error: argument --lang: invalid choice: 'fr' (choose from "),
        (["prune"], "harness9-ref: error: the following arguments are required: --older-than\n"),
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


def test_the_daily_options_and_their_variables(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    settings = resolve_settings(parse_args(["-c", "--yes", "--lang", "en", "run", "x"]), {}, cwd)
    assert (settings.continue_last, settings.yes, settings.lang) == (True, True, "en")
    env = {"HARNESS9_YES": "1", "HARNESS9_LANG": "en", "HARNESS9_SESSION_TTL_DAYS": "30"}
    settings = resolve_settings({}, env, cwd)
    assert (settings.yes, settings.lang, settings.ttl_days) == (True, "en", 30)
    assert resolve_settings({"lang": "zh"}, env, cwd).lang == "zh"  # an option overrides the environment
    assert not resolve_settings({}, {"HARNESS9_YES": "yes"}, cwd).yes
    assert resolve_settings({"command": "sessions"}, {"HARNESS9_SESSION_TTL_DAYS": "x"}, cwd).ttl_days is None


@pytest.mark.parametrize(
    ("env", "lang"),
    [
        ({}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_TW"}, "zh"),
        ({"LANG": "zh"}, "zh"),
        ({"LANG": "zh_HK.Big5"}, "zh"),
        ({"LANG": "zh@variant"}, "zh"),
        ({"LANG": "zh.UTF-8"}, "zh"),
        ({"LANG": "C"}, "en"),
        ({"LANG": "POSIX"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "fr_FR"}, "en"),
        ({"LANG": "zhx_CN"}, "en"),  # the language part must be exactly zh
        ({"LANG": "ZH_CN"}, "en"),  # and lower case
        ({"LANG": "en_GB.zh"}, "en"),  # only the part before the first _ . @ counts
        ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),  # LC_ALL first
        ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
        ({"LC_ALL": "", "LANG": "zh_CN.UTF-8"}, "zh"),  # an empty variable counts as unset
        ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "C"}, "zh"),  # LC_MESSAGES before LANG
        ({"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "en"),  # LC_ALL before LC_MESSAGES
        ({"LC_MESSAGES": "", "LANG": "zh_TW"}, "zh"),
        ({"LC_CTYPE": "zh_CN.UTF-8"}, "en"),  # only the three variables count
    ],
)
def test_the_language_of_the_locale(env: dict[str, str], lang: str, tmp_path: Path) -> None:
    assert locale_language(env) == lang
    assert resolve_settings({"command": "sessions"}, env, str(tmp_path)).lang == lang


def test_the_option_and_the_variable_override_the_locale(tmp_path: Path) -> None:
    cwd, chinese = str(tmp_path), {"LC_ALL": "zh_CN.UTF-8"}
    assert resolve_settings({}, {**chinese, "HARNESS9_LANG": "en"}, cwd).lang == "en"
    assert resolve_settings({"lang": "en"}, chinese, cwd).lang == "en"
    assert resolve_settings({"lang": "zh"}, {"LANG": "C", "HARNESS9_LANG": "en"}, cwd).lang == "zh"  # option > variable
    assert resolve_settings({}, {"HARNESS9_LANG": "zh", "LC_ALL": "C"}, cwd).lang == "zh"  # variable > locale
    with pytest.raises(CliError) as raised:
        resolve_settings({}, {**chinese, "HARNESS9_LANG": "fr"}, cwd)
    assert str(raised.value) == "HARNESS9_LANG: expected zh or en, got 'fr'"
    assert in_language(raised.value, "zh") == "HARNESS9_LANG：应为 zh 或 en，实际为 'fr'"


def test_the_database_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    cwd = str(tmp_path / "cwd")
    assert resolve_settings({}, {"HARNESS9_HOME": "~/h9"}, cwd).db_path == tmp_path / "me" / "h9" / "sessions.db"
    settings = resolve_settings({"db": "~/x.db"}, {"HARNESS9_DB": "y.db"}, cwd)
    assert (settings.db_path, settings.db_source) == (tmp_path / "me" / "x.db", "--db")
    settings = resolve_settings({}, {"HARNESS9_DB": "y.db", "HARNESS9_HOME": "/elsewhere"}, cwd)
    assert (settings.db_path, settings.db_source) == (tmp_path / "cwd" / "y.db", "HARNESS9_DB")
    with pytest.raises(CliError, match=r"^--db: xyz:// URLs are not supported; give the path of an SQLite file or"):
        resolve_settings({"db": "xyz://u:pw@h/db"}, {}, cwd)
    settings = resolve_settings({}, {"HARNESS9_DB": "postgresql://u:pw@h/db", "HARNESS9_HOME": "~/h9"}, cwd)
    assert (settings.db_url, settings.db_source) == ("postgresql://u:pw@h/db", "HARNESS9_DB")
    assert settings.db_path == tmp_path / "me" / "h9" / "sessions.db"  # its folder holds tool-results


def test_sub_commands_need_no_key(tmp_path: Path) -> None:
    options = parse_args(["search", "two", "words", "--limit", "3", "--db", "x.db"])
    settings = resolve_settings(options, {"OPENAI_BASE_URL": "bogus"}, str(tmp_path))
    assert (settings.command, settings.query, settings.limit, settings.fell_back) == ("search", "two words", 3, False)
    assert parse_args(["prune", "--older-than", "7", "--dry-run"]) == {
        "command": "prune",
        "older_than": 7,
        "dry_run": True,
    }
    assert parse_args(["show", "abcd"]) == {"command": "show", "target": "abcd", "system": False}


@pytest.mark.parametrize(
    ("options", "env", "summary_model"),
    [
        ({}, {}, None),  # the main model summarises
        ({}, {"HARNESS9_SUMMARY_MODEL": ""}, None),  # an empty variable is unset (R-CLI-3)
        ({}, {"HARNESS9_SUMMARY_MODEL": "gpt-4o-mini"}, "gpt-4o-mini"),
        ({"summary_model": "openai/gpt-4.1-nano"}, {"HARNESS9_SUMMARY_MODEL": "gpt-4o-mini"}, "openai/gpt-4.1-nano"),
        ({"command": "sessions"}, {"HARNESS9_SUMMARY_MODEL": " bad"}, None),  # read for the agent only
    ],
)
def test_the_summary_model_option_wins_over_its_variable(
    options: dict[str, object], env: dict[str, str], summary_model: str | None, tmp_path: Path
) -> None:
    """R-CLI-20."""
    assert resolve_settings(options, env, str(tmp_path)).summary_model == summary_model


@pytest.mark.parametrize("name", ["", " ", "gpt 4o", "gpt-4o\n", "\tgpt", "gpt\u00a0x", "gpt\x1bx", "gpt\x7f", "gpt\x85"])
def test_a_summary_model_that_names_no_model_is_a_one_line_usage_error(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-CLI-20b: empty, white space or a control character; the option by argparse, the variable after."""
    with pytest.raises(SystemExit) as exc:
        parse_args(["--summary-model", name, "run", "x"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == f"harness9-ref: error: argument --summary-model: expected a model name, got {name!r}\n"
    if name:  # an empty variable is unset
        with pytest.raises(UsageError) as raised:
            resolve_settings({"command": "run", "prompt": "x"}, {"HARNESS9_SUMMARY_MODEL": name}, str(tmp_path))
        assert str(raised.value) == f"HARNESS9_SUMMARY_MODEL: expected a model name, got {name!r}"


def test_the_summarizer_is_the_same_provider_with_a_reply_limit(tmp_path: Path) -> None:
    """R-CLI-20a, R-FOLD-7: the same provider, base URL and key, for the main model unless a
    summary model is given, limited to an eighth of the window; the offline provider sends no model."""
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    plain = resolve_settings({"command": "run", "prompt": "x"}, env, str(tmp_path))
    provider = build_provider(plain)
    summarizer = build_summarizer(plain, provider, 2048)
    assert isinstance(summarizer, OpenAIProvider) and summarizer is not provider
    assert (summarizer.model, summarizer.base_url, summarizer.reply_limit) == (plain.model, "http://127.0.0.1:9/v1", 256)
    assert isinstance(provider, OpenAIProvider) and provider.reply_limit == 0
    chosen = resolve_settings({"command": "run", "prompt": "x", "summary_model": "gpt-4.1-nano"}, env, str(tmp_path))
    summarizer = build_summarizer(chosen, build_provider(chosen))
    assert isinstance(summarizer, OpenAIProvider)
    assert (summarizer.model, summarizer.base_url) == ("gpt-4.1-nano", "http://127.0.0.1:9/v1")
    offline = resolve_settings({"command": "run", "prompt": "x", "summary_model": "m"}, {}, str(tmp_path))
    offline_summarizer = build_summarizer(offline, build_provider(offline), 2000)
    assert isinstance(offline_summarizer, OfflineProvider) and offline_summarizer.reply_limit == 250


@pytest.mark.parametrize(
    ("env", "sent"),
    [
        ({"OPENAI_API_KEY": "k"}, "gpt-4o-mini"),  # the default model on OpenAI's endpoint
        ({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "https://api.openai.com/v1/"}, "gpt-4o-mini"),
        ({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "https://openrouter.ai/api/v1"}, "openai/gpt-4o-mini"),
        ({}, "openai/gpt-4o-mini"),  # offline: nothing is sent, the name stays as configured
    ],
)
def test_the_request_model_of_the_settings(env: dict[str, str], sent: str, tmp_path: Path) -> None:
    """R-PRV-27 for what the status bar and R-CLI-19's line name."""
    assert request_model_of(resolve_settings({"command": "run", "prompt": "x"}, env, str(tmp_path))) == sent


def test_a_provider_used_without_a_key_says_so_and_names_its_server(tmp_path: Path) -> None:
    """R-CLI-21b: the notice replaces the offline one, in the language of R-LANG-1; the key is empty."""
    env = {"OPENAI_BASE_URL": "http://user:secret@127.0.0.1:8080/v1"}
    settings = resolve_settings({"command": "run", "prompt": "x"}, env, str(tmp_path))
    assert (settings.provider, settings.api_key, settings.fell_back) == ("openai", "", False)
    assert settings.notice == (
        "harness9-ref: no API key set (OPENAI_API_KEY); sending requests to 127.0.0.1:8080 without one"
    )
    zh = resolve_settings({"command": "run", "prompt": "x", "lang": "zh"}, env, str(tmp_path))
    assert zh.notice == "harness9-ref: 未设置 API 密钥（OPENAI_API_KEY），向 127.0.0.1:8080 发送不带密钥的请求"
    keyed = resolve_settings({"command": "run", "prompt": "x"}, {**env, "OPENAI_API_KEY": "k"}, str(tmp_path))
    assert keyed.notice is None


@pytest.mark.parametrize(
    ("options", "env", "timeout"),
    [
        ({}, {"OPENAI_API_KEY": "k"}, DEFAULT_TIMEOUT),  # the official endpoint
        ({}, {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "https://api.openai.com/v1"}, DEFAULT_TIMEOUT),
        ({}, {"OPENAI_BASE_URL": LLAMA}, LOCAL_TIMEOUT),  # a CPU reads a long prompt before it answers
        ({}, {"ANTHROPIC_BASE_URL": PROXY}, DEFAULT_TIMEOUT),  # the other provider's base URL
        ({"model": "claude-x"}, {"ANTHROPIC_BASE_URL": PROXY}, LOCAL_TIMEOUT),
        ({}, {"OPENAI_BASE_URL": LLAMA, "HARNESS9_TIMEOUT": ""}, LOCAL_TIMEOUT),  # empty: unset (R-CLI-3)
        ({}, {"OPENAI_BASE_URL": LLAMA, "HARNESS9_TIMEOUT": "30"}, 30.0),
        ({"timeout": "1.5"}, {"HARNESS9_TIMEOUT": "30"}, 1.5),  # the option wins
        ({"timeout": "86400"}, {}, 86400.0),
        ({"timeout": ".25"}, {}, 0.25),
        ({"timeout": "7."}, {}, 7.0),
        ({"command": "sessions"}, {"HARNESS9_TIMEOUT": "x"}, DEFAULT_TIMEOUT),  # read for the agent only
    ],
)
def test_the_timeout_option_its_variable_and_its_defaults(
    options: dict[str, object], env: dict[str, str], timeout: float, tmp_path: Path
) -> None:
    """R-CLI-22."""
    assert resolve_settings({"command": "run", "prompt": "x", **options}, env, str(tmp_path)).timeout == timeout


@pytest.mark.parametrize(
    "text", ["0", "0.0", "-1", "+5", "1e3", "86400.01", "86401", "abc", " 5", "5 ", "inf", "nan", "1/2", "."]
)
def test_a_timeout_that_is_no_number_of_seconds_is_a_one_line_usage_error(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """R-CLI-22c: the option by argparse (English, R-LANG-4), the variable after, in both languages (R-LANG-3)."""
    with pytest.raises(SystemExit) as exc:
        parse_args(["--timeout", text, "run", "x"])
    assert exc.value.code == 2
    expected = f"expected a number of seconds in (0, {MAX_TIMEOUT}], got {text!r}"
    assert capsys.readouterr().err == f"harness9-ref: error: argument --timeout: {expected}\n"
    with pytest.raises(UsageError) as raised:
        resolve_settings({"command": "run", "prompt": "x"}, {"HARNESS9_TIMEOUT": text}, str(tmp_path))
    assert str(raised.value) == f"HARNESS9_TIMEOUT: {expected}"
    assert in_language(raised.value, "zh") == f"HARNESS9_TIMEOUT：应为 (0, 86400] 中的秒数，实际为 {text!r}"


def test_the_summarizer_gets_the_main_providers_timeout(tmp_path: Path) -> None:
    """R-CLI-22a: the main model's provider and the summarizer's, with or without a key."""
    env = {"OPENAI_BASE_URL": LLAMA}
    settings = resolve_settings({"command": "run", "prompt": "x", "summary_model": "small", "timeout": "900"}, env, str(tmp_path))
    provider = build_provider(settings)
    summarizer = build_summarizer(settings, provider)
    assert isinstance(provider, OpenAIProvider) and isinstance(summarizer, OpenAIProvider)
    assert (provider.timeout, summarizer.timeout, summarizer.model) == (900.0, 900.0, "small")
    official = resolve_settings({"command": "run", "prompt": "x", "model": "claude-x"}, {"ANTHROPIC_API_KEY": "k"}, str(tmp_path))
    anthropic = build_provider(official)
    assert isinstance(anthropic, AnthropicProvider) and anthropic.timeout == DEFAULT_TIMEOUT


@pytest.mark.parametrize(("options", "wrapped"), [({}, True), ({"max_retries": "0"}, False)])
def test_the_builder_wraps_the_summarizer_for_retries(tmp_path: Path, options: dict[str, str], wrapped: bool) -> None:
    """R-ENG-22a, R-ENG-27b: with retries the wiring wraps the summarizer and gives the engine the same wrapper."""
    settings = resolve_settings({"command": "run", "prompt": "x", **options}, {}, str(tmp_path))
    engine = build_engine(settings, build_provider(settings), MemorySession(), Registry(tmp_path))
    summarizer = engine._compactor.provider  # type: ignore[union-attr]
    assert isinstance(summarizer, RetryingSummarizer) is wrapped
    assert engine._summary_retries is (summarizer if wrapped else None)
