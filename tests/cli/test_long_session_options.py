"""The compaction trigger and exact counting on the command line (harness9_ref/cli/_settings.py,
_parser.py, _wiring.py; SPEC R-CLI-15).

The parsing rules as a table, then the real command: a bad value is one line with exit status 2
whether it comes from ``--compact-at`` or HARNESS9_COMPACT_AT, the option wins over the variable,
and ``--count-tokens`` needs the Anthropic provider.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from harness9_ref.cli import (
    ENV_COMPACT_AT,
    UsageError,
    parse_args,
    parse_compact_at,
    resolve_settings,
)
from harness9_ref.engine import DEFAULT_COMPACT_AT
from tests.cli.helpers import cli, session_of


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.7", Fraction(7, 10)),
        ("1", Fraction(1)),
        ("1.0", Fraction(1)),
        ("1.", Fraction(1)),
        (".5", Fraction(1, 2)),
        ("0.8", Fraction(4, 5)),
        ("0.333", Fraction(333, 1000)),  # exactly, not a binary float
        ("0001.000", Fraction(1)),
        ("off", None),
    ],
)
def test_compact_at_values(text: str, value: Fraction | None) -> None:
    assert parse_compact_at(text) == value


@pytest.mark.parametrize(
    "text",
    ["", "0", "0.0", "-0.5", "1.01", "2", "nan", "inf", "1/2", "7e-1", " 0.7", "0.7 ", "+0.5", "OFF", "0,7", "١", "."],
)
def test_compact_at_refuses(text: str) -> None:
    with pytest.raises(ValueError, match=r"^expected a number in \(0, 1\] or off, got ") as exc:
        parse_compact_at(text)
    assert str(exc.value) == f"expected a number in (0, 1] or off, got {text!r}"


def test_the_default_is_r_cmp_4s_80_percent() -> None:
    assert Fraction(4, 5) == DEFAULT_COMPACT_AT


def test_the_option_wins_over_the_variable(tmp_path: Path) -> None:
    env = {ENV_COMPACT_AT: "0.5"}
    assert resolve_settings(parse_args(["--provider", "offline"]), env, str(tmp_path)).compact_at == Fraction(1, 2)
    given = parse_args(["--provider", "offline", "--compact-at", "off"])
    assert resolve_settings(given, env, str(tmp_path)).compact_at is None
    given = parse_args(["--provider", "offline", "--compact-at", "0.9"])
    assert resolve_settings(given, {ENV_COMPACT_AT: "bad"}, str(tmp_path)).compact_at == Fraction(9, 10)
    assert resolve_settings(parse_args(["--provider", "offline"]), {}, str(tmp_path)).compact_at == DEFAULT_COMPACT_AT
    empty = {ENV_COMPACT_AT: ""}  # R-CLI-3: an empty variable counts as unset
    assert resolve_settings(parse_args(["--provider", "offline"]), empty, str(tmp_path)).compact_at == DEFAULT_COMPACT_AT


def test_a_bad_variable_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as exc:
        resolve_settings(parse_args(["--provider", "offline"]), {ENV_COMPACT_AT: "1.5"}, str(tmp_path))
    assert str(exc.value) == "HARNESS9_COMPACT_AT: expected a number in (0, 1] or off, got '1.5'"


def test_the_variable_is_not_read_by_the_session_commands(tmp_path: Path) -> None:
    settings = resolve_settings(parse_args(["sessions"]), {ENV_COMPACT_AT: "bad"}, str(tmp_path))
    assert settings.command == "sessions"


def test_count_tokens_needs_anthropic(tmp_path: Path) -> None:
    keys = {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-secret"}
    given = parse_args(["--provider", "anthropic", "--model", "claude-sonnet-4", "--count-tokens"])
    assert resolve_settings(given, keys, str(tmp_path)).count_tokens
    assert not resolve_settings(parse_args(["--provider", "anthropic"]), keys, str(tmp_path)).count_tokens
    for argv in (["--provider", "offline"], ["--provider", "openai"], ["--model", "claude-sonnet-4"]):
        # the last: no key, so the default provider falls back to the offline one (R-CLI-4)
        with pytest.raises(UsageError) as exc:
            resolve_settings(parse_args([*argv, "--count-tokens"]), {"OPENAI_API_KEY": "sk-test"}, str(tmp_path))
        provider = argv[1] if argv[0] == "--provider" else "offline"
        assert str(exc.value) == f"--count-tokens needs the anthropic provider, not {provider}"


# The real command.


@pytest.mark.parametrize(
    ("args", "extra", "line"),
    [
        (
            ["--compact-at", "0"],
            {},
            "harness9-ref: error: argument --compact-at: expected a number in (0, 1] or off, got '0'\n",
        ),
        (
            ["--compact-at", "inf"],
            {},
            "harness9-ref: error: argument --compact-at: expected a number in (0, 1] or off, got 'inf'\n",
        ),
        (
            ["--compact-at", ""],
            {},
            "harness9-ref: error: argument --compact-at: expected a number in (0, 1] or off, got ''\n",
        ),
        (
            [],
            {ENV_COMPACT_AT: "-1"},
            "harness9-ref: error: HARNESS9_COMPACT_AT: expected a number in (0, 1] or off, got '-1'\n",
        ),
        (
            [],
            {ENV_COMPACT_AT: "nan"},
            "harness9-ref: error: HARNESS9_COMPACT_AT: expected a number in (0, 1] or off, got 'nan'\n",
        ),
        (["--count-tokens"], {}, "harness9-ref: error: --count-tokens needs the anthropic provider, not offline\n"),
    ],
)
def test_bad_values_exit_2_with_one_line(
    env: dict[str, str], tmp_path: Path, args: list[str], extra: dict[str, str], line: str
) -> None:
    result = cli(["--provider", "offline", *args, "run", "hello"], {**env, **extra}, tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", line)


def test_the_help_names_the_option_and_the_variable(env: dict[str, str], tmp_path: Path) -> None:
    result = cli(["--help"], env, tmp_path)
    assert "--compact-at F" in result.stdout and "--count-tokens" in result.stdout
    assert "HARNESS9_COMPACT_AT" in result.stdout


def _notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("\u26a1 ")]


def test_off_compacts_nothing_before_a_call(env: dict[str, str], tmp_path: Path) -> None:
    """With the default trigger the fifth prompt in a 2,000-token window compacts; with ``off``
    (by option or variable) none does, the offline provider accepting any size."""
    args = ["--provider", "offline", "--context-window", "2000"]
    runs: dict[str, list[str]] = {}
    for name, extra_args, extra_env in (
        ("default", [], {}),
        ("option", ["--compact-at", "off"], {ENV_COMPACT_AT: "0.5"}),
        ("variable", [], {ENV_COMPACT_AT: "off"}),
    ):
        sid = session_of(cli([*args, *extra_args, "run", "one"], {**env, **extra_env}, tmp_path))
        notices: list[str] = []
        for prompt in ("two", "three", "four", "five"):
            result = cli([*args, *extra_args, "--resume", sid, "run", prompt], {**env, **extra_env}, tmp_path)
            assert result.returncode == 0, result.stderr
            notices += _notices(result.stderr)
        runs[name] = notices
    assert runs["default"] != []
    assert runs["option"] == [] and runs["variable"] == []


def test_a_lower_trigger_compacts_sooner(env: dict[str, str], tmp_path: Path) -> None:
    args = ["--provider", "offline", "--context-window", "2000"]
    first: dict[str, int] = {}
    for value in ("0.8", "0.3"):
        sid = session_of(cli([*args, "--compact-at", value, "run", "one"], env, tmp_path))
        for n, prompt in enumerate(("two", "three", "four", "five"), start=2):
            result = cli([*args, "--compact-at", value, "--resume", sid, "run", prompt], env, tmp_path)
            if _notices(result.stderr):
                first[value] = n
                break
    assert first["0.3"] < first["0.8"]
