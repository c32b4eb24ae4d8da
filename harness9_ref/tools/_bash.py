"""The ``bash`` tool (SPEC R-TOOL-1, R-TOOL-5 … R-TOOL-8).

``bash -c <command>`` runs in a new session (so a new process group whose id is the shell's
pid), in the working directory, with standard input from ``/dev/null`` and standard error
merged into standard output, so the output keeps the order in which it was written. The pipe is
read with ``select`` against a deadline; on the deadline the whole process group is killed with
SIGKILL, grandchildren included (R-TOOL-6).

The command is over when the shell exits: what it wrote is read, and processes it left running
in the background keep running (they may hold the pipe open; we stop reading it). This is not a
sandbox: the working directory is only where the command starts (R-TOOL-8). POSIX only.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from typing import Final

from ..schema import ToolDefinition
from ._output import capped_text

__all__ = [
    "BASH_PROGRAM",
    "BASH_TOOL",
    "DEFAULT_BASH_TIMEOUT",
    "EXIT_STATUS_NOTE",
    "NO_OUTPUT",
    "SIGNAL_NOTE",
    "START_FAILED",
    "TIMEOUT_NOTE",
    "run_bash",
]

# R-TOOL-1: the definition, exactly as SPEC section 20 prints it.
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
START_FAILED: Final = "error: cannot run bash: {reason}"  # R-TOOL-7

_READ_SIZE: Final = 65536
_POLL_SECONDS: Final = 0.05  # how often the shell's exit is checked while its pipe stays open


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


def _read_once(fd: int, out: _Output) -> bool:
    """Read what is there; False at end of file."""
    try:
        data = os.read(fd, _READ_SIZE)
    except BlockingIOError:
        return True
    if not data:
        return False
    out.add(data)
    return True


def _drain(fd: int, out: _Output, deadline: float) -> None:
    """Read what is already in the pipe, without waiting for more."""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline and selector.select(0) and _read_once(fd, out):
            pass


def _pump(proc: subprocess.Popen[bytes], fd: int, out: _Output, timeout: float) -> bool:
    """Collect the output until the shell exits; True when the deadline came first."""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            if selector.select(min(remaining, _POLL_SECONDS)) and not _read_once(fd, out):
                break  # end of file: every writer has closed the pipe
            if proc.poll() is not None:  # the shell exited; background jobs may hold the pipe
                _drain(fd, out, deadline)
                return False
    try:
        proc.wait(max(deadline - time.monotonic(), 0))
    except subprocess.TimeoutExpired:  # the shell closed its output but goes on running
        return True
    return False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def run_bash(command: str, workdir: str, timeout: float, cap: int) -> str:
    """The observation of ``bash`` for ``command`` (R-TOOL-5, R-TOOL-6).

    Args:
        command: the command line, run as ``bash -c command``.
        workdir: the directory it starts in.
        timeout: seconds before its process group is killed.
        cap: the most output bytes shown (R-TOOL-4).

    Returns:
        The output, capped, then ``TIMEOUT_NOTE``, ``SIGNAL_NOTE`` or ``EXIT_STATUS_NOTE`` when
        they apply; ``NO_OUTPUT`` in place of an empty output; ``START_FAILED`` when bash
        cannot be started.
    """
    try:
        proc = subprocess.Popen(
            [BASH_PROGRAM, "-c", command],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return START_FAILED.format(reason=exc.strerror or exc)
    except ValueError as exc:  # an embedded NUL byte
        return START_FAILED.format(reason=exc)
    assert proc.stdout is not None
    out = _Output(cap)
    try:
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        timed_out = _pump(proc, fd, out, timeout)
        if timed_out:
            _kill_group(proc)
            _drain(fd, out, time.monotonic() + _POLL_SECONDS)
    finally:
        if proc.poll() is None:  # an exception (KeyboardInterrupt included) left it running
            _kill_group(proc)
        proc.stdout.close()
    text = out.text() or NO_OUTPUT
    if timed_out:
        return text + TIMEOUT_NOTE.format(seconds=f"{timeout:g}")
    status = proc.returncode
    if status < 0:
        return text + SIGNAL_NOTE.format(signal=-status)
    if status > 0:
        return text + EXIT_STATUS_NOTE.format(status=status)
    return text
