"""Project instructions: the system prompt built from the built-in prompt and AGENTS.md files
(SPEC R-INST-1 … R-INST-4).

The system prompt is never stored (R-ENG-3), which is what lets it follow the files: the
builder reads them again at every call, so an edit between two prompts applies from the next
one. Each file is bounded on its own rather than all of them together, so a long file at the
root never pushes out the instructions nearest to the work. A file that cannot be used is a
warning and is skipped (or cut), never a failed run. The warnings are data here; the program
words them in the user's language (``harness9_ref.text``) and shows each once per change.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from .._harness9_error import os_reason
from ._seams import DEFAULT_SYSTEM_PROMPT

__all__ = [
    "INSTRUCTIONS_CUT_NOTE",
    "INSTRUCTIONS_FILE",
    "INSTRUCTIONS_MAX_BYTES",
    "INSTRUCTIONS_PREAMBLE",
    "InstructionFile",
    "InstructionWarning",
    "Instructions",
    "ProjectInstructions",
    "WarningKind",
    "assemble_instructions",
    "find_instruction_files",
    "instruction_from_bytes",
    "load_instructions",
    "read_instruction_file",
]

INSTRUCTIONS_FILE: Final = "AGENTS.md"  # R-INST-1
INSTRUCTIONS_MAX_BYTES: Final = 32768  # R-INST-2: of each file
REPOSITORY_MARKER: Final = ".git"  # R-INST-1: a folder, or the file of a worktree or submodule
_LONGEST_CHARACTER: Final = 4  # bytes of one UTF-8 character: the cut backs up at most 3 bytes

INSTRUCTIONS_PREAMBLE: Final = (
    "# Project instructions\n"
    "\n"
    "The user's instructions for you, from AGENTS.md files. Each section below is one file, headed by "
    "its path: the user's own, from the agent's home folder, first when there is one, then the project's, "
    "from its root down to the working directory. Where two disagree, the later one, nearer the working "
    "directory, wins; what the user asks in the conversation wins over all of them."
)
"""Between the base prompt and the files' sections (R-INST-3)."""

INSTRUCTIONS_CUT_NOTE: Final = (
    "[only the first {used} of this file's {size} bytes are included; read the file for the rest]"
)
"""After the text of a file that was cut (R-INST-3), so the model knows there is more to read."""

SECTION_HEADING: Final = "## {path}"  # R-INST-3
SEPARATOR: Final = "\n\n"  # R-INST-3: between the base, the preamble and every section

WarningKind = Literal["not_a_file", "unreadable", "too_large", "not_utf8"]


@dataclass(frozen=True, slots=True)
class InstructionWarning:
    """Why a file was skipped or cut (R-INST-2); equal warnings are reported once (R-INST-4).

    ``size`` is the file's size in bytes (0 when it could not be known), ``reason`` the system's
    description of a read error.
    """

    kind: WarningKind
    path: str
    size: int = 0
    reason: str = ""


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One file the system prompt holds: its path, its text as used, its size, whether it was
    cut and, if so, how many of its bytes were used."""

    path: str
    text: str
    size: int
    cut: bool = False
    used: int = 0

    @property
    def section(self) -> str:
        """The file's part of the system prompt (R-INST-3)."""
        text = SECTION_HEADING.format(path=self.path) + SEPARATOR + self.text
        if self.cut:
            text += SEPARATOR + INSTRUCTIONS_CUT_NOTE.format(used=self.used, size=self.size)
        return text

    @property
    def tokens(self) -> int:
        """``bytes(section) // 4`` (R-INST-3, R-TOK-1), as /context shows it (R-INST-5)."""
        return len(self.section.encode("utf-8")) // 4

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "tokens": self.tokens, "cut": self.cut}


@dataclass(frozen=True, slots=True)
class Instructions:
    """One build: the system prompt, the files it holds and the warnings, in the files' order."""

    prompt: str
    files: tuple[InstructionFile, ...]
    warnings: tuple[InstructionWarning, ...]


def _repository_root(start: str) -> str | None:
    """The nearest of ``start`` and its ancestors holding a ``.git`` folder or file (R-INST-1)."""
    folder = start
    while True:
        marker = os.path.join(folder, REPOSITORY_MARKER)
        if os.path.isdir(marker) or os.path.isfile(marker):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _project_folders(workdir: str) -> list[str]:
    """The folders from the project's root down to ``workdir``, or ``workdir`` alone (R-INST-1)."""
    root = _repository_root(workdir)
    if root is None:
        return [workdir]
    folders = [workdir]
    while folders[-1] != root:
        folders.append(os.path.dirname(folders[-1]))
    return folders[::-1]


