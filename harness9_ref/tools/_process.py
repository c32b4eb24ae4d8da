"""Ending a command's process group: SIGTERM, a grace, then SIGKILL (SPEC R-INT-1, R-INT-2, R-TOOL-6, R-TOOL-17).

A command runs as the leader of its own process group (R-TOOL-5), so one ``killpg`` reaches the
shell, its children and its grandchildren alike. SIGTERM comes first so that a program can clean
up (remove a lock file, flush a log); SIGKILL follows after ``INTERRUPT_GRACE_SECONDS`` only for a
group that still has a live member, so an interrupt never takes longer than the grace, whatever
the command does with SIGTERM.

A *zombie* (a process that has ended and waits for its parent to collect its status) still
counts as a member for ``killpg(pgid, 0)``, but it runs nothing and holds no pipe. Orphaned
grandchildren may stay zombies for a second or two where the init process collects them slowly
(containers), so on Linux ``group_alive`` reads ``/proc`` to tell them apart; without ``/proc``
every member counts, which at worst spends the whole grace and sends a needless SIGKILL.

Process-group ids are process ids, and the kernel may give a free one to a new process. A group
is never signalled after it was seen empty, and the registry keeps the zombie of a shell whose
group still has members (``exit_status`` reads its status without collecting it), which keeps
the group's id reserved until ``close()`` (R-INT-2).

A program killed by SIGKILL runs no ``close()``, so a *watchdog* ends its groups (R-TOOL-17):
this file run as a script by the same Python (``-I -S``: standard library only, nothing of the
user's environment), in a session of its own (no terminal signal reaches it) and at ``/``, one
per program, started with the first command. It reads ``+<pgid>`` and ``-<pgid>`` lines from
a pipe whose only writer is the program: ``watch`` before the shell runs anything of the
command (``_bash.py`` holds it at a gate until then), ``reap`` before the shell that reserves
the group's id is collected, so the watchdog never signals a group whose id may have been
given to another. When the program ends in any
way, the kernel closes the pipe; at its end the watchdog ends the groups still listed as
R-INT-2 does, and exits. ``PR_SET_PDEATHSIG`` would reach the shell only, not the jobs it
starts, and fires when the thread that started it ends, so it is not used.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Final

__all__ = ["INTERRUPT_GRACE_SECONDS"]

INTERRUPT_GRACE_SECONDS: Final = 1.0  # R-INT-1: SIGTERM, then SIGKILL this much later
_POLL_SECONDS: Final = 0.02  # how often a group is looked at during the grace
_AFTER_KILL_SECONDS: Final = 0.5  # the most spent waiting for SIGKILLed processes to exit
_PROC: Final = "/proc"


@functools.cache
def _proc_is_ours() -> bool:
    """True when ``/proc`` shows this process's own pid namespace (not absent, not another's)."""
    return os.path.isdir(f"{_PROC}/{os.getpid()}")


def _live_member(pgid: int) -> bool:
    """True when ``/proc`` lists a process of group ``pgid`` that is not a zombie."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"{_PROC}/{name}/stat", "rb") as stat:
                data = stat.read()
        except OSError:  # it ended meanwhile, or is not ours to read
            continue
        fields = data[data.rfind(b")") + 2 :].split()  # the name in parentheses may hold spaces
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


def group_alive(pgid: int) -> bool:
    """True while a process of group ``pgid`` has not ended (zombies do not count where ``/proc`` says)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member that changed its user is still a member
        return True
    return _live_member(pgid) if _proc_is_ours() else True


def signal_group(pgid: int, signum: int) -> None:
    """Send ``signum`` to group ``pgid``; a group that is gone or not ours is left alone."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def end_groups(pgids: Sequence[int], wait: Callable[[float], None], grace: float = INTERRUPT_GRACE_SECONDS) -> None:
    """SIGTERM to every group, then SIGKILL to each that still has a live member ``grace`` s later (R-INT-1).

    All groups share one grace, so closing a registry with many groups takes one grace at most.
    Returns as soon as every group is empty, or ``_AFTER_KILL_SECONDS`` after SIGKILL (a process
    stuck in the kernel, in uninterruptible I/O, dies only when that I/O ends).

    Args:
        pgids: the process groups to end.
        wait: called with the most seconds to spend before the groups are looked at again;
            the caller reads a pipe or collects a shell meanwhile (it may return early).
        grace: seconds between SIGTERM and SIGKILL.
    """
    for pgid in pgids:
        signal_group(pgid, signal.SIGTERM)
    alive = _wait_empty(pgids, wait, grace)
    for pgid in alive:
        signal_group(pgid, signal.SIGKILL)
    if alive:  # SIGKILL is not instant on a busy machine: let the killed exit before returning
        _wait_empty(alive, wait, _AFTER_KILL_SECONDS)


