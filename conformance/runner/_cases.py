"""Case files: loading, SPEC.md requirement ids and id-list files.

A case is data (``conformance/schema/case.json``): the loader checks every file against that
schema and refuses the whole suite when one is broken, because a runner that quietly dropped a
bad case would report a pass it never checked. ``_lint.lint_cases`` reports every problem at
once and adds the checks that need SPEC.md.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness9_ref.schema import strict_json

from ._case_text import expand
from ._jsonschema import Validator, load_schema

__all__ = [
    "CASES_DIR",
    "FIXTURES_DIR",
    "PROJECT_ROOT",
    "SPEC_PATH",
    "Case",
    "CaseError",
    "defined_requirement_ids",
    "load_cases",
    "read_id_list",
    "spec_groups",
    "spec_requirement_ids",
    "suite_document",
]

PROJECT_ROOT: Final = Path(__file__).resolve().parents[2]
CASES_DIR: Final = PROJECT_ROOT / "conformance" / "cases"


def shipped_places(name: str) -> tuple[Path, Path]:
    """Where ``fixtures/`` or ``SPEC.md`` may be: beside ``conformance/`` in a checkout, or inside
    it, where the wheel carries its copy (``setup.py``), since an installed package has no
    project root."""
    return PROJECT_ROOT / name, PROJECT_ROOT / "conformance" / name


def _shipped(name: str) -> Path:
    """The first of ``shipped_places`` that exists, else the checkout's place (named in errors)."""
    return next((place for place in shipped_places(name) if place.exists()), shipped_places(name)[0])


FIXTURES_DIR: Final = _shipped("fixtures")
SPEC_PATH: Final = _shipped("SPEC.md")
SUITE_NAME: Final = "SUITE.md"

# A requirement id: `R-TOK-1`, or a lettered sub-id `R-DB-6a` of a split requirement (SPEC §0).
ID_PATTERN: Final = r"R-[A-Z]+-\d+[a-z]?"
# A requirement definition in SPEC.md: `- <a id="R-TOK-1"></a>**R-TOK-1** MUST …`.
_REQUIREMENT_LINE: Final = "- <a id="
_REQUIREMENT_ID: Final = re.compile(rf"\*\*({ID_PATTERN})\*\*")
# Ops whose inputs name files and folders that an implementation may create or delete.


@dataclass(frozen=True)
class Case:
    """One conformance case, as read from ``<cases>/<area>/<slug>.json``."""

    id: str
    path: Path
    area: str
    slug: str
    description: str
    spec: tuple[str, ...]
    op: str
    input: dict[str, Any]
    expect: dict[str, Any]
    note: str | None = None

    @property
    def name(self) -> str:
        """``"<area>/<slug>"``, the case's readable name."""
        return f"{self.area}/{self.slug}"


