"""Adapter processes forked from one that has already imported the standard library.

The seeded-bug catalogue starts one reference adapter per mutant, each in its own patched copy
of the project. Most of such a start is the interpreter importing the standard library modules
that ``harness9_ref`` uses, the same for every mutant. The fork server (``python -m
conformance._forkserver``, run in the unpatched copy) imports the reference adapter once, forgets
the project's own modules, and then forks an adapter per request: the child imports the project
afresh from the copy it is given and speaks the protocol on the pipes the runner handed over,
exactly as a started adapter would. A forked adapter is a process of its own, so a mutant that
crashes or hangs takes only itself down.

A request is one SOCK_SEQPACKET message (its copy, environment and command-line arguments as
JSON) carrying four descriptors: the child's stdin, stdout and stderr, and a status pipe. An
intermediate process forks the adapter, writes the adapter's pid to the status pipe, waits for
it and writes its exit status, so the runner can kill the adapter and learn how it ended
without being its parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Final

__all__ = ["ForkServer", "Forked", "available"]

_ADAPTER: Final = "conformance.reference_adapter"
_PROJECT_PACKAGES: Final = ("conformance", "harness9_ref")
_MAX_REQUEST: Final = 1 << 20


def available() -> bool:
    """Whether this platform can pass descriptors between processes and fork (Linux, macOS)."""
    return hasattr(socket, "send_fds") and hasattr(os, "fork") and hasattr(socket, "SOCK_SEQPACKET")


class Forked:
    """A forked adapter, seen through the part of ``subprocess.Popen`` that the runner uses."""

    def __init__(self, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes], status: IO[bytes]) -> None:
        # ``status`` is unbuffered, so select() on it sees every line not yet read.
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self._status = status
        self.pid = int(status.readline() or b"0")  # 0: the fork server is gone
        self.returncode: int | None = None if self.pid else -1

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            ready, _, _ = select.select([self._status], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired(_ADAPTER, timeout or 0.0)
            line = self._status.readline()
            self.returncode = int(line) if line.strip() else -1
            self._status.close()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None and not select.select([self._status], [], [], 0)[0]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


class ForkServer:
    """The fork server for adapters in copies of ``template``; ``spawn`` suits ``Adapter(spawn=…)``."""

    def __init__(self, template: Path, env: Mapping[str, str]) -> None:
        self._socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "conformance._forkserver", str(theirs.fileno())],
            cwd=template, env=dict(env), stdin=subprocess.DEVNULL, pass_fds=[theirs.fileno()],
        )
        theirs.close()

    def spawn(self, command: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None) -> Forked:
        """Fork an adapter in ``cwd`` (a copy of the project); ``command`` is the usual one, unused."""
        ends = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, status
        theirs = [ends[0][0], ends[1][1], ends[2][1], ends[3][1]]
        request = {"cwd": str(cwd or Path.cwd()), "env": dict(env if env is not None else os.environ)}
        try:
            socket.send_fds(self._socket, [json.dumps(request).encode()], theirs)
        finally:
            for fd in theirs:
                os.close(fd)
        return Forked(
            os.fdopen(ends[0][1], "wb"), os.fdopen(ends[1][0], "rb"), os.fdopen(ends[2][0], "rb"),
            os.fdopen(ends[3][0], "rb", buffering=0),  # unbuffered: select() sees what is unread
        )

    def close(self) -> None:
        self._socket.close()  # the server reads end of file and exits
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _forget_project() -> None:
    for name in list(sys.modules):
        if name.partition(".")[0] in _PROJECT_PACKAGES and name != __name__:
            del sys.modules[name]


def _run_adapter(request: dict[str, object], fds: Sequence[int]) -> int:
    """In the adapter process: take the pipes, move to the copy and run the adapter's loop."""
    for fd, target in zip(fds[:3], (0, 1, 2), strict=True):
        os.dup2(fd, target)
    for fd in fds:
        os.close(fd)
    # New stream objects, as at an interpreter's start: the old ones describe the old files.
    sys.stdin = open(0, encoding=sys.stdin.encoding, errors=sys.stdin.errors, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding=sys.stderr.encoding, errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115
    cwd = str(request["cwd"])
    os.chdir(cwd)
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)
    sys.path[0] = cwd
    _forget_project()
    try:
        adapter = __import__(_ADAPTER, fromlist=["main"])
        code = adapter.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return int(code or 0)


def _serve_one(request: dict[str, object], fds: Sequence[int]) -> None:
    """In the intermediate process: fork the adapter, report its pid, then its exit status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    status = os.fdopen(fds[3], "w")
    pid = os.fork()
    if pid == 0:
        status.close()
        os._exit(_run_adapter(request, fds[:3]))
    for fd in fds[:3]:
        os.close(fd)
    status.write(f"{pid}\n")
    status.flush()
    _, raw = os.waitpid(pid, 0)
    status.write(f"{os.waitstatus_to_exitcode(raw)}\n")
    status.close()


def _serve(channel: socket.socket) -> None:
    """Fork an intermediate process per request until the runner closes its end."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the intermediates are reaped by the kernel
    while True:
        message, fds, _, _ = socket.recv_fds(channel, _MAX_REQUEST, 4)
        if not message:
            return
        if os.fork() == 0:
            channel.close()
            try:
                _serve_one(json.loads(message), fds)
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)


def _main(argv: Sequence[str]) -> None:
    channel = socket.socket(fileno=int(argv[0]))
    sys.path[0] = os.getcwd()
    __import__(_ADAPTER)  # what it imports from the standard library stays
    _forget_project()
    _serve(channel)


@contextlib.contextmanager
def fork_server(template: Path, env: Mapping[str, str]) -> Iterator[ForkServer | None]:
    """A fork server where the platform has one, else None (adapters are then started anew)."""
    if not available():
        yield None
        return
    with ForkServer(template, env) as server:
        yield server


if __name__ == "__main__":
    _main(sys.argv[1:])