def _wait_empty(pgids: Sequence[int], wait: Callable[[float], None], seconds: float) -> list[int]:
    """Wait up to ``seconds`` for the groups to empty; those that still have a live member."""
    give_up = time.monotonic() + seconds
    while True:
        alive = [pgid for pgid in pgids if group_alive(pgid)]
        left = give_up - time.monotonic()
        if not alive or left <= 0:
            return alive
        wait(min(left, _POLL_SECONDS))


def exit_status(proc: subprocess.Popen[bytes]) -> int | None:
    """The shell's status as ``Popen.returncode`` gives it (``-n`` for signal n), None while it runs.

    Where ``os.waitid`` exists and ``/proc`` tells zombies apart, the ended shell is left a zombie
    (``WNOWAIT``): it keeps its group's id from being given to another process while background
    jobs of the command still run. The caller collects it with ``proc.wait()`` once the group is
    empty or ended. Elsewhere the shell is collected at once (a zombie would count as alive).
    """
    if proc.returncode is not None or not hasattr(os, "waitid") or not _proc_is_ours():
        return proc.poll()
    try:
        result = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # collected elsewhere; Popen knows the status
        return proc.poll()
    if result is None or result.si_pid == 0:  # some systems answer "nothing yet" with pid 0
        return None
    return result.si_status if result.si_code == os.CLD_EXITED else -result.si_status


class _Watchdog:
    """The program's one watchdog process, the pipe it reads and the groups listed with it (R-TOOL-17)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.listed: set[int] = set()

    def watch(self, pgid: int) -> None:
        """List ``pgid``, starting a watchdog when none runs: a first one, or another after one
        was killed, which is told every group still listed. Without one (no Python to start, a
        package not on disk) commands run unwatched."""
        with self.lock:
            self.listed.add(pgid)
            if self.proc is None or self.proc.poll() is not None:
                self.proc = _start_watchdog()
                self._write(b"".join(b"+%d\n" % listed for listed in sorted(self.listed)))
            else:
                self._write(b"+%d\n" % pgid)

    def unwatch(self, pgid: int) -> None:
        with self.lock:
            self.listed.discard(pgid)
            if self.proc is not None and self.proc.poll() is None:
                self._write(b"-%d\n" % pgid)

    def _write(self, data: bytes) -> None:
        if self.proc is None or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except OSError:  # it was killed: the next group starts another
            self.proc = None


def _start_watchdog() -> subprocess.Popen[bytes] | None:
    if not sys.executable or not os.path.isfile(__file__):
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )
    except OSError:
        return None


_WATCHDOG: Final = _Watchdog()


def watch(pgid: int) -> None:
    """Have the watchdog end group ``pgid`` if the program ends before ``reap`` (R-TOOL-17)."""
    _WATCHDOG.watch(pgid)


def reap(proc: subprocess.Popen[bytes]) -> None:
    """Collect the shell of a watched group once its group is empty or ended (its id is then free)."""
    _WATCHDOG.unwatch(proc.pid)
    proc.wait()


def watchdog_pid() -> int | None:
    """The pid of the watchdog running now, if any (for tests)."""
    proc = _WATCHDOG.proc
    return None if proc is None or proc.poll() is not None else proc.pid


def watch_pipe(lines: Iterable[bytes]) -> None:
    """The watchdog's life: follow the list of groups in ``lines`` (its standard input); at
    their end, end the groups still listed (R-TOOL-17). A line that is not ``+<n>`` or ``-<n>``
    is ignored."""
    groups: set[int] = set()
    for line in lines:
        try:
            pgid = int(line[1:])
        except ValueError:
            continue
        if line.startswith(b"+"):
            groups.add(pgid)
        elif line.startswith(b"-"):
            groups.discard(pgid)
    end_groups(sorted(groups), time.sleep)


if __name__ == "__main__":  # the watchdog (R-TOOL-17)
    watch_pipe(sys.stdin.buffer)