def find_instruction_files(workdir: str, home: str | None) -> list[str]:
    """The paths of the AGENTS.md entries to read, in the prompt's order (R-INST-1).

    ``home`` is the agent's home folder (None: none is looked at), ``workdir`` the working
    directory, whose real path is walked. Only entries that exist are listed (a dangling link
    does; reading it gives its warning), each real path once, at its first place.
    """
    folders = [os.path.abspath(home)] if home is not None else []
    folders += _project_folders(os.path.realpath(workdir))
    found: list[str] = []
    seen: set[str] = set()
    for folder in folders:
        path = os.path.join(folder, INSTRUCTIONS_FILE)
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        found.append(path)
    return found


def _cut_point(data: bytes) -> int:
    """Where R-INST-2 cuts bytes longer than the limit: back over a character the limit splits."""
    k = INSTRUCTIONS_MAX_BYTES
    while k > INSTRUCTIONS_MAX_BYTES - (_LONGEST_CHARACTER - 1) and 0x80 <= data[k] <= 0xBF:
        k -= 1
    return k


def instruction_from_bytes(
    path: str, data: bytes, size: int
) -> tuple[InstructionFile | None, InstructionWarning | None]:
    """One file from its first bytes (R-INST-2): what the prompt uses of it, and its warning.

    ``data`` holds at least the first ``INSTRUCTIONS_MAX_BYTES + 1`` bytes of a file of ``size``
    bytes (all of them when it is smaller), so that the cut can see the byte after the limit.
    """
    cut = size > INSTRUCTIONS_MAX_BYTES and len(data) > INSTRUCTIONS_MAX_BYTES
    used = data[: _cut_point(data)] if cut else data
    try:
        text = used.decode("utf-8")
    except UnicodeDecodeError:
        return None, InstructionWarning("not_utf8", path, size)
    text = text.removeprefix("\ufeff").strip()
    warning = InstructionWarning("too_large", path, size) if cut else None
    if not text:
        return None, warning
    return InstructionFile(path, text, size, cut, len(used)), warning


def read_instruction_file(path: str) -> tuple[InstructionFile | None, InstructionWarning | None]:
    """Read one entry R-INST-1 found (R-INST-2); never raises.

    The entry is looked at before it is opened, so a FIFO named AGENTS.md cannot block the
    run, and opened without following a terminal's wishes (``O_NOCTTY``) in case it changed
    in between; it is read no further than the limit needs.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        return None, InstructionWarning("unreadable", path, 0, os_reason(exc))
    if not stat.S_ISREG(info.st_mode):
        return None, InstructionWarning("not_a_file", path, info.st_size)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None, InstructionWarning("not_a_file", path, info.st_size)
            data = handle.read(INSTRUCTIONS_MAX_BYTES + 1)
    except OSError as exc:
        return None, InstructionWarning("unreadable", path, info.st_size, os_reason(exc))
    return instruction_from_bytes(path, data, max(info.st_size, len(data)))


def assemble_instructions(base: str, files: Sequence[InstructionFile]) -> str:
    """The system prompt of R-INST-3: ``base`` alone without files, else the preamble and each section."""
    if not files:
        return base
    return SEPARATOR.join([base, INSTRUCTIONS_PREAMBLE, *(file.section for file in files)])


def load_instructions(workdir: str, home: str | None, base: str = DEFAULT_SYSTEM_PROMPT) -> Instructions:
    """Find, read and assemble the files now (R-INST-1 … R-INST-3)."""
    files: list[InstructionFile] = []
    warnings: list[InstructionWarning] = []
    for path in find_instruction_files(workdir, home):
        used, warning = read_instruction_file(path)
        if used is not None:
            files.append(used)
        if warning is not None:
            warnings.append(warning)
    return Instructions(assemble_instructions(base, files), tuple(files), tuple(warnings))


class ProjectInstructions:
    """The agent's prompt builder (R-ENG-3, R-INST-4): a new build at every call.

    Calling it returns the system prompt, read from the files as they are now. ``last`` is the
    latest build, for /context (R-INST-5). ``on_warning`` receives each warning that the
    previous build did not have, once; whoever shows warnings sets it (the terminal UI, ``run``,
    ``show --system``). The engine calls the builder from its runs and the UI from /context,
    never at the same time (R-ENG-16), but a lock keeps ``last`` and the reported set together
    anyway.
    """

    def __init__(
        self,
        workdir: str,
        home: str | None,
        base: str = DEFAULT_SYSTEM_PROMPT,
        on_warning: Callable[[InstructionWarning], None] | None = None,
    ) -> None:
        self.workdir = workdir
        self.home = home
        self.base = base
        self.on_warning = on_warning
        self.last: Instructions | None = None
        self._reported: frozenset[InstructionWarning] = frozenset()
        self._lock = threading.Lock()

    def build(self) -> Instructions:
        """A new build; reports the warnings the previous build did not have (R-INST-4)."""
        with self._lock:
            built = load_instructions(self.workdir, self.home, self.base)
            fresh = [warning for warning in built.warnings if warning not in self._reported]
            self._reported = frozenset(built.warnings)
            self.last = built
        report = self.on_warning
        if report is not None:
            for warning in fresh:
                report(warning)
        return built

    def __call__(self) -> str:
        return self.build().prompt
