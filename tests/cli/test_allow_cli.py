"""``harness9-ref allow`` and the allow rules in ``run`` mode, the real command in a subprocess
(SPEC R-APPR-7, R-APPR-9, R-APPR-10).

The home folder is a private ``HARNESS9_HOME`` under the test's folder; rules are put there by
``AllowRules`` itself, as the terminal UI keeps them, and read back from the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness9_ref.cli import ALLOW_FILE_UNUSABLE, NOT_RUN_LINE
from harness9_ref.text import STRINGS
from harness9_ref.tools import AllowRules, rules_directory
from tests.cli.helpers import cli, one_error

OFFLINE = ["--provider", "offline"]
EN = STRINGS["en"]


@pytest.fixture
def allow_file(tmp_path: Path) -> Path:
    return tmp_path / "home" / "allow.json"


def keep(allow_file: Path, directory: Path, *rules: list[str]) -> None:
    for rule in rules:
        AllowRules(allow_file).add(rules_directory(directory), rule)


def test_list_without_a_file_lists_nothing_and_creates_nothing(env: dict[str, str], work: Path, tmp_path: Path) -> None:
    result = cli(["--lang", "en", "allow", "--list"], env, work)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.splitlines() == [EN["allow_none"].format(workdir=rules_directory(work))]
    result = cli(["allow", "--list", "--all", "--lang", "en"], env, work)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", EN["allow_none_all"] + "\n")
    assert not (tmp_path / "home").exists()


def test_list_shows_this_directorys_rules_and_all_shows_every_directory(
    env: dict[str, str], work: Path, tmp_path: Path, allow_file: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    keep(allow_file, work, ["git", "status"], ["git", "commit", "-m", "fix it"], ["npm", "test"])
    keep(allow_file, other, ["ls"])
    result = cli(["allow", "--list"], env, work)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.splitlines() == ["git commit -m 'fix it'", "git status", "npm test"]  # sorted by words
    assert cli(["allow", "--list", "--workdir", str(other)], env, work).stdout == "ls\n"
    listed = cli(["allow", "--list", "--all"], env, work).stdout.splitlines()
    by_directory = sorted([(rules_directory(work), ["git commit -m 'fix it'", "git status", "npm test"]),
                           (rules_directory(other), ["ls"])])  # fmt: skip
    assert listed == [line for where, rules in by_directory for line in (where, *("  " + r for r in rules))]


def test_remove_takes_the_rule_as_words_or_as_one_text(env: dict[str, str], work: Path, allow_file: Path) -> None:
    keep(allow_file, work, ["git", "status"], ["git", "commit", "-m", "fix it"], ["git", "diff", "*"])
    result = cli(["--lang", "en", "allow", "--remove", "git", "status"], env, work)
    assert result.returncode == 0
    workdir = rules_directory(work)
    assert result.stdout == EN["allow_removed"].format(rule="git status", workdir=workdir) + "\n"
    assert cli(["allow", "--remove", "git commit -m 'fix it'"], env, work).returncode == 0  # a --list line as is
    assert cli(["allow", "--list"], env, work).stdout == "git diff *\n"  # R-APPR-13: the wildcard as a bare *
    assert cli(["allow", "--remove", "git diff '*'"], env, work).returncode == 1  # a word *: no such rule
    assert cli(["allow", "--remove", "git", "diff", "*"], env, work).returncode == 0
    document = json.loads(allow_file.read_text(encoding="utf-8"))
    assert document == {"format": "harness9-allow", "version": 2, "directories": {}}


def test_an_unknown_rule_is_one_line_and_changes_nothing(env: dict[str, str], work: Path, allow_file: Path) -> None:
    keep(allow_file, work, ["git", "status"])
    before = allow_file.read_bytes()
    message = one_error(cli(["allow", "--remove", "git", "statu"], env, work))
    assert message == f"allow --remove: no rule git statu for {rules_directory(work)}"
    assert one_error(cli(["allow", "--remove", "git status && x"], env, work)).startswith("allow --remove: no rule ")
    assert allow_file.read_bytes() == before


def test_remove_without_a_file_creates_nothing(env: dict[str, str], work: Path, tmp_path: Path) -> None:
    one_error(cli(["allow", "--remove", "git"], env, work))
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    "args",
    [["allow"], ["allow", "--list", "--remove", "x"], ["allow", "--all"], ["allow", "--remove", "x", "--all"]],
)
def test_the_action_is_exactly_one_of_list_and_remove(env: dict[str, str], work: Path, args: list[str]) -> None:
    one_error(cli(args, env, work), status=2)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not json", "not JSON: "),
        (b'{"format": "something-else", "version": 1, "directories": {}}', 'no "format": "harness9-allow"'),
        (b'{"format": "harness9-allow", "version": 3, "directories": {}}', "version 3, not 2"),
        (b'{"format": "harness9-allow", "version": 1, "directories": {"/x": ["git"]}}', "the rules of /x are not lists of words"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_an_unusable_file_is_an_error_and_left_as_it_is(
    env: dict[str, str], work: Path, allow_file: Path, content: bytes, reason: str
) -> None:
    allow_file.parent.mkdir()
    allow_file.write_bytes(content)
    for args in (["allow", "--list"], ["allow", "--remove", "git"]):
        message = one_error(cli(args, env, work))
        assert message.startswith(f"{allow_file}: not a usable allow-rules file ({reason}")
        assert message.endswith("); it is left as it is and its rules are not used")
        assert allow_file.read_bytes() == content


def test_run_mode_runs_a_covered_command_without_yes(env: dict[str, str], work: Path, allow_file: Path) -> None:
    keep(allow_file, work, ["echo", "hello", "*"])
    result = cli([*OFFLINE, "run", "run echo hello world"], env, work)
    assert result.returncode == 0
    assert "\u2190 bash: hello world" in result.stderr.splitlines() and "not run" not in result.stderr
    refused = cli([*OFFLINE, "run", "run echo hello > made.txt"], env, work)  # a redirection: never covered
    assert NOT_RUN_LINE.format(command="echo hello > made.txt") in refused.stderr.splitlines()
    assert not (work / "made.txt").exists()


def test_run_mode_rules_are_of_their_directory_only(env: dict[str, str], work: Path, allow_file: Path) -> None:
    sub = work / "sub"
    sub.mkdir()
    keep(allow_file, work, ["echo"])
    result = cli([*OFFLINE, "--workdir", str(sub), "run", "run echo hi"], env, work)
    assert NOT_RUN_LINE.format(command="echo hi") in result.stderr.splitlines()


def test_run_mode_follows_a_linked_working_directory(
    env: dict[str, str], work: Path, tmp_path: Path, allow_file: Path
) -> None:
    link = tmp_path / "link"
    os.symlink(work, link)
    keep(allow_file, link, ["echo", "*"])  # kept for the resolved directory
    assert json.loads(allow_file.read_text(encoding="utf-8"))["directories"] == {str(work.resolve()): [["echo", "*"]]}
    result = cli([*OFFLINE, "run", "run echo hi"], env, work)
    assert "\u2190 bash: hi" in result.stderr.splitlines()


def test_run_mode_with_an_unusable_file_warns_once_and_asks(env: dict[str, str], work: Path, allow_file: Path) -> None:
    allow_file.parent.mkdir()
    allow_file.write_text("[]", encoding="utf-8")
    result = cli([*OFFLINE, "--max-turns", "3", "run", "run echo hi"], env, work)
    unusable = ALLOW_FILE_UNUSABLE.format(path=allow_file, reason='no "format": "harness9-allow"')
    assert result.stderr.splitlines().count(f"harness9-ref: warning: {unusable}") == 1
    assert NOT_RUN_LINE.format(command="echo hi") in result.stderr.splitlines()
    assert allow_file.read_text(encoding="utf-8") == "[]"
