"""Run mode's lines for what did not run for want of ``--yes``: every line of a command shown,
numbered, its control characters escaped (harness9_ref/cli/_agent.py; SPEC R-APPR-12, R-APPR-11).

The first tests run the real command in a subprocess and read its standard error; the others
check ``not_run_lines`` for what a prompt of the offline provider cannot carry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness9_ref.cli import not_run_lines
from harness9_ref.tools import FileChange
from tests.cli.helpers import cli

OFFLINE = ["--provider", "offline", "--lang", "en"]


def test_a_hidden_second_line_is_a_line_of_its_own(env: dict[str, str], work: Path) -> None:
    """R-APPR-12a: the second line of a refused command is never joined to the first."""
    (work / "important_dir").mkdir()
    command = "echo Cleaning up, will not touch: \nrm -rf important_dir"
    result = cli([*OFFLINE, "run", f"run {command}"], env, work)
    lines = result.stderr.splitlines()
    start = lines.index("harness9-ref: not run (needs --yes), a command of 2 lines:")
    assert lines[start + 1 : start + 3] == ["1 | echo Cleaning up, will not touch: ", "2 | rm -rf important_dir"]
    assert (work / "important_dir").is_dir()


@pytest.mark.parametrize("json_mode", [[], ["--json"]])
def test_a_one_line_command_keeps_its_line_with_controls_escaped(
    env: dict[str, str], work: Path, json_mode: list[str]
) -> None:
    """R-APPR-12a: a command of one line is one line, a tab and an escape character shown as escapes,
    with --json too (R-CLI-18)."""
    result = cli([*OFFLINE, *json_mode, "run", "run printf 'a\tb\x1b[2J' > made.txt"], env, work)
    assert "harness9-ref: not run (needs --yes): printf 'a\\tb\\x1b[2J' > made.txt" in result.stderr.splitlines()
    assert not (work / "made.txt").exists()


def test_the_lines_in_chinese() -> None:
    assert not_run_lines("ls\nrm x", "zh") == ["harness9-ref: 未运行（需要 --yes），共 2 行的命令：", "1 | ls", "2 | rm x"]


def test_a_final_line_feed_and_a_carriage_return_are_shown() -> None:
    """R-APPR-11b: lines are split at line feeds only; a CR stays on its line as \\r, and a final
    line feed leaves an empty last line, as bash reads it."""
    assert not_run_lines("ls\r\nwc\n", "en") == [
        "harness9-ref: not run (needs --yes), a command of 3 lines:",
        "1 | ls\\r",
        "2 | wc",
        "3 | ",
    ]


def test_ten_lines_are_numbered_right_aligned() -> None:
    lines = not_run_lines("\n".join(f"echo {k}" for k in range(1, 11)), "en")
    assert lines[1] == " 1 | echo 1" and lines[10] == "10 | echo 10" and len(lines) == 11


def test_a_change_names_its_path_on_one_visible_line() -> None:
    """R-APPR-12a: a change's subject is one line, a line feed in its path written \\n."""
    change = FileChange("write_file", "a\nb.txt", "")
    assert not_run_lines(change, "en") == ["harness9-ref: not run (needs --yes): write_file a\\nb.txt"]
