"""A tool result as a person running the real command meets it (SPEC R-TUI-40, R-CLI-40, R-CLI-41).

``run`` (offline provider, ``--yes``) runs real commands: one that outlives a ``--bash-timeout``
of one second (or ``HARNESS9_BASH_TIMEOUT``), whose tool line must say so, and one that fails
after printing several lines, which ``--full`` writes whole, made safe (R-SAFE-2) unless
``--raw``; ``show --full`` writes the stored result the same way.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness9_ref.cli import resolve_settings
from harness9_ref.cli._parser import parse_args
from tests.cli.helpers import cli, one_error, session_of

SLOW = "run sleep 30; echo done"
FAILING = "run printf 'one\\ntwo\\n\\033[2Jthree\\n'; exit 3"
TIMED_OUT_LINE = "\u2190 bash: (no output) [timed out after 1 s]"
FAILED_LINE = "\u2190 bash: one (3 lines, 18 B) [exit status 3]"
WHOLE = ["  one", "  two", "  \ufffd[2Jthree", "", "  [exit status 3]"]  # the output's last line feed, then the note


def test_a_command_past_the_bash_timeout_is_ended_and_its_line_says_so(env: dict[str, str], work: Path) -> None:
    started = time.monotonic()
    result = cli(["--provider", "offline", "--yes", "--bash-timeout", "1", "run", SLOW], env, work)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 20  # ended after a second and the grace, not after 30
    assert TIMED_OUT_LINE in result.stderr.splitlines()


def test_the_variable_sets_the_bash_timeout_and_the_option_wins(env: dict[str, str], work: Path) -> None:
    by_variable = cli(["--provider", "offline", "--yes", "run", SLOW], env, work, HARNESS9_BASH_TIMEOUT="1")
    assert TIMED_OUT_LINE in by_variable.stderr.splitlines()
    both = cli(["--provider", "offline", "--yes", "--bash-timeout", "1", "run", SLOW], env, work, HARNESS9_BASH_TIMEOUT="2")
    assert TIMED_OUT_LINE in both.stderr.splitlines()


def test_the_bash_timeout_defaults_to_a_minute_and_an_empty_variable_is_unset(tmp_path: Path) -> None:
    assert resolve_settings(parse_args(["run", "x"]), {}, str(tmp_path)).bash_timeout == 60
    assert resolve_settings(parse_args(["run", "x"]), {"HARNESS9_BASH_TIMEOUT": ""}, str(tmp_path)).bash_timeout == 60
    settings = resolve_settings(parse_args(["run", "x"]), {"HARNESS9_BASH_TIMEOUT": "300"}, str(tmp_path))
    assert settings.bash_timeout == 300


@pytest.mark.parametrize("value", ["0", "-1", "1e3", "86401", " 5", "abc"])
def test_a_bash_timeout_out_of_bounds_is_one_usage_line(env: dict[str, str], work: Path, value: str) -> None:
    option = cli(["--provider", "offline", f"--bash-timeout={value}", "run", "hi"], env, work)
    expected = f"argument --bash-timeout: expected a number of seconds in (0, 86400], got {value!r}"
    assert one_error(option, 2) == expected
    variable = cli(["--provider", "offline", "run", "hi"], env, work, HARNESS9_BASH_TIMEOUT=value)
    assert one_error(variable, 2) == f"HARNESS9_BASH_TIMEOUT: expected a number of seconds in (0, 86400], got {value!r}"


def test_run_shows_a_failed_commands_status_and_full_shows_it_whole(env: dict[str, str], work: Path) -> None:
    short = cli(["--provider", "offline", "--yes", "run", FAILING], env, work)
    lines = short.stderr.splitlines()
    assert FAILED_LINE in lines
    assert not set(WHOLE[:3]) & set(lines)  # the one-line form stays without --full
    full = cli(["--provider", "offline", "--yes", "run", "--full", FAILING], env, work)
    lines = full.stderr.splitlines()
    at = lines.index(FAILED_LINE)
    assert lines[at + 1 : at + 6] == WHOLE
    raw = cli(["--provider", "offline", "--yes", "--raw", "run", "--full", FAILING], env, work)
    assert "  \x1b[2Jthree" in raw.stderr.splitlines()


def test_show_full_writes_a_stored_result_whole(env: dict[str, str], work: Path) -> None:
    session = session_of(cli(["--provider", "offline", "--yes", "run", FAILING], env, work))
    plain = cli(["show", session], env, work).stdout.splitlines()
    assert FAILED_LINE in plain
    assert not set(WHOLE[:3]) & set(plain)
    full = cli(["show", "--full", session], env, work).stdout.splitlines()
    at = full.index(FAILED_LINE)
    assert full[at + 1 : at + 6] == WHOLE


def test_full_goes_after_the_sub_command_only(env: dict[str, str], work: Path) -> None:
    result = cli(["--full", "run", "hi"], env, work)
    assert one_error(result, 2) == "unrecognized arguments: --full"
