"""The watchdog ends a program's command groups when the program dies without ``close()`` (SPEC R-TOOL-17).

A real program (a child Python) runs real commands through a ``Registry`` and leaves background
jobs running, which ``close()`` would end (R-INT-2); it is killed with SIGKILL instead, so only
the watchdog can end them. A watchdog that was itself killed is started again with the next
command and told every group still listed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from harness9_ref.tools import Registry
from harness9_ref.tools._bash import _GATE, BASH_PROGRAM
from harness9_ref.tools._process import _WATCHDOG, watch_pipe, watchdog_pid
from tests.tools.processes import bash, is_gone, wait_gone

ROOT: Final = Path(__file__).resolve().parents[2]
JOB: Final = "sleep 30 > /dev/null 2>&1 & echo $!"  # a background job: the shell exits, its group lives on
PROGRAM: Final = """
import json, sys, time
from harness9_ref.tools import Registry
from harness9_ref.tools._bash import _GATE, BASH_PROGRAM
from harness9_ref.tools._process import watch_pipe, watchdog_pid

registry = Registry(sys.argv[1])
job = json.dumps({"command": sys.argv[3]})
first = registry.execute("bash", job)
if sys.argv[2] == "kill-watchdog":
    import os, signal
    os.kill(watchdog_pid(), signal.SIGKILL)
    while watchdog_pid() is not None:
        time.sleep(0.01)
second = registry.execute("bash", job)
print(first.split()[0], second.split()[0], watchdog_pid(), flush=True)
time.sleep(60)
"""


@pytest.fixture
def jobs() -> Iterator[list[int]]:
    """The pids of the jobs a test started, killed at its end whatever happened."""
    started: list[int] = []
    yield started
    for pid in started:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _program(tmp_path: Path, how: str, jobs: list[int]) -> tuple[subprocess.Popen[str], list[int], int]:
    """Start the program; its two jobs' pids (also put in ``jobs``) and its watchdog's pid."""
    program = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, str(tmp_path), how, JOB],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True,
    )
    assert program.stdout is not None
    first, second, watchdog = (int(word) for word in program.stdout.readline().split())
    jobs.extend([first, second])
    return program, [first, second], watchdog


@pytest.mark.parametrize("how", ["as-is", "kill-watchdog"])
def test_jobs_left_running_end_with_a_program_killed_by_sigkill(tmp_path: Path, jobs: list[int], how: str) -> None:
    program, started, watchdog = _program(tmp_path, how, jobs)
    assert not any(is_gone(pid) for pid in started)
    program.kill()
    program.wait(timeout=10)
    assert all(wait_gone(pid, 5.0) for pid in started), [pid for pid in started if not is_gone(pid)]
    assert wait_gone(watchdog, 5.0)  # and it ends itself


def test_one_watchdog_serves_every_command(tmp_path: Path) -> None:
    with Registry(tmp_path) as registry:
        assert bash(registry, "true") == "(no output)"
        watchdog = watchdog_pid()
        assert watchdog is not None
        assert bash(registry, "echo again") == "again\n"
        assert watchdog_pid() == watchdog


def _group() -> subprocess.Popen[bytes]:
    """A real process group of its own: a ``sleep`` leading a new session."""
    return subprocess.Popen(["sleep", "30"], start_new_session=True)


def test_the_watchdog_ends_only_the_groups_still_listed_at_the_end() -> None:
    listed, unlisted = _group(), _group()
    try:
        lines = [b"+%d\n" % listed.pid, b"+%d\n" % unlisted.pid, b"junk\n", b"-%d\n" % unlisted.pid]
        watch_pipe(iter(lines))  # the end of the lines is the program's end
        assert listed.wait(timeout=5) == -signal.SIGTERM
        assert unlisted.poll() is None  # a group unlisted before its shell was collected is never signalled
    finally:
        for proc in (listed, unlisted):
            proc.kill()
            proc.wait()


LISTING: Final = """
import json, sys
from harness9_ref.tools import Registry
from harness9_ref.tools._process import _WATCHDOG

def run(command):
    return int(registry.execute("bash", json.dumps({"command": command})).split()[0])

registry = Registry(sys.argv[1])
done = run("echo $$")
kept = run("sleep 30 > /dev/null 2>&1 & echo $$")
listed = sorted(_WATCHDOG.listed)
registry.close()
print(json.dumps([done, kept, listed, sorted(_WATCHDOG.listed)]))
"""


def test_a_group_is_listed_until_its_shell_is_collected(tmp_path: Path) -> None:
    """A finished command's group leaves the list before its shell is collected, a kept one when closed."""
    result = subprocess.run(
        [sys.executable, "-c", LISTING, str(tmp_path)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=30, check=True,
    )
    done, kept, listed, after_close = json.loads(result.stdout)
    assert listed == [kept] and done != kept
    assert after_close == []


def test_a_shell_whose_gate_closes_without_the_go_ahead_runs_nothing(tmp_path: Path) -> None:
    """A program killed between starting the shell and listing its group leaves nothing running."""
    gate, opener = os.pipe()
    shell = subprocess.Popen([BASH_PROGRAM, "-c", _GATE, BASH_PROGRAM, f"touch {tmp_path}/ran", str(gate)], pass_fds=(gate,))
    os.close(gate)
    os.close(opener)  # the program is gone before it wrote the line
    assert shell.wait(timeout=10) == 1
    assert not (tmp_path / "ran").exists()


def test_the_command_runs_as_bash_c_without_the_gate(tmp_path: Path) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc to list a process's descriptors")
    with Registry(tmp_path) as registry:
        assert bash(registry, 'echo "$0"; ls /proc/self/fd | wc -l') == "bash\n4\n"  # 0, 1, 2 and ls's own


def test_a_finished_command_is_unlisted_at_the_watchdog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watchdog is told when a group is reaped, so a program that dies later never signals
    an id the system may have given to another group meanwhile."""
    told: list[bytes] = []
    write = _WATCHDOG._write

    def spy(data: bytes) -> None:
        told.append(data)
        write(data)

    monkeypatch.setattr(_WATCHDOG, "_write", spy)
    with Registry(tmp_path) as registry:
        shell = int(bash(registry, "echo $$"))
    assert b"-%d\n" % shell in told


def test_without_a_watchdog_commands_run_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no watchdog can be started (no Python to start), commands run and are collected as
    usual and R-INT-2 is the only guarantee (R-TOOL-17d)."""
    monkeypatch.setattr(_WATCHDOG, "proc", None)
    monkeypatch.setattr(sys, "executable", "")
    with Registry(tmp_path) as registry:
        assert bash(registry, "echo ran; exit 3") == "ran\n\n[exit status 3]"
        assert bash(registry, "echo again") == "again\n"
    assert _WATCHDOG.proc is None
