"""``python -m`` processes forked from one that has already imported what they need.

The seeded-bug catalogue starts one reference adapter per mutant, each in its own patched copy
of the project, and the judging of the pending requirements' seeded bugs one pytest per bug.
Most of such a start is the interpreter importing the same standard-library and third-party
modules every time. A fork server (this file run as a script, in an unpatched copy) imports
the modules it is told to once, forgets the project's own, and then forks a process per
request: the child imports the project afresh from the copy it is given and runs ``python -m
<module> <args>`` there on the pipes the caller handed over, exactly as a process started anew
would. A forked process is a process of its own, so a mutant that crashes or
hangs takes only itself down. A server told to keep the project (``keep="all"``) keeps what it
imported of it too: the command-line tests start the unpatched command that way, paying for its
imports once. A server told to keep what is unchanged (``keep="unchanged"``, the mutants'
adapters) lets each child forget only the project modules whose file in the child's copy is not
the file the server imported (a mutant's edited file), and every module that imports one of
those, directly or through others, anywhere in its source; the rest stays, and the packages kept
look for their submodules in the child's copy. Once its imports are done the server freezes what it holds (``gc.freeze``): a
child's garbage collections then leave those objects alone instead of walking, and so copying,
every page the server filled, which otherwise costs a short child more than its imports.

A request is one SOCK_SEQPACKET message (the copy, the environment and the command line as
JSON) carrying four descriptors: the child's stdin (a pipe, or the caller's own file or
terminal), stdout and stderr, and a status pipe. The child ends as an interpreter does: exit
functions run and non-daemon threads are joined before it exits. An
intermediate process forks the child, writes its pid to the status pipe, waits for it and writes
its exit status, so the caller can kill it and learn how it ended without being its parent.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import gc
import json
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from types import ModuleType
from typing import IO, Final, Literal

__all__ = ["ForkServer", "Forked", "Keep", "available", "fork_server"]

_PROJECT_PACKAGES: Final = ("conformance", "harness9_ref", "tests")
Keep = Literal["none", "unchanged", "all"]
_KEEP_OPTION: Final = "--keep="
_MAX_REQUEST: Final = 1 << 20


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
            [sys.executable, __file__, str(theirs.fileno()), _KEEP_OPTION + keep, *preload],
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


def _python_path(env: Mapping[str, str]) -> list[str]:
    """The folders ``PYTHONPATH`` in ``env`` puts on ``sys.path``, relative ones from the current folder."""
    return [os.path.abspath(part) for part in env.get("PYTHONPATH", "").split(os.pathsep) if part]


# In the server: what its own PYTHONPATH put on sys.path, resolved where it started, so that a
# child's sys.path holds its own PYTHONPATH instead.
_SERVER_PATH: Final = _python_path(os.environ)


def _forget_project() -> None:
    for name in list(sys.modules):
        if name.partition(".")[0] in _PROJECT_PACKAGES:
            del sys.modules[name]


@dataclass(frozen=True)
class _Loaded:
    """The project modules a server imported: where each one's file lies below its root, what
    that file was, and which of them import each one."""

    files: dict[str, PurePath]
    identities: dict[str, tuple[int, ...]]
    importers: dict[str, set[str]]

    @classmethod
    def now(cls) -> _Loaded:
        files: dict[str, PurePath] = {}
        identities: dict[str, tuple[int, ...]] = {}
        importers: dict[str, set[str]] = {}
        for name, module in list(sys.modules.items()):
            origin = getattr(module, "__file__", None)
            if name.partition(".")[0] in _PROJECT_PACKAGES and origin:
                path = Path(origin)
                files[name] = path.relative_to(path.parents[name.count(".") + (path.stem == "__init__")])
                identities[name] = _identity(path)
        for name in files:
            for imported in _imports(name, sys.modules[name]) & files.keys():
                importers.setdefault(imported, set()).add(name)
        return cls(files, identities, importers)

    def stale(self, roots: Mapping[str, Path]) -> set[str]:
        """The modules whose file under ``roots`` (by top package) differs, and their importers."""
        changed = [
            name for name, file in self.files.items()
            if _identity(roots.get(name.partition(".")[0], Path("/nonexistent")) / file) != self.identities[name]
        ]
        stale: set[str] = set()
        while changed:
            name = changed.pop()
            if name not in stale:
                stale.add(name)
                changed.extend(self.importers.get(name, ()))
                # A package imported anew would lack its kept submodules as attributes.
                changed.extend(other for other in self.files if other.startswith(name + "."))
        return stale


def _identity(path: Path) -> tuple[int, ...]:
    """Which file ``path`` is, as of now (links followed): a copy's link to a template's file is
    that file, an edited file is another one."""
    try:
        found = path.stat()
    except OSError:
        return ()
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def _data_edited(package: Path) -> bool:
    """Whether ``package`` in a child's copy holds a file of its own that is not Python source:
    a mutant's copy links every folder and file it leaves alone, so such a file is an edited
    one (a folder that is not such a copy counts as edited throughout)."""
    if package.is_symlink():
        return False
    for folder, _, files in os.walk(package):  # linked folders are not entered
        for name in files:
            if not name.endswith(".py") and not os.path.islink(os.path.join(folder, name)):
                return True
    return False


def _imports(name: str, module: ModuleType) -> set[str]:
    """Every module ``module``'s source names in an import statement, wherever the statement is
    (a function's imports run later, in the child), with each name a ``from`` import takes as if
    it were a submodule."""
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    package = name if hasattr(module, "__path__") else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            base = ".".join([*parts, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _forget_stale(loaded: _Loaded, search_path: Sequence[str]) -> None:
    """In a child of a ``keep="unchanged"`` server: forget the stale modules, and point the kept
    packages at the child's copy so that what is imported anew comes from there."""
    roots: dict[str, Path] = {}
    for entry in search_path:  # where the child imports each package from: the first folder holding it
        for top in _PROJECT_PACKAGES:
            if top not in roots and (Path(entry) / top / "__init__.py").is_file():
                roots[top] = Path(entry)
    if any(_data_edited(roots[top] / top) for top in roots):
        _forget_project()  # a kept module would read the server's copy of that file
        return
    for name in loaded.stale(roots):
        del sys.modules[name]
        parent, _, child = name.rpartition(".")
        if parent in sys.modules and child in vars(sys.modules[parent]):
            delattr(sys.modules[parent], child)
    for name, module in sys.modules.items():
        top = name.partition(".")[0]
        if top in roots and name in loaded.files and hasattr(module, "__path__"):
            folder = str(roots[top] / loaded.files[name].parent)
            module.__path__ = [folder]
            if module.__spec__ is not None:
                module.__spec__.submodule_search_locations = [folder]


def _run_module(request: dict[str, object], fds: Sequence[int]) -> int:
    """In the forked child: take the pipes, move to the copy and run ``python -m`` there."""
    for fd, target in zip(fds[:3], (0, 1, 2), strict=True):
        os.dup2(fd, target)
    for fd in fds:
        os.close(fd)
    # New stream objects, as at an interpreter's start: the old ones describe the old files.
    sys.stdin = open(0, encoding=sys.stdin.encoding, errors=sys.stdin.errors, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding=sys.stderr.encoding, errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115
    cwd, env, argv = str(request["cwd"]), request["env"], request["argv"]
    assert isinstance(env, dict) and isinstance(argv, list)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    extra = _python_path(env)
    rest = [path for path in sys.path[1:] if path not in _SERVER_PATH]
    sys.path[:] = [cwd, *extra, *(path for path in rest if path not in extra)]
    keep = request["keep"]
    if keep == "none":
        _forget_project()
    elif isinstance(keep, _Loaded):
        _forget_stale(keep, sys.path)
    sys.argv = ["-m", *argv[1:]]
    try:
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = _exit_status(exc)
    except BaseException:
        traceback.print_exc()
        code = 1
    code = _shut_down(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return code


def _exit_status(exc: SystemExit) -> int:
    """The status ``exc`` ends an interpreter with; a message is printed, as Python does."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


def _shut_down(code: int) -> int:
    """What an interpreter does before it exits: join non-daemon threads, run exit functions."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    try:
        atexit._run_exitfuncs()
    except SystemExit as exc:
        return _exit_status(exc)
    return code


def _serve_one(request: dict[str, object], fds: Sequence[int]) -> None:
    """In the intermediate process: fork the child, report its pid, then its exit status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    status = os.fdopen(fds[3], "w")
    pid = os.fork()
    if pid == 0:
        status.close()
        os._exit(_run_module(request, fds[:3]))
    for fd in fds[:3]:
        os.close(fd)
    status.write(f"{pid}\n")
    status.flush()
    _, raw = os.waitpid(pid, 0)
    status.write(f"{os.waitstatus_to_exitcode(raw)}\n")
    status.close()


def _serve(channel: socket.socket, keep: Keep | _Loaded) -> None:
    """Fork an intermediate process per request until the caller closes its end."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the intermediates are reaped by the kernel
    while True:
        message, fds, _, _ = socket.recv_fds(channel, _MAX_REQUEST, 4)
        if not message:
            return
        if os.fork() == 0:
            channel.close()
            try:
                _serve_one({**json.loads(message), "keep": keep}, fds)
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)


def _main(argv: Sequence[str]) -> None:
    channel = socket.socket(fileno=int(argv[0]))
    keep = argv[1].removeprefix(_KEEP_OPTION)
    sys.path[0] = os.getcwd()  # the copy, as for python -m, not this file's folder
    for name in argv[2:]:
        try:
            __import__(name)  # what it imports from outside the project stays
        except Exception:  # only a head start: a child imports it again and reports what fails
            continue
    if keep == "none":
        _forget_project()
    loaded = _Loaded.now() if keep == "unchanged" else None
    gc.collect()
    gc.freeze()
    _serve(channel, loaded or keep)  # type: ignore[arg-type]


if __name__ == "__main__":
    _main(sys.argv[1:])
