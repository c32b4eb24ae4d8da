"""``python -m`` processes forked from one that has already imported what they need.

The seeded-bug catalogue starts one reference adapter per mutant, each in its own patched copy
of the project, and the judging of the pending requirements' seeded bugs one pytest per bug.
Most of such a start is the interpreter importing the same standard-library and third-party
modules every time. A fork server (``_forkserving.py`` run as a script, in an unpatched copy)
imports the modules it is told to once, forgets the project's own, and then forks a process per
request: the child imports the project afresh from the copy it is given and runs ``python -m
<module> <args>`` there on the pipes the caller handed over, exactly as a process started anew
would. A forked process is a process of its own, so a mutant that crashes or
hangs takes only itself down. A server told to keep the project (``keep="all"``) keeps what it
imported of it too: the command-line tests start the unpatched command that way, paying for its
imports once. A server told to keep what is unchanged (``keep="unchanged"``, the mutants'
adapters) lets each child forget only the project modules whose file in the child's copy is not
the file the server imported (a mutant's edited file), and every module that imports one of
those, directly or through others, anywhere in its source; the rest stays, and the packages
kept look for their submodules in the child's copy.

Once its imports are done the server freezes what it holds (``gc.freeze``): a child's garbage
collections then leave those objects alone instead of walking, and so copying, every page the
server filled, which otherwise costs a short child more than its imports.

A request is one SOCK_SEQPACKET message (the copy, the environment and the command line as
JSON) carrying four descriptors: the child's stdin (a pipe, or the caller's own file or
terminal), stdout and stderr, and a status pipe. The child ends as an interpreter does: exit
functions run and non-daemon threads are joined before it exits. An
intermediate process forks the child, writes its pid to the status pipe, waits for it and writes
its exit status, so the caller can kill it and learn how it ended without being its parent.
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
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from . import _forkserving
from ._forkserving import KEEP_OPTION, Keep

__all__ = ["ForkServer", "Forked", "Keep", "available", "fork_server"]


def available() -> bool:
    """Whether this platform can pass descriptors between processes and fork (Linux, macOS)."""
    return hasattr(socket, "send_fds") and hasattr(os, "fork") and hasattr(socket, "SOCK_SEQPACKET")


class Forked:
    """A forked process, seen through the part of ``subprocess.Popen`` that callers use."""

    def __init__(self, stdin: IO[bytes] | None, stdout: IO[bytes], stderr: IO[bytes], status: IO[bytes]) -> None:
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self._status = status  # unbuffered, so select() on it sees every line not yet read
        self.pid = int(status.readline() or b"0")  # 0: the fork server is gone
        self.returncode: int | None = None if self.pid else -1

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            ready, _, _ = select.select([self._status], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired("forked process", timeout or 0.0)
            line = self._status.readline()
            self.returncode = int(line) if line.strip() else -1
            self._status.close()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None and not select.select([self._status], [], [], 0)[0]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


class ForkServer:
    """A fork server run in ``template`` that has imported ``preload`` (module names); its
    children import the project afresh, or keep what ``keep`` says (see the module's docstring)."""

    def __init__(
        self, template: Path, env: Mapping[str, str], preload: Sequence[str], *, keep: Keep = "none"
    ) -> None:
        self._socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._process = subprocess.Popen(  # by path: the template's own conformance/ may be a toy
            [sys.executable, _forkserving.__file__, str(theirs.fileno()), KEEP_OPTION + keep, *preload],
            cwd=template, env=dict(env), stdin=subprocess.DEVNULL, pass_fds=[theirs.fileno()],
        )
        theirs.close()

    def spawn(
        self, command: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None, stdin: int | None = None
    ) -> Forked:
        """Fork ``command`` (``python -m module args…``) in ``cwd``: a drop-in for ``Popen`` with
        pipes; ``stdin``, a descriptor, is given to the child instead of a pipe (``Forked.stdin`` is
        then None)."""
        if len(command) < 3 or command[1] != "-m":
            raise ValueError(f"a fork server runs python -m commands only, not {list(command)}")
        ends = [os.pipe() if n or stdin is None else (os.dup(stdin), -1) for n in range(4)]  # in, out, err, status
        theirs = [ends[0][0], ends[1][1], ends[2][1], ends[3][1]]
        request = {
            "cwd": str(cwd or Path.cwd()), "env": dict(env if env is not None else os.environ), "argv": list(command[2:])
        }
        try:
            socket.send_fds(self._socket, [json.dumps(request).encode()], theirs)
        finally:
            for fd in theirs:
                os.close(fd)
        return Forked(
            None if stdin is not None else os.fdopen(ends[0][1], "wb"), os.fdopen(ends[1][0], "rb"),
            os.fdopen(ends[2][0], "rb"), os.fdopen(ends[3][0], "rb", buffering=0),
        )

    def run(
        self, command: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float,
        *, input: bytes = b"", stdin: int | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """As ``subprocess.run(command, capture_output=True, input=input)``, forked; killed after
        ``timeout``. ``stdin``, a descriptor, replaces the pipe that ``input`` is written to."""
        child = self.spawn(command, cwd, env, stdin)
        out: dict[str, bytes] = {}
        readers = [
            threading.Thread(target=lambda name=name, stream=stream: out.__setitem__(name, stream.read()), daemon=True)
            for name, stream in (("stdout", child.stdout), ("stderr", child.stderr))
        ]
        if child.stdin is not None:
            readers.append(threading.Thread(target=_write_all, args=(child.stdin, input), daemon=True))
        for reader in readers:
            reader.start()
        try:
            code = child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            raise
        finally:
            for reader in readers:
                reader.join(timeout)
            child.stdout.close()
            child.stderr.close()
        return subprocess.CompletedProcess(list(command), code, out.get("stdout", b""), out.get("stderr", b""))

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


def _write_all(stream: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError), stream:  # a child that stops reading has its reasons
        stream.write(data)


@contextlib.contextmanager
def fork_server(
    template: Path, env: Mapping[str, str], preload: Sequence[str], *, keep: Keep = "none"
) -> Iterator[ForkServer | None]:
    """A fork server where the platform has one, else None (processes are then started anew)."""
    try:
        server = ForkServer(template, env, preload, keep=keep) if available() else None
    except OSError:  # a platform without SOCK_SEQPACKET pairs of Unix sockets (macOS)
        server = None
    if server is None:
        yield None
        return
    with server:
        yield server
