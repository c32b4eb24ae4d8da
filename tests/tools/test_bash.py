"""The bash tool (harness9_ref/tools/_bash.py; SPEC R-TOOL-5, R-TOOL-6, R-TOOL-7).

Real ``bash`` processes; timeouts are 1 second so the suite stays fast.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness9_ref.text import split_status
from harness9_ref.tools import Registry, _bash
from tests.tools.processes import bash, is_gone, wait_gone


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    with Registry(tmp_path, bash_timeout=1) as registry:  # background jobs end with the test (R-INT-2)
        yield registry


def test_standard_output_and_error_are_merged_in_order(registry: Registry) -> None:
    assert bash(registry, "echo one; echo two >&2; echo three") == "one\ntwo\nthree\n"


def test_a_non_zero_status_is_noted(registry: Registry) -> None:
    assert bash(registry, "echo failing; exit 3") == "failing\n\n[exit status 3]"


def test_an_empty_output_with_status_zero_is_no_output(registry: Registry) -> None:
    assert bash(registry, "true") == "(no output)"


def test_an_empty_output_with_a_non_zero_status_is_no_output_then_the_note(registry: Registry) -> None:
    assert bash(registry, "exit 1") == "(no output)\n[exit status 1]"


def test_a_shell_killed_by_a_signal_is_noted(registry: Registry) -> None:
    assert bash(registry, "echo before; kill -TERM $$") == "before\n\n[killed by signal 15]"
    assert bash(registry, "kill -KILL $$") == "(no output)\n[killed by signal 9]"


def test_signal_one_is_noted_like_any_other(registry: Registry) -> None:
    """R-TOOL-5: the lowest signal number, SIGHUP, is a signal too. A shell started with SIGHUP
    ignored (under nohup) cannot be hung up, which is why no conformance case can rely on it:
    the test lets the shell inherit the default disposition for the time of the command."""
    before = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        assert bash(registry, "echo before; kill -HUP $$") == "before\n\n[killed by signal 1]"
    finally:
        signal.signal(signal.SIGHUP, before)


def test_the_command_runs_in_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "marker").write_text("x", encoding="utf-8")
    registry = Registry(tmp_path)
    assert bash(registry, "pwd -P") == f"{os.path.realpath(tmp_path)}\n"
    assert bash(registry, "ls") == "marker\n"


def test_standard_input_is_empty(registry: Registry) -> None:
    started = time.monotonic()
    assert bash(registry, "cat; echo end") == "end\n"
    assert time.monotonic() - started < 1


def test_the_command_runs_in_a_new_process_group(registry: Registry) -> None:
    out = bash(registry, "ps -o pgid= -p $$; echo $$")
    pgid, pid = out.split()
    assert pgid == pid
    assert int(pgid) != os.getpgrp()


def test_a_timeout_kills_the_whole_process_group_including_a_grandchild(tmp_path: Path) -> None:
    registry = Registry(tmp_path, bash_timeout=1)
    started = time.monotonic()
    out = bash(registry, "(sleep 30; echo late) & echo $! > grandchild; echo started; sleep 30")
    elapsed = time.monotonic() - started
    assert out == "started\n\n[timed out after 1 s]"
    assert 0.9 < elapsed < 5
    grandchild = int((tmp_path / "grandchild").read_text(encoding="ascii"))
    assert wait_gone(grandchild), f"process {grandchild} survived the timeout"


def test_a_shell_that_closes_its_output_still_times_out(registry: Registry) -> None:
    started = time.monotonic()
    assert bash(registry, "echo bye; exec >&- 2>&-; sleep 30") == "bye\n\n[timed out after 1 s]"
    assert time.monotonic() - started < 5


def test_a_fractional_timeout_is_written_as_given(tmp_path: Path) -> None:
    assert bash(Registry(tmp_path, bash_timeout=0.5), "sleep 10") == "(no output)\n[timed out after 0.5 s]"


def test_the_command_is_over_when_the_shell_exits_even_if_a_background_job_holds_the_pipe(
    registry: Registry,
) -> None:
    started = time.monotonic()
    out = bash(registry, "sleep 30 & echo $!; echo done")
    assert time.monotonic() - started < 0.9
    pid, done = out.split()
    assert done == "done"
    assert not is_gone(int(pid))  # background jobs are left running, as in a terminal
    os.kill(int(pid), signal.SIGKILL)


def test_long_output_is_capped_with_the_note_and_the_total(registry: Registry) -> None:
    out = bash(registry, "head -c 100000 /dev/zero | tr '\\0' a")
    assert out == "a" * 65536 + "\n[truncated: showing the first 65536 of 100000 bytes]"


def test_without_a_pidfd_the_pipe_is_still_read_while_the_shell_runs(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R-TOOL-5: where the system has no pidfd (an older kernel), the reader must keep reading
    the pipe while waiting for the shell; napping instead would leave a command that writes more
    than the pipe holds blocked until its timeout."""
    monkeypatch.setattr(_bash, "_pidfd", lambda pid: None)
    out = bash(registry, "head -c 300000 /dev/zero | tr '\\0' a")
    assert out == "a" * 65536 + "\n[truncated: showing the first 65536 of 300000 bytes]"


