"""The ``bash`` tool (SPEC R-TOOL-1, R-TOOL-5 … R-TOOL-8, R-TOOL-17, R-INT-1).

``bash -c <command>`` runs in a new session (so a new process group whose id is the shell's
pid; it starts once the group is listed with the watchdog, R-TOOL-17), in the working
directory, with standard input from ``/dev/null`` and standard error merged into standard
output, so the output keeps the order in which it was written. The pipe is read with
``select`` against a deadline. On the deadline (R-TOOL-6), or when ``stop`` is set by
``Registry.interrupt()`` from another thread (R-INT-1), the whole process group is ended,
grandchildren included: SIGTERM, then SIGKILL after the grace for whatever is still alive
(``_process.py``). ``stop`` is looked at every ``_POLL_SECONDS``, so an interrupt takes effect
within that plus the grace.

The command is over when the shell exits: what it wrote is read, and processes it left running
in the background keep running (they may hold the pipe open; we stop reading it) until the
registry is closed, which ends them (R-INT-2): ``keep`` hands such a shell to the registry. Each
group is also listed with the program's watchdog from its start until its shell is collected,
so it ends with the program even when no ``close()`` runs (R-TOOL-17, ``_process.py``). This
is not a sandbox: the working directory is only where the command starts (R-TOOL-8). POSIX only.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Final

from .._harness9_error import os_reason
from ..schema import ToolDefinition
from ._output import capped_text
from ._process import (
    INTERRUPT_GRACE_SECONDS,
    end_groups,
    exit_status,
    group_alive,
    reap,
    signal_group,
    watch,
)

__all__ = [
    "BASH_TOOL",
    "DEFAULT_BASH_TIMEOUT",
    "EXIT_STATUS_NOTE",
    "INTERRUPTED_NOTE",
    "NO_OUTPUT",
    "SIGNAL_NOTE",
    "START_FAILED",
    "TIMEOUT_NOTE",
]

# R-TOOL-1: the definition, exactly as SPEC section 9.1 prints it.
BASH_TOOL: Final = ToolDefinition(
    "bash",
    "Run a shell command with bash in the working directory and return its combined output.",
    {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command line to run."}},
        "required": ["command"],
    },
)

BASH_PROGRAM: Final = "bash"  # R-TOOL-5: found on PATH
DEFAULT_BASH_TIMEOUT: Final = 60.0  # R-TOOL-6: seconds
NO_OUTPUT: Final = "(no output)"  # R-TOOL-5: stands for an empty output, before any note
EXIT_STATUS_NOTE: Final = "\n[exit status {status}]"  # R-TOOL-5
SIGNAL_NOTE: Final = "\n[killed by signal {signal}]"  # R-TOOL-5
TIMEOUT_NOTE: Final = "\n[timed out after {seconds} s]"  # R-TOOL-6; seconds written with "%g"
INTERRUPTED_NOTE: Final = "\n[interrupted]"  # R-INT-1: in place of any other note
START_FAILED: Final = "error: cannot run bash: {reason}"  # R-TOOL-7

# R-TOOL-17: wait for the go-ahead on the descriptor $2 (none: the program died, run nothing),
# close it, and become `bash -c command` ($0 is bash, $1 the command).
_GATE: Final = 'read -r -u "$2" _ || exit 1; eval "exec $2<&-"; exec "$0" -c "$1"'
_READ_SIZE: Final = 65536
_POLL_SECONDS: Final = 0.05  # how often the shell's exit and an interrupt are checked
_FIRST_NAP_SECONDS: Final = 0.001  # without a pidfd, a closed pipe is followed by short, growing naps
_TIMED_OUT: Final = "timed out"
_INTERRUPTED: Final = "interrupted"


class _Output:
    """The first ``cap + 1`` bytes of the output and the count of all of them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        room = self.cap + 1 - len(self.head)
        if room > 0:
            self.head += data[:room]
        self.total += len(data)

    def text(self) -> str:
        return capped_text(bytes(self.head), self.total, self.cap)


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3 and later), else None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


