"""The ``system_prompt`` op of the reference adapter: AGENTS.md files as read, then assembled
(SPEC R-INST-2, R-INST-3).

The case gives the files R-INST-1 found, in order, each with its bytes (``text`` or ``hex``)
or what looking at it showed (``not_a_file``, ``unreadable``), so that a port is judged on
the same bytes whatever its file system; finding the files on disk is the Python tests' part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.reference._memory import InvalidInput
from harness9_ref.engine import (
    INSTRUCTIONS_MAX_BYTES,
    InstructionFile,
    InstructionWarning,
    assemble_instructions,
    instruction_from_bytes,
)
from harness9_ref.text import DEFAULT_LANG, instruction_warning_line

__all__ = ["op_system_prompt"]


def _read(entry: Mapping[str, Any], where: str) -> tuple[InstructionFile | None, InstructionWarning | None]:
    """One file as R-INST-2 reads it, from the case's description of the entry."""
    path = str(entry["path"])
    kinds = [key for key in ("text", "hex", "not_a_file", "unreadable") if key in entry]
    if len(kinds) != 1:
        raise InvalidInput(f'{where}: expected "path" and exactly one of "text", "hex", "not_a_file", "unreadable"')
    if "not_a_file" in entry:
        return None, InstructionWarning("not_a_file", path)
    if "unreadable" in entry:
        return None, InstructionWarning("unreadable", path, 0, str(entry["unreadable"]))
    if "text" in entry:
        data = str(entry["text"]).encode("utf-8")
    else:
        try:
            data = bytes.fromhex(str(entry["hex"]))
        except ValueError:
            raise InvalidInput(f"{where}/hex: not hexadecimal digits") from None
    return instruction_from_bytes(path, data[: INSTRUCTIONS_MAX_BYTES + 1], len(data))


def op_system_prompt(inp: Mapping[str, Any]) -> dict[str, Any]:
    """``{"base", "files": [...], "lang"?}`` → ``{"prompt", "files", "warnings"}`` (R-INST-2, R-INST-3)."""
    lang = str(inp.get("lang", DEFAULT_LANG))
    used: list[InstructionFile] = []
    warnings: list[str] = []
    for n, entry in enumerate(inp["files"]):
        file, warning = _read(entry, f"files[{n}]")
        if file is not None:
            used.append(file)
        if warning is not None:
            warnings.append(instruction_warning_line(warning, lang))
    return {
        "prompt": assemble_instructions(str(inp["base"]), used),
        "files": [file.to_dict() for file in used],
        "warnings": warnings,
    }
