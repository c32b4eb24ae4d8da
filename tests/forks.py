"""Fork servers for the tests that start many short Python processes (``conformance/_forkserver.py``).

A fresh interpreter spends most of a short run importing; a process forked from a server that has
imported those modules already is still a process of its own, on pipes of its own, exactly as a
started one would be. One server per set of modules and per test process, closed when it ends.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.metadata
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Final

from conformance._forkserver import ForkServer, Keep, available

__all__ = ["ROOT", "Stdin", "pytest_modules", "run"]

ROOT: Final = Path(__file__).resolve().parents[1]
Stdin = int | IO[bytes] | None


def pytest_modules() -> tuple[str, ...]:
    """What a child pytest run imports before it collects: pytest, its built-in plugins and the
    installed ones (the ``pytest11`` entry points), for a fork server to preload."""
    from _pytest.config import default_plugins

    installed = (entry.module for entry in importlib.metadata.entry_points(group="pytest11"))
    return ("pytest", *(f"_pytest.{name}" for name in default_plugins), *installed)


@functools.cache
def _server(preload: tuple[str, ...], keep: Keep) -> ForkServer | None:
    if not available():
        return None
    server = ForkServer(ROOT, {**os.environ, "PYTHONPATH": str(ROOT)}, preload, keep=keep)
    atexit.register(server.close)
    return server


def run(
    command: Sequence[str], cwd: Path, env: Mapping[str, str], *, timeout: float, preload: tuple[str, ...],
    keep: Keep = "none", stdin: Stdin = subprocess.DEVNULL, input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """As ``subprocess.run(command, capture_output=True)`` for ``python -m`` commands, forked from
    a server that has imported ``preload`` (and keeps of the project what ``keep`` says);
    started anew where the platform cannot fork one."""
    server = _server(preload, keep)
    if server is None:
        return subprocess.run(
            list(command), capture_output=True, env=dict(env), cwd=cwd,
            stdin=None if input is not None else stdin, input=input, timeout=timeout, check=False,
        )
    if input is not None:
        return server.run(command, cwd, env, timeout, input=input)
    with _descriptor(stdin) as fd:
        return server.run(command, cwd, env, timeout, stdin=fd)


@contextlib.contextmanager
def _descriptor(stdin: Stdin) -> Iterator[int]:
    """The descriptor ``Popen`` would give the child for ``stdin``."""
    if stdin == subprocess.DEVNULL:
        fd = os.open(os.devnull, os.O_RDONLY)
        try:
            yield fd
        finally:
            os.close(fd)
    elif stdin is None:
        yield 0
    elif isinstance(stdin, int):
        yield stdin
    else:
        yield stdin.fileno()
