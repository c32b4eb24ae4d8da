"""No command outlives the agent, even one killed by SIGKILL (SPEC R-TOOL-17, R-INT-2).

The real program runs a real command tree through the offline provider's ``run <command>``
(R-CLI-9): a shell whose child starts a background ``sleep`` and waits on another. The program
is then killed with SIGKILL, so no ``close()`` runs; its watchdog ends the whole tree.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.tools.processes import is_gone, pids, wait_for_files, wait_gone


def _end_what_is_left(pgid: int) -> None:
    """Leave no sleep behind when the test fails."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_a_command_tree_dies_with_the_program_killed_by_sigkill(env: dict[str, str], work: Path, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    command = f"echo $$ > {marks}/shell; sh -c 'echo $$ > {marks}/child; sleep 30 & echo $! > {marks}/job; sleep 30'"
    program = subprocess.Popen(
        [sys.executable, "-m", "harness9_ref", "--provider", "offline", "--yes", "run", f"run {command}"],
        cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_files(marks, "shell", "child", "job", seconds=30)
        tree = pids(marks, "shell", "child", "job")
        assert not any(is_gone(pid) for pid in tree)
        program.kill()  # SIGKILL: the program ends nothing itself
        program.wait(timeout=10)
        assert all(wait_gone(pid, 5.0) for pid in tree), [pid for pid in tree if not is_gone(pid)]
    finally:
        program.kill()
        program.wait(timeout=10)
        if (marks / "shell").is_file():
            _end_what_is_left(pids(marks, "shell")[0])
