"""Ending commands: interrupt(), close() and the timeout's grace (harness9_ref/tools/_process.py,
_bash.py, _registry.py; SPEC R-INT-1, R-INT-2, R-TOOL-6).

Real process trees: each command writes the pids of its children and grandchildren into files,
and the tests check that every one of them is gone once the registry says the command is over.
A pid counts as gone when it has exited (``tests/tools/processes.py``). No mocks: the point is
what the kernel does with the signals.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness9_ref.tools import INTERRUPT_GRACE_SECONDS, INTERRUPTED_NOTE, Answer, FileChange, Registry
from harness9_ref.tools._process import group_alive
from tests.tools.processes import bash, is_gone, pids, wait_for_files, wait_gone

# A subshell with a grandchild, a child, and the shell itself; each writes its pid.
TREE = (
    "(sleep 30 & echo $! > grandchild; sleep 30) & echo $! > child; "
    "sleep 30 & echo $! > sleeper; echo $$ > shell; echo started; wait"
)
TREE_FILES = ("grandchild", "child", "sleeper", "shell")


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    with Registry(tmp_path, bash_timeout=20) as registry:
        yield registry


def in_thread(action: Callable[[], None], after: Callable[[], None]) -> threading.Thread:
    """Run ``after()`` (a wait) then ``action()`` in another thread, as a UI or a signal would."""

    def run() -> None:
        after()
        action()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_interrupt_from_another_thread_ends_the_whole_process_tree(registry: Registry, tmp_path: Path) -> None:
    thread = in_thread(registry.interrupt, lambda: wait_for_files(tmp_path, *TREE_FILES))
    started = time.monotonic()
    out = bash(registry, TREE)
    assert out == "started\n" + INTERRUPTED_NOTE
    assert time.monotonic() - started < 3
    thread.join(1)
    for pid in pids(tmp_path, *TREE_FILES):
        assert is_gone(pid), f"process {pid} survived the interrupt"


def test_a_command_ignoring_sigterm_is_killed_after_the_grace_within_3_seconds(
    registry: Registry, tmp_path: Path
) -> None:
    command = "trap '' TERM; sleep 30 & echo $! > child; echo $$ > shell; echo started; wait; echo survived"
    interrupted_at: list[float] = []

    def interrupt() -> None:
        interrupted_at.append(time.monotonic())
        registry.interrupt()

    in_thread(interrupt, lambda: wait_for_files(tmp_path, "child", "shell"))
    out = bash(registry, command)
    took = time.monotonic() - interrupted_at[0]
    assert out == "started\n" + INTERRUPTED_NOTE
    assert INTERRUPT_GRACE_SECONDS - 0.1 < took < 3
    for pid in pids(tmp_path, "child", "shell"):
        assert is_gone(pid)


def test_a_command_that_traps_sigterm_can_clean_up_and_only_the_interrupted_note_follows(
    registry: Registry, tmp_path: Path
) -> None:
    command = "trap 'echo cleaning up; exit 4' TERM; echo $$ > shell; sleep 30 & wait"
    in_thread(registry.interrupt, lambda: wait_for_files(tmp_path, "shell"))
    started = time.monotonic()
    assert bash(registry, command) == "cleaning up\n" + INTERRUPTED_NOTE  # no exit status note
    assert time.monotonic() - started < INTERRUPT_GRACE_SECONDS  # it ended on SIGTERM, no grace spent


def test_without_output_the_observation_is_no_output_then_the_note(registry: Registry, tmp_path: Path) -> None:
    in_thread(registry.interrupt, lambda: wait_for_files(tmp_path, "shell"))
    assert bash(registry, "echo $$ > shell; sleep 30") == "(no output)\n[interrupted]"


def test_interrupt_with_nothing_running_does_nothing_and_a_later_command_runs(registry: Registry) -> None:
    registry.interrupt()
    assert bash(registry, "sleep 0.2; echo fine") == "fine\n"


def test_only_the_command_in_progress_is_interrupted(registry: Registry, tmp_path: Path) -> None:
    in_thread(registry.interrupt, lambda: wait_for_files(tmp_path, "shell"))
    assert bash(registry, "echo $$ > shell; sleep 30").endswith(INTERRUPTED_NOTE)
    assert bash(registry, "sleep 0.2; echo next") == "next\n"


def test_a_command_interrupted_while_it_is_being_approved_does_not_start(tmp_path: Path) -> None:
    registry: Registry

    def approve(command: str | FileChange) -> Answer:
        registry.interrupt()  # the user pressed Ctrl+C while the question was on screen
        return "yes"

    with Registry(tmp_path, approve=approve) as registry:
        assert bash(registry, "touch made-it") == "(no output)" + INTERRUPTED_NOTE
    assert not (tmp_path / "made-it").exists()


def test_the_timeout_sends_sigterm_first_so_a_trap_still_runs(tmp_path: Path) -> None:
    with Registry(tmp_path, bash_timeout=0.5) as registry:
        out = bash(registry, "trap 'echo got TERM; exit 3' TERM; echo start; sleep 30 & wait")
    assert out == "start\ngot TERM\n\n[timed out after 0.5 s]"


def test_the_timeout_kills_a_command_ignoring_sigterm_after_the_grace(tmp_path: Path) -> None:
    started = time.monotonic()
    with Registry(tmp_path, bash_timeout=0.5) as registry:
        out = bash(registry, "trap '' TERM; sleep 30 & echo $! > child; wait")
    assert out == "(no output)\n[timed out after 0.5 s]"
    assert 0.5 + INTERRUPT_GRACE_SECONDS - 0.1 < time.monotonic() - started < 3
    assert all(is_gone(pid) for pid in pids(tmp_path, "child"))


def test_close_ends_background_jobs_left_by_a_finished_command(tmp_path: Path) -> None:
    registry = Registry(tmp_path)
    command = (
        "sleep 30 & echo $! > plain; "
        "bash -c 'trap \"\" TERM; sleep 30' & echo $! > stubborn; "
        "(sleep 30 & echo $! > grandchild; wait) & echo done"
    )
    assert bash(registry, command) == "done\n"
    wait_for_files(tmp_path, "plain", "stubborn", "grandchild")
    jobs = pids(tmp_path, "plain", "stubborn", "grandchild")
    assert not any(is_gone(pid) for pid in jobs)  # a finished command's jobs go on, as in a terminal
    started = time.monotonic()
    registry.close()
    assert time.monotonic() - started < 3
    for pid in jobs:
        assert is_gone(pid), f"background job {pid} survived close()"
    registry.close()  # idempotent
    assert bash(registry, "echo still usable") == "still usable\n"
    registry.close()


def test_the_context_manager_closes_the_registry(tmp_path: Path) -> None:
    with Registry(tmp_path) as registry:
        out = bash(registry, "sleep 30 & echo $!")
    assert wait_gone(int(out), 0.1)


def test_close_without_leftovers_returns_at_once(registry: Registry) -> None:
    assert bash(registry, "echo quick") == "quick\n"
    started = time.monotonic()
    registry.close()
    assert time.monotonic() - started < 0.2


def test_close_from_another_thread_interrupts_the_running_command(registry: Registry, tmp_path: Path) -> None:
    in_thread(registry.close, lambda: wait_for_files(tmp_path, "shell"))
    assert bash(registry, "echo $$ > shell; sleep 30") == "(no output)" + INTERRUPTED_NOTE


def test_a_job_that_ended_on_its_own_costs_close_nothing(registry: Registry) -> None:
    first = int(bash(registry, "sleep 0.1 & echo $$"))
    time.sleep(0.3)
    assert not group_alive(first)
    assert bash(registry, "echo next") == "next\n"
    started = time.monotonic()
    registry.close()
    assert time.monotonic() - started < 0.2  # nothing left to end, so no grace spent


def test_group_alive_follows_a_real_group(tmp_path: Path) -> None:
    with Registry(tmp_path) as registry:
        shell = int(bash(registry, "sleep 30 & echo $$"))
        assert group_alive(shell)  # the shell has exited; its job keeps the group
    assert not group_alive(shell)


def test_a_group_the_system_will_not_signal_is_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """A member that changed its user refuses the probe (EPERM, which root never meets, so staged):
    it is still a member, so the group has not ended."""

    def refused(pgid: int, signum: int) -> None:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "killpg", refused)  # the module _process calls it through
    assert group_alive(os.getpgid(0))
