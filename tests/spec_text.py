"""Sections of SPEC.md (and of the suite's own document) found by title, whatever their number.

Why: tests compare the code with texts SPEC.md prints (the engine's worked example, the tool
definitions, the UI's templates, the profiles table); a section's number says where it stands,
not what it is, and a component may span more than one section, so tests name titles only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from conformance import SPEC_PATH
from conformance.runner._cases import suite_document

_HEADING: Final = re.compile(r"^(#{2,4}) (?:\d+(?:\.\d+)*\.? |Appendix [A-Z]\. )?(.*)$")
_FENCE: Final = re.compile(r"^\s*(`{3,}|~{3,})")


def _documents() -> list[Path]:
    suite = suite_document(SPEC_PATH)
    return [SPEC_PATH] if suite is None else [SPEC_PATH, suite]


def spec_section(title: str) -> str:
    """Every section whose heading's title starts with ``title``, each up to the next heading
    of its level or above, joined; AssertionError when there is none."""
    found: list[str] = []
    for path in _documents():
        lines = path.read_text(encoding="utf-8").splitlines()
        level, fence = 0, False
        taken: list[str] = []
        for line in lines:
            if _FENCE.match(line):
                fence = not fence
            heading = None if fence else _HEADING.match(line)
            if heading is not None and level and len(heading.group(1)) <= level:
                found.append("\n".join(taken))
                level, taken = 0, []
            if heading is not None and not level and heading.group(2).startswith(title):
                level = len(heading.group(1))
            if level:
                taken.append(line)
        if level:
            found.append("\n".join(taken))
    assert found, f"no section titled {title!r} in {', '.join(p.name for p in _documents())}"
    return "\n\n".join(found)
