"""The fork server itself (``_forkserver.ForkServer`` runs this file as a script, by path).

It imports what it is told to, then forks an intermediate process per request, which forks the
child and reports its pid and exit status (see ``_forkserver``'s docstring). What a child keeps
of the project the server imported is the server's ``keep``: nothing, everything, or what its
copy leaves unchanged. Standard library only: it runs in a template whose own ``conformance/``
may be a toy.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import gc
import json
import os
import runpy
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from types import ModuleType
from typing import Final, Literal

__all__ = ["KEEP_OPTION", "Keep"]

_PROJECT_PACKAGES: Final = ("conformance", "harness9_ref", "tests")
Keep = Literal["none", "unchanged", "all"]
KEEPS: Final[tuple[Keep, ...]] = ("none", "unchanged", "all")
KEEP_OPTION: Final = "--keep="
_MAX_REQUEST: Final = 1 << 20


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
                file = PurePath(*name.split("."), *(["__init__.py"] if path.stem == "__init__" else []))
                files[name] = file if path.stem == "__init__" else file.with_suffix(".py")
                # A module whose file is not where its name says is imported anew by every child.
                identities[name] = _identity(path) if path.as_posix().endswith(files[name].as_posix()) else (-1,)
        for name in files:
            for imported in _imports(name, sys.modules[name]) & files.keys():
                importers.setdefault(imported, set()).add(name)
        return cls(files, identities, importers)

    def stale(self, roots: Mapping[str, Path]) -> set[str]:
        """The modules whose file under ``roots`` (by top package) differs or is not there, and
        their importers."""
        changed = [name for name in self.files if not self._same(name, roots.get(name.partition(".")[0]))]
        stale: set[str] = set()
        while changed:
            name = changed.pop()
            if name not in stale:
                stale.add(name)
                changed.extend(self.importers.get(name, ()))
                # A package imported anew would lack its kept submodules as attributes.
                changed.extend(other for other in self.files if other.startswith(name + "."))
        return stale

    def _same(self, name: str, root: Path | None) -> bool:
        return root is not None and _identity(root / self.files[name]) == self.identities[name]


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


def _run_module(request: dict[str, object], fds: Sequence[int], keep: Keep | _Loaded) -> int:
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


def _serve_one(request: dict[str, object], fds: Sequence[int], keep: Keep | _Loaded) -> None:
    """In the intermediate process: fork the child, report its pid, then its exit status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    status = os.fdopen(fds[3], "w")
    pid = os.fork()
    if pid == 0:
        status.close()
        os._exit(_run_module(request, fds[:3], keep))
    for fd in fds[:3]:
        os.close(fd)
    status.write(f"{pid}\n")
    status.flush()
    _, raw = os.waitpid(pid, 0)
    status.write(f"{os.waitstatus_to_exitcode(raw)}\n")
    status.close()


def _serve(channel: socket.socket, keep: Keep | _Loaded) -> None:
    """Fork an intermediate process per request until the caller closes its end; ``keep`` says
    what a child keeps of the project (for "unchanged", what the server imported of it)."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the intermediates are reaped by the kernel
    while True:
        message, fds, _, _ = socket.recv_fds(channel, _MAX_REQUEST, 4)
        if not message:
            return
        if os.fork() == 0:
            channel.close()
            try:
                _serve_one(json.loads(message), fds, keep)
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)


def _main(argv: Sequence[str]) -> None:
    channel = socket.socket(fileno=int(argv[0]))
    keep = next((keep for keep in KEEPS if argv[1] == KEEP_OPTION + keep), None)
    if keep is None:
        raise SystemExit(f"fork server: expected {KEEP_OPTION}{'|'.join(KEEPS)}, not {argv[1]!r}")
    sys.path[0] = os.getcwd()  # the copy, as for python -m, not this file's folder
    for name in argv[2:]:
        try:
            __import__(name)  # what it imports from outside the project stays
        except Exception:  # only a head start: a child imports it again and reports what fails
            continue
    if keep == "none":
        _forget_project()
    policy = _Loaded.now() if keep == "unchanged" else keep
    gc.collect()
    gc.freeze()
    _serve(channel, policy)


if __name__ == "__main__":
    _main(sys.argv[1:])