class CaseError(ValueError):
    """The suite has broken case files; ``problems`` holds one ``"path: problem"`` each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@functools.cache
def _case_schema() -> Validator:
    return load_schema("case.json")


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def read_json(path: Path) -> Any:
    """Parse a JSON file strictly: duplicate keys, NaN and Infinity are errors, not guesses.

    Raises:
        ValueError: the file is not strict JSON (``strict_json.JSONError``, or a
            UnicodeDecodeError, which is a ValueError too).
    """
    return strict_json.loads(path.read_text(encoding="utf-8"), finite=False, unique_keys=True)


def _read_case(path: Path, root: Path) -> tuple[Case | None, list[str]]:
    where = _display(path)
    parts = path.relative_to(root).parts
    problems = []
    if len(parts) != 2:
        problems.append(
            f"{where}: not in an area folder; a case lives at <cases>/<area>/<slug>.json"
        )
    try:
        data = read_json(path)
    except ValueError as exc:
        return None, [*problems, f"{where}: invalid JSON: {exc}"]
    problems += [f"{where}: {error}" for error in _case_schema().errors(data)]
    if problems:
        return None, problems
    try:  # long repeated text written compactly (R-CASE-1): adapters get plain strings
        data["input"], data["expect"] = expand(data["input"], "/input"), expand(data["expect"], "/expect")
    except ValueError as exc:
        return None, [f"{where}: {exc}"]
    case = Case(
        id=data["id"],
        path=path,
        area=parts[0],
        slug=path.stem,
        description=data["description"],
        spec=tuple(data["spec"]),
        op=data["op"],
        input=data["input"],
        expect=data["expect"],
        note=data.get("note"),
    )
    return case, []


def _scan(root: Path) -> tuple[list[Case], list[str]]:
    cases: list[Case] = []
    problems: list[str] = []
    first_path: dict[str, Path] = {}
    for path in sorted(root.rglob("*.json")):
        case, found = _read_case(path, root)
        problems += found
        if case is None:
            continue
        if case.id in first_path:
            other = _display(first_path[case.id])
            problems.append(f"{_display(path)}: duplicate id {case.id} (also in {other})")
            continue
        first_path[case.id] = path
        cases.append(case)
    return cases, problems


def load_cases(root: Path | None = None) -> list[Case]:
    """Load every case under ``root``, ordered by area then slug.

    Args:
        root: the cases directory; defaults to ``CASES_DIR``. A missing directory holds no cases.

    Raises:
        CaseError: any file is not a valid case, or two files share an id.
    """
    root = CASES_DIR if root is None else root
    if not root.is_dir():
        return []
    cases, problems = _scan(root)
    if problems:
        raise CaseError(problems)
    return cases


def suite_document(spec_path: Path) -> Path | None:
    """``conformance/SUITE.md``, the suite's own requirements (R-REC, R-CASE, R-RUN, R-PROF,
    R-MTX), found from SPEC.md's place: beside ``conformance/`` in a checkout, inside it in a
    wheel; None when there is none (a SPEC.md that still holds them, or a test's own SPEC)."""
    return next(
        (place for place in (spec_path.parent / "conformance" / SUITE_NAME, spec_path.parent / SUITE_NAME)
         if place.is_file()),
        None,
    )


def defined_requirement_ids(spec_path: Path) -> list[str]:
    """Every requirement id a case may cite: SPEC.md's, then its suite document's, repeats kept.

    Only SPEC.md's ids are what a port implements (``spec_requirement_ids``); the suite's are the
    runner's own, cited by cases and listed as pending the same way.
    """
    suite = suite_document(spec_path)
    return spec_requirement_ids(spec_path) + ([] if suite is None else spec_requirement_ids(suite))


def all_definitions(spec_path: Path) -> list[str]:
    """Every id SPEC.md and its suite document anchor, group parents included, repeats kept."""
    suite = suite_document(spec_path)
    return _spec_definitions(spec_path) + ([] if suite is None else _spec_definitions(suite))


def _spec_definitions(spec_path: Path) -> list[str]:
    """Every id SPEC.md anchors, group parents included, in document order, repeats kept.

    A definition is a line starting ``- <a id=`` whose bold text is the id.
    """
    found = []
    for line in spec_path.read_text(encoding="utf-8").splitlines():
        if line.startswith(_REQUIREMENT_LINE):
            match = _REQUIREMENT_ID.search(line)
            if match:
                found.append(match.group(1))
    return found


def _groups_of(definitions: list[str]) -> dict[str, tuple[str, ...]]:
    """Each parent id that has lettered sub-ids (``R-DB-6`` of ``R-DB-6a``), with them in order."""
    anchored = set(definitions)
    groups: dict[str, list[str]] = {}
    for requirement in definitions:
        parent = requirement.rstrip("abcdefghijklmnopqrstuvwxyz")
        if parent != requirement and parent in anchored and requirement not in groups.get(parent, ()):
            groups.setdefault(parent, []).append(requirement)
    return {parent: tuple(members) for parent, members in groups.items()}


def spec_groups(spec_path: Path) -> dict[str, tuple[str, ...]]:
    """The groups of SPEC.md: each split requirement's parent id with its sub-ids (SPEC §0).

    A group parent keeps its anchor, so links to it still land, but it is a summary, not a
    requirement: cases cite its sub-ids, each of which is a requirement of its own.
    """
    return _groups_of(all_definitions(spec_path))


def spec_requirement_ids(spec_path: Path) -> list[str]:
    """The requirement ids SPEC.md defines, in document order, repeats kept.

    Sub-ids such as ``R-DB-6a`` are requirements; their group parent (``R-DB-6``) is not.
    """
    definitions = _spec_definitions(spec_path)
    groups = _groups_of(definitions)
    return [requirement for requirement in definitions if requirement not in groups]


def read_id_list(path: Path, *, missing_ok: bool = False) -> list[str]:
    """Read a file of ids, one per line; ``#`` starts a comment, blank lines are ignored.

    Used for known-failures files and ``conformance/pending.txt``.

    Args:
        path: the file.
        missing_ok: treat a missing file as empty instead of raising.

    Raises:
        FileNotFoundError: the file is missing and ``missing_ok`` is false.
        ValueError: a line holds more than one word, or an id is listed twice.
    """
    if missing_ok and not path.exists():
        return []
    ids: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > 1:
            raise ValueError(f"{_display(path)}:{number}: expected one id, got {' '.join(words)!r}")
        if words[0] in ids:
            raise ValueError(
                f"{_display(path)}:{number}: {words[0]} is already listed on line {ids[words[0]]}"
            )
        ids[words[0]] = number
    return list(ids)
