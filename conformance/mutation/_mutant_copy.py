"""Copies of the project for seeded bugs: a compiled template, and cheap patched copies of it.

A mutant's reference adapter must import the patched code and nothing else, so it runs in a
copy of ``harness9_ref/``, ``conformance/`` and ``fixtures/``. Copying those folders for every
mutant, and compiling them again in every adapter, was most of a catalogue's cost; instead the
project is copied once into a template and compiled there, and each mutant's copy mirrors the
template: a real folder on the way to each edited file, real copies of the edited files, and
symbolic links to everything else, ``__pycache__`` folders included. An edit therefore never
reaches the template, and the links keep the template's bytecode valid (Python checks a source's
time and size, which a link reports from its target). An edited file is given a time a second
before its original's, so that the bytecode compiled from the original, which its folder's linked
``__pycache__`` still holds, is out of date for it and Python compiles the edited source instead.
The adapter runs with ``PYTHONDONTWRITEBYTECODE``, so nothing writes through a link either.
"""

from __future__ import annotations

import compileall
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

__all__ = ["COPIED_DIRS", "Broken", "Edit", "apply", "copy_project", "edited_file", "patched", "patched_copy", "template"]

# What a copy of the project holds: the code the reference adapter runs, and fixtures/ when the
# project has it. The case files, the catalogue and other data stay out: the runner reads them
# from the original.
COPIED_DIRS: Final = ("harness9_ref", "conformance", "fixtures")
_NOT_COPIED: Final = ("__pycache__", "*.pyc", ".*_cache", "cases", "mutants", "known-failures", "adapters")


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``find``, which must occur exactly once, by ``replace`` in ``file`` (from the root)."""

    file: str
    find: str
    replace: str


class Broken(Exception):
    """The edits cannot be applied as written."""


def copy_project(root: Path, target: Path) -> None:
    """Copy the ``COPIED_DIRS`` of ``root`` that exist into ``target``, without bytecode."""
    ignore = shutil.ignore_patterns(*_NOT_COPIED)
    for name in COPIED_DIRS:
        if (root / name).is_dir():
            shutil.copytree(root / name, target / name, ignore=ignore)


@contextlib.contextmanager
def template(root: Path) -> Iterator[Path]:
    """An unmutated copy of ``root`` with its bytecode compiled, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="conformance-template-") as temp:
        target = Path(temp)
        copy_project(root, target)
        compileall.compile_dir(target, quiet=2)  # for this interpreter, the reference adapter's
        yield target


def patched(edit: Edit, text: str) -> str:
    """``text`` with the edit made; Broken unless its find text occurs exactly once."""
    count = text.count(edit.find)
    if count != 1:
        raise Broken(f"{edit.file}: the find text occurs {count} times, expected exactly once")
    if edit.find == edit.replace:
        raise Broken(f"{edit.file}: replace equals find, so nothing changes")
    return text.replace(edit.find, edit.replace)


def edited_file(target: Path, edit: Edit) -> Path:
    """The file ``edit`` names inside ``target``; Broken if it is outside or missing."""
    path = (target / edit.file).resolve()
    if target.resolve() not in path.parents:
        raise Broken(f"{edit.file}: outside the project copy")
    if not path.is_file():
        raise Broken(f"{edit.file}: no such file in the project copy")
    return path


def apply(edits: Sequence[Edit], target: Path) -> None:
    """Make ``edits`` in the copy at ``target``, each file replaced by a new one a second older
    than the one it replaces, so that no bytecode compiled before the edit is taken for it."""
    for edit in edits:
        path = edited_file(target, edit)
        text = patched(edit, path.read_text(encoding="utf-8"))
        before = path.stat()
        path.unlink()  # a new file: never a write through a link
        path.write_text(text, encoding="utf-8")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns - 1_000_000_000))


def _mirror(source: Path, target: Path, real: set[PurePosixPath], here: PurePosixPath) -> None:
    """``target`` as a real folder of links to ``source``'s entries, those in ``real`` mirrored
    or, for files, copied."""
    target.mkdir()
    for entry in os.scandir(source):
        name = here / entry.name
        if name not in real:
            os.symlink(entry.path, os.path.join(target, entry.name))
        elif entry.is_dir(follow_symlinks=False):
            _mirror(Path(entry.path), target / entry.name, real, name)
        else:
            shutil.copy2(entry.path, target / entry.name)


def _real_paths(template_dir: Path, edits: Sequence[Edit]) -> set[PurePosixPath]:
    """The files the edits name and the folders on their way."""
    real: set[PurePosixPath] = set()
    for edit in edits:
        file = PurePosixPath(os.path.normpath(edit.file))
        if file.is_absolute() or ".." in file.parts:
            continue  # ``apply`` says why it cannot be edited
        real.add(file)
        for folder in file.parents:
            if folder != PurePosixPath(".") and (template_dir / folder).is_dir():
                real.add(folder)
    return real


@contextlib.contextmanager
def patched_copy(template_dir: Path, edits: Sequence[Edit]) -> Iterator[Path]:
    """A copy of ``template_dir`` with ``edits`` made (Broken if they cannot be), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="conformance-mutant-") as temp:
        target = Path(temp)
        real = _real_paths(template_dir, edits)
        for name in COPIED_DIRS:
            if (template_dir / name).is_dir():
                if PurePosixPath(name) in real:
                    _mirror(template_dir / name, target / name, real, PurePosixPath(name))
                else:
                    (target / name).symlink_to(template_dir / name)
        apply(edits, target)
        yield target