class _Reader:
    """The command's output pipe, read without blocking; remembers its end of file."""

    def __init__(self, fd: int, cap: int, pid: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self.out = _Output(cap)
        self.open = True
        self._selector = selectors.DefaultSelector()
        self._selector.register(fd, selectors.EVENT_READ)
        self._pidfd = _pidfd(pid)  # readable when the shell exits: no polling delay at the end
        if self._pidfd is not None:
            self._selector.register(self._pidfd, selectors.EVENT_READ)
        self._nap = _FIRST_NAP_SECONDS

    def close(self) -> None:
        self._close_pidfd()
        self._selector.close()

    def read_for(self, seconds: float) -> None:
        """Wait up to ``seconds`` for output or the shell's exit, and read what came."""
        if not self.open and self._pidfd is None:  # nothing to wait on: nap, longer each time
            time.sleep(min(seconds, self._nap))
            self._nap = min(self._nap * 2, _POLL_SECONDS)
            return
        for key, _ in self._selector.select(seconds):
            if key.fd == self.fd:
                self._read_once()
            else:  # the shell has exited; from now on its pidfd would wake every select at once
                self._close_pidfd()

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            self._selector.unregister(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def drain(self, deadline: float, stop: threading.Event | None = None) -> None:
        """Read what is already in the pipe, without waiting for more."""
        self._close_pidfd()  # only the pipe is of interest now
        while self.open and time.monotonic() < deadline and self._selector.select(0):
            if stop is not None and stop.is_set():
                return
            self._read_once()

    def _read_once(self) -> None:
        try:
            data = os.read(self.fd, _READ_SIZE)
        except BlockingIOError:
            return
        if data:
            self.out.add(data)
        else:  # end of file: every writer has closed the pipe
            self.open = False
            self._selector.unregister(self.fd)


def _pump(proc: subprocess.Popen[bytes], reader: _Reader, deadline: float, stop: threading.Event | None) -> int | str:
    """Collect the output until the shell exits (its status), the deadline passes or ``stop`` is set."""
    while True:
        status = exit_status(proc)
        if status is not None:  # background jobs may still hold the pipe: take what is there
            reader.drain(deadline, stop)
            return status
        if stop is not None and stop.is_set():
            return _INTERRUPTED
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return _TIMED_OUT
        reader.read_for(min(remaining, _POLL_SECONDS))


def _end(proc: subprocess.Popen[bytes], reader: _Reader, grace: float) -> None:
    """End the command's process group (R-INT-1), reading its output and collecting the shell meanwhile."""

    def wait(seconds: float) -> None:
        reader.read_for(seconds)
        proc.poll()  # a collected shell no longer counts as a member of the group

    end_groups([proc.pid], wait, grace)
    reap(proc)
    reader.drain(time.monotonic() + _POLL_SECONDS)  # what the group wrote as it ended


def _start(command: str, workdir: str) -> subprocess.Popen[bytes]:
    """Start ``bash -c command`` in a new session, listed with the watchdog before it runs (R-TOOL-17).

    The shell first waits at ``_GATE`` for one line on a pipe of its own, then closes it and
    replaces itself by ``bash -c command`` (same pid, so the same group). The line is written
    once the group is listed; a program killed before that closes the pipe without one, and the
    shell exits without running the command. So no command runs unwatched.

    Raises:
        OSError: bash cannot be started.
        ValueError: the command holds a NUL byte.
    """
    gate, opener = os.pipe()
    try:
        proc = subprocess.Popen(
            [BASH_PROGRAM, "-c", _GATE, BASH_PROGRAM, command, str(gate)],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(gate,),
        )
    except BaseException:
        os.close(opener)
        raise
    finally:
        os.close(gate)
    try:
        watch(proc.pid)  # R-TOOL-17: ended with the program, even one killed by SIGKILL
        os.write(opener, b"\n")
    except OSError:  # the shell is gone already: its status says so
        pass
    finally:
        os.close(opener)
    return proc


def run_bash(
    command: str,
    workdir: str,
    timeout: float,
    cap: int,
    *,
    stop: threading.Event | None = None,
    keep: Callable[[subprocess.Popen[bytes]], None] | None = None,
    grace: float = INTERRUPT_GRACE_SECONDS,
) -> str:
    """The observation of ``bash`` for ``command`` (R-TOOL-5, R-TOOL-6, R-INT-1).

    Args:
        command: the command line, run as ``bash -c command``.
        workdir: the directory it starts in.
        timeout: seconds before its process group is ended.
        cap: the most output bytes shown (R-TOOL-4).
        stop: set from another thread to interrupt the command; already set, nothing starts.
        keep: given the (uncollected) shell when it exited but its group still has a live
            member, so whoever keeps it can end the group later (R-INT-2); without ``keep``
            such processes are left alone.
        grace: seconds between SIGTERM and SIGKILL when the group is ended.

    Returns:
        The output, capped, then ``INTERRUPTED_NOTE``, ``TIMEOUT_NOTE``, ``SIGNAL_NOTE`` or
        ``EXIT_STATUS_NOTE`` when they apply; ``NO_OUTPUT`` in place of an empty output;
        ``START_FAILED`` when bash cannot be started.
    """
    if stop is not None and stop.is_set():  # interrupted before it started (while being approved)
        return NO_OUTPUT + INTERRUPTED_NOTE
    try:
        proc = _start(command, workdir)
    except OSError as exc:
        return START_FAILED.format(reason=os_reason(exc))
    except ValueError as exc:  # an embedded NUL byte
        return START_FAILED.format(reason=exc)
    assert proc.stdout is not None
    kept = False
    try:
        reader = _Reader(proc.stdout.fileno(), cap, proc.pid)
        try:
            ended = _pump(proc, reader, time.monotonic() + timeout, stop)
            if isinstance(ended, str):
                _end(proc, reader, grace)
            elif keep is not None and group_alive(proc.pid):
                keep(proc)
                kept = True
        finally:
            reader.close()
    finally:
        if exit_status(proc) is None:  # an exception (KeyboardInterrupt included) left it running
            signal_group(proc.pid, signal.SIGKILL)
        if not kept:
            reap(proc)
        proc.stdout.close()
    text = reader.out.text() or NO_OUTPUT
    if ended == _INTERRUPTED:
        return text + INTERRUPTED_NOTE
    if ended == _TIMED_OUT:
        return text + TIMEOUT_NOTE.format(seconds=f"{timeout:g}")
    assert isinstance(ended, int)
    if ended < 0:
        return text + SIGNAL_NOTE.format(signal=-ended)
    if ended > 0:
        return text + EXIT_STATUS_NOTE.format(status=ended)
    return text
