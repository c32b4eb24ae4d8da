"""Approval before a command runs (harness9_ref/tools/_approval.py, _registry.py; SPEC R-APPR-1, R-APPR-3).

Each command would create a file, so "it did not run" is checked on the disk, not taken from the
observation.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness9_ref.tools import APPROVAL_REQUIRED, DECLINED, Answer, FileChange, Refusal, Registry, require_yes
from tests.tools.processes import bash


class Answers:
    """An approval callback that gives scripted answers and records what it was asked."""

    def __init__(self, *answers: Answer | Exception) -> None:
        self.answers = list(answers)
        self.asked: list[str | FileChange] = []

    def __call__(self, command: str | FileChange) -> Answer:
        self.asked.append(command)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def touch(name: str) -> str:
    return f"touch {name}; echo made {name}"


def test_yes_runs_that_command_and_the_next_one_is_asked_about_again(tmp_path: Path) -> None:
    approve = Answers("yes", "yes")
    registry = Registry(tmp_path, approve=approve)
    assert bash(registry, touch("a")) == "made a\n"
    assert bash(registry, touch("b")) == "made b\n"
    assert approve.asked == [touch("a"), touch("b")]


def test_no_runs_nothing_and_says_declined(tmp_path: Path) -> None:
    registry = Registry(tmp_path, approve=Answers("no"))
    assert bash(registry, touch("a")) == DECLINED
    assert not (tmp_path / "a").exists()


def test_always_is_remembered_until_reset_approval(tmp_path: Path) -> None:
    approve = Answers("always", "no")
    registry = Registry(tmp_path, approve=approve)
    assert bash(registry, touch("a")) == "made a\n"
    assert bash(registry, touch("b")) == "made b\n"
    assert approve.asked == [touch("a")]
    registry.reset_approval()
    assert bash(registry, touch("c")) == DECLINED
    assert approve.asked == [touch("a"), touch("c")]
    assert not (tmp_path / "c").exists()


def test_an_exception_in_the_callback_counts_as_no(tmp_path: Path) -> None:
    registry = Registry(tmp_path, approve=Answers(RuntimeError("the terminal went away")))
    assert bash(registry, touch("a")) == DECLINED
    assert not (tmp_path / "a").exists()


def test_an_answer_the_callback_should_not_give_counts_as_no(tmp_path: Path) -> None:
    registry = Registry(tmp_path, approve=Answers("maybe"))  # type: ignore[arg-type]
    assert bash(registry, touch("a")) == DECLINED
    assert not (tmp_path / "a").exists()


def test_a_refusal_chooses_its_own_observation(tmp_path: Path) -> None:
    registry = Registry(tmp_path, approve=Answers(Refusal("error: not now")))
    assert bash(registry, touch("a")) == "error: not now"
    assert not (tmp_path / "a").exists()


def test_require_yes_refuses_every_command_and_reports_each(tmp_path: Path) -> None:
    refused: list[str | FileChange] = []
    registry = Registry(tmp_path, approve=require_yes(refused.append))
    assert bash(registry, touch("a")) == APPROVAL_REQUIRED
    assert bash(registry, touch("b")) == APPROVAL_REQUIRED
    assert refused == [touch("a"), touch("b")]
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_require_yes_whose_report_fails_still_runs_nothing(tmp_path: Path) -> None:
    def report(request: str | FileChange) -> None:
        raise OSError("standard error is closed")

    registry = Registry(tmp_path, approve=require_yes(report))
    assert bash(registry, touch("a")) == DECLINED
    assert not (tmp_path / "a").exists()


def test_read_file_is_never_asked_about(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    approve = Answers()
    registry = Registry(tmp_path, approve=approve)
    assert registry.execute("read_file", json.dumps({"path": "notes.txt"})) == "hello\n"
    assert approve.asked == []


def test_invalid_arguments_are_reported_without_asking(tmp_path: Path) -> None:
    approve = Answers()
    registry = Registry(tmp_path, approve=approve)
    assert registry.execute("bash", "{}") == 'error: invalid arguments for bash: missing required member "command"'
    assert approve.asked == []


def test_without_a_callback_every_command_runs(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    registry.reset_approval()  # harmless without a callback
    assert bash(registry, touch("a")) == "made a\n"
