"""The allow file and the registry's use of it, on real files and real commands
(harness9_ref/tools/_rules.py; SPEC R-APPR-7, R-APPR-9, R-APPR-13).

The splitting and matching themselves are the conformance cases' (``approval_rule``); here is
what only a file system shows: the file written whole through a rename, its modes, a foreign
or broken file left alone, and a registry that reads the rules before each command.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from harness9_ref.cli import ALLOW_FILE_UNUSABLE
from harness9_ref.tools import (
    DECLINED,
    RULE_NOT_KEPT,
    AllowFileError,
    AllowRule,
    AllowRules,
    Answer,
    Approve,
    FileChange,
    Registry,
    rules_directory,
)


def bash(command: str) -> str:
    return json.dumps({"command": command})


def test_a_missing_file_holds_no_rules_and_reading_creates_nothing(tmp_path: Path) -> None:
    rules = AllowRules(tmp_path / "home" / "allow.json")
    assert rules.load() == {} and rules.rules_for("/x") == []
    assert rules.remove("/x", ["git"]) is False
    assert not (tmp_path / "home").exists()


def test_adding_writes_the_whole_file_sorted_with_private_modes(tmp_path: Path) -> None:
    path = tmp_path / "home" / "allow.json"
    rules = AllowRules(path)
    rules.add("/b", ["npm", "test"])
    rules.add("/a", ["git", "status"])
    rules.add("/a", ["git"])
    rules.add("/a", ["git"])  # kept once
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "format": "harness9-allow",
        "version": 2,
        "directories": {"/a": [["git"], ["git", "status"]], "/b": [["npm", "test"]]},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert rules.remove("/b", ["npm", "test"])
    assert json.loads(path.read_text(encoding="utf-8"))["directories"] == {"/a": [["git"], ["git", "status"]]}
    assert sorted(os.listdir(path.parent)) == ["allow.json"]  # no temporary file left


def test_a_change_replaces_the_file_rather_than_writing_into_it(tmp_path: Path) -> None:
    path = tmp_path / "allow.json"
    rules = AllowRules(path)
    rules.add("/a", ["git"])
    before = path.stat().st_ino
    held = path.open("rb")  # a reader that opened the old file keeps reading all of it
    rules.add("/a", ["ls"])
    assert path.stat().st_ino != before
    assert json.loads(held.read())["directories"] == {"/a": [["git"]]}
    held.close()


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "allow.json"
    rules = AllowRules(path)
    rules.add("/a", ["git"])
    before = path.read_bytes()
    with pytest.raises(AllowFileError, match="cannot be written"):
        rules.add("/a", ["echo", "\ud800"])  # no UTF-8 holds a lone surrogate
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["allow.json"]


def test_a_linked_file_stays_linked(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "allow.json"
    target.parent.mkdir()
    link = tmp_path / "allow.json"
    os.symlink(target, link)
    AllowRules(link).add("/a", ["git"])
    assert link.is_symlink() and json.loads(target.read_text(encoding="utf-8"))["directories"] == {"/a": [["git"]]}


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b"[]",
        b'{"format": "harness9-allow", "version": 1}',
        b'{"format": "harness9-allow", "version": 3, "directories": {}}',
        b'{"format": "harness9-allow", "version": true, "directories": {}}',
        b'{"format": "harness9-allow", "version": 1, "directories": {}, "more": 1}',
        b'{"format": "harness9-allow", "version": 1, "directories": {"/a": [[]]}}',
        b'{"format": "harness9-allow", "version": 1, "directories": {"/a": [[1]]}}',
        b'{"format": "harness9-allow", "version": 1, "version": 1, "directories": {}}',
        b"\xc3\x28",
    ],
)
def test_an_unusable_file_is_refused_and_never_written(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "allow.json"
    path.write_bytes(content)
    rules = AllowRules(path)
    with pytest.raises(AllowFileError) as raised:
        rules.load()
    assert str(raised.value).startswith(f"{path}: not a usable allow-rules file (")
    assert "\n" not in str(raised.value)
    for change in (lambda: rules.add("/a", ["git"]), lambda: rules.remove("/a", ["git"])):
        with pytest.raises(AllowFileError):
            change()
    assert path.read_bytes() == content


def test_a_folder_in_the_files_place_is_unusable(tmp_path: Path) -> None:
    (tmp_path / "allow.json").mkdir()
    with pytest.raises(AllowFileError, match="not a usable allow-rules file"):
        AllowRules(tmp_path / "allow.json").load()


def answering(*answers: Answer) -> tuple[list[str | FileChange], Approve]:
    asked: list[str | FileChange] = []
    queue = list(answers)

    def approve(request: str | FileChange) -> Answer:
        asked.append(request)
        return queue.pop(0) if queue else "no"

    return asked, approve


def test_the_registry_reads_the_rules_before_each_command(tmp_path: Path) -> None:
    path = tmp_path / "home" / "allow.json"
    work = tmp_path / "work"
    work.mkdir()
    asked, approve = answering()
    AllowRules(path).add(rules_directory(work), ["echo", "*"])
    with Registry(work, approve=approve, rules=AllowRules(path)) as registry:
        assert registry.execute("bash", bash("echo one")) == "one\n"
        AllowRules(path).remove(rules_directory(work), ["echo", "*"])  # as allow --remove does meanwhile
        assert registry.execute("bash", bash("echo two")) == DECLINED
    assert asked == ["echo two"]


def test_a_kept_rule_covers_later_commands_and_survives_the_registry(tmp_path: Path) -> None:
    path = tmp_path / "allow.json"
    asked, approve = answering(AllowRule(["echo", "hi", "*"]))
    with Registry(tmp_path, approve=approve, rules=AllowRules(path)) as registry:
        assert registry.execute("bash", bash("echo hi there")) == "hi there\n"
        registry.reset_approval()  # /new: the rule is no session's "always"
        assert registry.execute("bash", bash("echo hi again")) == "hi again\n"
    with Registry(tmp_path, approve=approve, rules=AllowRules(path)) as registry:
        assert registry.execute("bash", bash("echo hi tomorrow")) == "hi tomorrow\n"
    assert asked == ["echo hi there"]


def test_with_an_unusable_file_the_choice_runs_and_two_warnings_say_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "allow.json"
    path.write_text("{}", encoding="utf-8")
    asked, approve = answering(*[AllowRule(["echo", "*"])] * 3)
    with (
        caplog.at_level(logging.WARNING, logger="harness9_ref"),
        Registry(tmp_path, approve=approve, rules=AllowRules(path)) as registry,
    ):
        assert registry.execute("bash", bash("echo one")) == "one\n"
        assert registry.execute("bash", bash("echo two")) == "two\n"
        assert registry.execute("bash", bash("echo three")) == "three\n"
    unusable = ALLOW_FILE_UNUSABLE.format(path=path, reason='no "format": "harness9-allow"')
    messages = [record.getMessage() for record in caplog.records]
    assert messages.count(unusable) == 1  # said once, at the first command, not at every one
    assert messages.index(unusable) < messages.index(RULE_NOT_KEPT.format(rule="echo *", message=unusable))
    assert messages.count(RULE_NOT_KEPT.format(rule="echo *", message=unusable)) == 3
    assert asked == ["echo one", "echo two", "echo three"] and path.read_text(encoding="utf-8") == "{}"


def test_a_version_1_file_is_read_as_exact_rules_and_written_as_version_2(tmp_path: Path) -> None:
    """R-APPR-13b: a rule kept when rules covered every longer command now covers its own words
    only; one ending in the word * goes; reading writes nothing, the next change writes version 2."""
    path = tmp_path / "allow.json"
    old = {"format": "harness9-allow", "version": 1, "directories": {"/a": [["git", "status"], ["ls", "*"], ["git"]]}}
    path.write_text(json.dumps(old), encoding="utf-8")
    rules = AllowRules(path)
    assert rules.rules_for("/a") == [("git", "status"), ("git",)]
    assert json.loads(path.read_text(encoding="utf-8")) == old  # reading changes nothing
    rules.add("/a", ["npm", "test", "*"])
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "format": "harness9-allow",
        "version": 2,
        "directories": {"/a": [["git"], ["git", "status"], ["npm", "test", "*"]]},
    }


def test_a_version_1_rule_no_longer_lets_options_ride_along(tmp_path: Path) -> None:
    """R-APPR-13b: the rule git kept by version 1 runs git alone, and asks about git with more."""
    path = tmp_path / "home" / "allow.json"
    work = tmp_path / "work"
    work.mkdir()
    path.parent.mkdir()
    old = {"format": "harness9-allow", "version": 1, "directories": {rules_directory(work): [["echo", "hi"]]}}
    path.write_text(json.dumps(old), encoding="utf-8")
    asked, approve = answering()
    with Registry(work, approve=approve, rules=AllowRules(path)) as registry:
        assert registry.execute("bash", bash("echo hi")) == "hi\n"
        assert registry.execute("bash", bash("echo hi > made.txt")) == DECLINED
        assert registry.execute("bash", bash("echo hi there")) == DECLINED
    assert asked == ["echo hi > made.txt", "echo hi there"]
    assert not (work / "made.txt").exists()


OUTSIDE_WRITES = [
    # R-APPR-7: with the rules git diff and find ., each of these would write outside the
    # working directory, or delete in it, if the words after a rule's rode along.
    "git diff --output={outside}/diff.txt",
    "git diff -o{outside}/diff.txt",
    "find . -exec touch {outside}/touched '{{}}' ';'",
    "find . -exec touch {outside}/touched {{}} \\;",
    "find . -delete",
    "find . -fprint {outside}/list.txt",
    "git diff\ntouch {outside}/second-line",
    "git diff; touch {outside}/semicolon",
    "git diff && touch {outside}/and-and",
    "git diff | tee {outside}/pipe",
    "git diff $(touch {outside}/substitution)",
    "git diff `touch {outside}/backticks`",
    "git diff > {outside}/redirect",
    "git diff 2> {outside}/redirect-stderr",
    "git diff >> {outside}/append",
    "find . -name x -fprintf {outside}/printf '%p'",
]


@pytest.mark.parametrize("command", OUTSIDE_WRITES)
def test_exact_rules_never_cover_a_command_that_writes_elsewhere(tmp_path: Path, command: str) -> None:
    """R-APPR-6c, R-APPR-7b: the rules git diff and find . (even git diff * and find . * for the
    commands that are no single program) leave each of these asked about; declined, nothing is
    written outside and nothing is deleted inside, checked on the disk."""
    outside, work, home = tmp_path / "outside", tmp_path / "work", tmp_path / "home"
    for folder in (outside, work, home):
        folder.mkdir()
    (work / "keep.txt").write_text("kept\n", encoding="utf-8")
    rules = AllowRules(home / "allow.json")
    rules.add(rules_directory(work), ["git", "diff"])
    rules.add(rules_directory(work), ["find", "."])
    line = command.format(outside=outside)
    asked, approve = answering()
    with Registry(work, approve=approve, rules=rules) as registry:
        assert registry.execute("bash", bash(line)) == DECLINED
    assert asked == [line]
    assert os.listdir(outside) == [] and (work / "keep.txt").is_file()


NO_SINGLE_PROGRAM = [c for c in OUTSIDE_WRITES if c.startswith("git diff") and " -o" not in c and "--output" not in c]


@pytest.mark.parametrize("command", NO_SINGLE_PROGRAM)
def test_a_wildcard_rule_still_never_covers_shell_operators(tmp_path: Path, command: str) -> None:
    """R-APPR-6c, R-APPR-7b: git diff * allows any words after git diff, never a second command,
    a substitution or a redirection."""
    outside, work, home = tmp_path / "outside", tmp_path / "work", tmp_path / "home"
    for folder in (outside, work, home):
        folder.mkdir()
    rules = AllowRules(home / "allow.json")
    rules.add(rules_directory(work), ["git", "diff", "*"])
    line = command.format(outside=outside)
    asked, approve = answering()
    with Registry(work, approve=approve, rules=rules) as registry:
        assert registry.execute("bash", bash(line)) == DECLINED
    assert asked == [line] and os.listdir(outside) == []


def test_an_exact_rule_runs_its_command_unasked(tmp_path: Path) -> None:
    """R-APPR-7a: the rule covers its own command word for word, however it is quoted."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    rules = AllowRules(home / "allow.json")
    rules.add(rules_directory(work), ["echo", "a b"])
    asked, approve = answering()
    with Registry(work, approve=approve, rules=rules) as registry:
        assert registry.execute("bash", bash("echo 'a b'")) == "a b\n"
        assert registry.execute("bash", bash('echo "a b"')) == "a b\n"
        assert registry.execute("bash", bash("echo a b")) == DECLINED
    assert asked == ["echo a b"]
