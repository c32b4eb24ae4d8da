"""The case linter: every problem of the suite at once, with the checks that need SPEC.md.

Why a module of its own: it checks the cases against the session backends too (R-PG-2), and
``_backends`` builds on ``_cases``; here, above both, neither imports the other.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Final

from ._backends import sqlite_only_problem
from ._case_text import literal_runs
from ._cases import CASES_DIR, SPEC_PATH, _display, _groups_of, _scan, all_definitions

__all__ = ["lint_cases"]

FILE_OPS: Final = frozenset({"session", "tool_execute", "cli"})  # ops whose input may name paths


def _real_paths(value: Any) -> list[str]:
    """Absolute paths in a case input that exist on this machine.

    A case runs against implementations that may be wrong: an input naming a real path (an id
    of ``/tmp`` for a delete, say) could make a wrong one destroy it. Cases name only paths
    inside the runner's scratch folder, or absolute paths that exist nowhere.
    """
    if isinstance(value, str):
        return [f"input names the real path {value!r}"] if value.startswith("/") and Path(value).exists() else []
    if isinstance(value, dict):
        return [p for item in value.values() for p in _real_paths(item)]
    if isinstance(value, list):
        return [p for item in value for p in _real_paths(item)]
    return []


def lint_cases(root: Path | None = None, spec_path: Path | None = None) -> list[str]:
    """Every problem in the suite, one ``"path: problem"`` string each.

    Beyond what loading rejects (schema violations, duplicate ids, files outside an area
    folder, invalid JSON), lint rejects an empty suite, citing an id twice, citing an id
    that neither SPEC.md nor the suite's own document (``conformance/SUITE.md``) defines, citing
    a group parent (``R-DB-6`` where SPEC.md splits it into ``R-DB-6a`` …: a case names the
    sub-ids it checks), an input naming an existing absolute path, and a session case bound to
    SQLite's file that is not marked SQLite-only (R-PG-2).

    Args:
        root: the cases directory; defaults to ``CASES_DIR``.
        spec_path: the specification; defaults to ``SPEC_PATH``.
    """
    root = CASES_DIR if root is None else root
    spec_path = SPEC_PATH if spec_path is None else spec_path
    if not root.is_dir():
        return [f"{_display(root)}: no such directory"]
    cases, problems = _scan(root)
    if not cases and not problems:
        problems.append(f"{_display(root)}: no case files found")
    if not spec_path.is_file():
        return [*problems, f"{_display(spec_path)}: not found, so cited ids cannot be checked"]
    definitions = all_definitions(spec_path)
    defined, groups = set(definitions), _groups_of(definitions)
    for case in cases:
        sqlite_only = sqlite_only_problem(case)
        if sqlite_only is not None:
            problems.append(f"{_display(case.path)}: {sqlite_only}")
        problems.extend(f"{_display(case.path)}: {p}" for p in literal_runs(case.path.read_text(encoding="utf-8")))
        if case.op in FILE_OPS:
            problems.extend(f"{_display(case.path)}: {p}" for p in _real_paths(case.input))
        for requirement, count in Counter(case.spec).items():
            if count > 1:
                problems.append(f"{_display(case.path)}: cites {requirement} more than once")
            if requirement in groups:
                problems.append(
                    f"{_display(case.path)}: cites {requirement}, a group of {spec_path.name}: "
                    f"cite {groups[requirement][0]} … {groups[requirement][-1]} instead"
                )
            elif requirement not in defined:
                problems.append(
                    f"{_display(case.path)}: cites {requirement}, which {spec_path.name} does not define"
                )
    return problems