def test_a_drain_reads_all_that_is_already_in_the_pipe_without_waiting_for_more() -> None:
    """R-TOOL-5: once the shell has exited, the output its background jobs left in the pipe is
    still read, every byte of it, while the pipe stays open (no end of file is waited for)."""
    read_end, write_end = os.pipe()
    reader = _bash._Reader(read_end, 65536, os.getpid())
    try:
        os.write(write_end, b"x" * 50000)
        reader.drain(time.monotonic() + 5)
        assert (reader.out.total, reader.open) == (50000, True)
    finally:
        reader.close()
        os.close(read_end)
        os.close(write_end)


def test_the_cap_comes_before_the_status_note_and_cuts_at_a_character_boundary(tmp_path: Path) -> None:
    out = bash(Registry(tmp_path, output_cap=5), "printf 'abc中文'; exit 2")
    assert out == "abc\n[truncated: showing the first 5 of 9 bytes]\n[exit status 2]"


def test_endless_output_is_capped_and_timed_out(registry: Registry) -> None:
    out = bash(registry, "yes")
    head, _, notes = out.partition("\n[truncated: showing the first 65536 of ")
    assert head == "y\n" * 32768
    total, _, tail = notes.partition(" bytes]")
    assert int(total) > 65536
    assert tail == "\n[timed out after 1 s]"


def test_invalid_utf8_output_is_replaced(registry: Registry) -> None:
    assert bash(registry, "printf 'a\\377b'") == "a\ufffdb"


def test_a_missing_bash_is_an_error_observation(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert bash(registry, "echo hi") == "error: cannot run bash: No such file or directory"


def test_a_vanished_working_directory_is_an_error_observation(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    registry = Registry(gone)
    gone.rmdir()
    assert bash(registry, "echo hi").startswith("error: cannot run bash: ")


def test_a_nul_byte_in_the_command_is_an_error_observation(registry: Registry) -> None:
    assert bash(registry, "echo a\x00b").startswith("error: cannot run bash: ")


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        ("", 'missing required member "command"'),
        ('{"cmd": "ls"}', 'missing required member "command"'),
        ('{"command": true}', 'member "command" must be a string, got a boolean'),
        ("[1, 2]", "expected a JSON object, got an array"),
        ("3", "expected a JSON object, got a number"),
    ],
)
def test_invalid_arguments_are_named(registry: Registry, arguments: str, detail: str) -> None:
    assert registry.execute("bash", arguments) == f"error: invalid arguments for bash: {detail}"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo out; exit 4", ("out\n", "[exit status 4]")),
        ("kill -KILL $$", ("(no output)", "[killed by signal 9]")),
        ("echo '[exit status 1]'", ("[exit status 1]\n", "")),  # the output's own text, then a line feed
        ("printf 'all fine'", ("all fine", "")),
    ],
)
def test_split_status_takes_the_note_off_a_real_observation(registry: Registry, command: str, expected: tuple[str, str]) -> None:
    """R-TOOL-18: the note run_bash writes last is the status line; output that only looks like one is output."""
    assert split_status(bash(registry, command)) == expected


def test_split_status_finds_a_timeout_and_an_interrupt(tmp_path: Path) -> None:
    with Registry(str(tmp_path), bash_timeout=0.2) as registry:
        assert split_status(bash(registry, "sleep 5")) == ("(no output)", "[timed out after 0.2 s]")
    assert split_status("(no output)\n[interrupted]") == ("(no output)", "[interrupted]")
