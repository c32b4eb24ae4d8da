"""SPEC.md and the suite agree: every requirement is cited, every citation exists, pins match.

The suite's own requirements (R-REC, R-CASE, R-RUN, R-PROF, R-MTX) may live in a document of
their own, ``conformance/SUITE.md``; they count here as SPEC.md's do.

A requirement that no case checks yet is listed in ``conformance/pending.txt`` with a reason;
listing it there is the only way to leave it uncovered, and a pending id that gains a case
must leave the list. A split requirement's lettered sub-ids are requirements; their group
parent is not, and neither a case nor pending.txt names it (SPEC §0).
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from pathlib import Path
from typing import Any, Final

import pytest

from conformance import PROJECT_ROOT, SPEC_PATH, defined_requirement_ids, read_id_list
from conformance.runner._cases import spec_groups, suite_document
from conformance.runner._compare import describe_difference
from tests.reference import suite_cases

PENDING_PATH: Final = PROJECT_ROOT / "conformance" / "pending.txt"
_PIN: Final = re.compile(r"<!-- pin: ([A-Za-z_][\w.]*) -->")
_FENCE: Final = re.compile(r"(`{3,}|~{3,})")


@pytest.fixture(scope="module")
def spec_text() -> str:
    """SPEC.md, then the suite's own document when there is one."""
    assert SPEC_PATH.is_file(), f"{SPEC_PATH} does not exist"
    suite = suite_document(SPEC_PATH)
    return "\n".join(path.read_text(encoding="utf-8") for path in (SPEC_PATH, suite) if path is not None)


@pytest.fixture(scope="module")
def defined(spec_text: str) -> list[str]:
    return defined_requirement_ids(SPEC_PATH)


@pytest.fixture(scope="module")
def groups(spec_text: str) -> dict[str, tuple[str, ...]]:
    return spec_groups(SPEC_PATH)


@pytest.fixture(scope="module")
def cited() -> set[str]:
    return {requirement for case in suite_cases() for requirement in case.spec}


@pytest.fixture(scope="module")
def pending() -> list[str]:
    return read_id_list(PENDING_PATH, missing_ok=True)


def test_spec_defines_requirements_once_each(defined: list[str]) -> None:
    assert defined, f"{SPEC_PATH.name} defines no requirement"
    twice = sorted(requirement for requirement, n in Counter(defined).items() if n > 1)
    assert not twice, f"defined more than once: {', '.join(twice)}"


def test_every_requirement_line_anchors_its_own_id(spec_text: str) -> None:
    wrong = []
    for line in spec_text.splitlines():
        if line.startswith("- <a id="):
            anchor = re.match(r'- <a id="([^"]*)"></a>\*\*(R-[A-Z]+-\d+[a-z]?)\*\*', line)
            if anchor is None or anchor.group(1) != anchor.group(2):
                wrong.append(line)
    assert not wrong, "malformed requirement lines:\n" + "\n".join(wrong)


def test_every_requirement_is_cited_by_a_case_or_pending(
    defined: list[str], cited: set[str], pending: list[str]
) -> None:
    groups = {r[:-1] for r in defined if r[-1].isalpha()}  # a parent whose sub-ids carry it
    uncovered = [r for r in defined if r not in cited and r not in pending and r not in groups]
    assert not uncovered, f"no case cites (and pending.txt does not list): {', '.join(uncovered)}"


def test_every_cited_requirement_is_defined(
    defined: list[str], cited: set[str], groups: dict[str, tuple[str, ...]]
) -> None:
    whole = [f"{parent} (cite {' '.join(groups[parent])})" for parent in sorted(cited & set(groups))]
    assert not whole, f"cases cite group parents, not their sub-ids: {', '.join(whole)}"
    undefined = sorted(cited - set(defined))
    assert not undefined, f"cases cite ids SPEC.md does not define: {', '.join(undefined)}"


def test_a_group_parent_stays_one_line_that_names_its_sub_ids(
    spec_text: str, groups: dict[str, tuple[str, ...]]
) -> None:
    lines = {line.split('"')[1]: line for line in spec_text.splitlines() if line.startswith("- <a id=")}
    unnamed = [p for p, members in groups.items() if not all(m in lines[p] for m in (members[0], members[-1]))]
    assert not unnamed, f"group parents whose line does not name their first and last sub-id: {', '.join(unnamed)}"


def test_pending_requirements_exist_and_have_no_case_yet(
    defined: list[str], cited: set[str], pending: list[str]
) -> None:
    unknown = [r for r in pending if r not in defined]
    assert not unknown, f"pending.txt lists ids SPEC.md does not define: {', '.join(unknown)}"
    covered = [r for r in pending if r in cited]
    assert not covered, f"now cited by a case, remove from pending.txt: {', '.join(covered)}"


def _resolve(dotted: str) -> Any:
    """Import the longest importable module prefix of ``dotted``, then walk attributes."""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for name in parts[split:]:
            value = getattr(value, name)
        return value
    raise ModuleNotFoundError(f"no module in {dotted!r}")


def _pinned_blocks(text: str) -> list[tuple[str, str | None]]:
    """Each pin's dotted path and the fenced block that follows it (None when there is none)."""
    lines = text.splitlines()
    pins: list[tuple[str, str | None]] = []
    for index, line in enumerate(lines):
        match = _PIN.fullmatch(line.strip())
        if match is None:
            continue
        rest = iter(lines[index + 1 :])
        opening = _FENCE.match(next((c for c in rest if c.strip()), "").strip())
        block: list[str] | None = None
        if opening is not None:
            fence, block = opening.group(1), []
            for candidate in rest:
                closing = candidate.strip()
                if closing.startswith(fence) and set(closing) == {fence[0]}:
                    break
                block.append(candidate)
            else:
                block = None  # the fence never closes
        pins.append((match.group(1), None if block is None else "\n".join(block)))
    return pins


def test_pin_markers_are_well_formed(spec_text: str) -> None:
    loose = [
        line
        for line in spec_text.splitlines()
        if "<!-- pin:" in line and not _PIN.fullmatch(line.strip())
    ]
    assert not loose, "pin markers must read `<!-- pin: dotted.path.NAME -->`:\n" + "\n".join(loose)


def test_pinned_spec_text_equals_the_constant_byte_for_byte(spec_text: str) -> None:
    problems = []
    for dotted, block in _pinned_blocks(spec_text):
        if block is None:
            problems.append(f"{dotted}: the pin is not followed by a fenced code block")
            continue
        constant = _resolve(dotted)
        if constant != block:
            problems.append(f"{dotted}: {describe_difference('', block, constant)}")
    assert not problems, "\n".join(problems)


# --- Every citation resolves inside the repository. SPEC.md itself (and the parts of it kept in
# conformance/, _SPECIFICATIONS) names the design document's sections and decisions (each
# requirement says where it comes from); everything else cites SPEC ids, which a reader of the
# repository alone can follow.

_CITED_ID: Final = re.compile(r"\bR-[A-Z]+-\d+[a-z]?\b")
_OUTSIDE: Final = re.compile(r"(?<![-\w])[Ss]eed (?:§ ?)?\d+(?:\.\d+)*|\bDECISIONS\b|\bSTYLE \d+|\bD[1-9]\b")
# A random seed is not a citation: the mutant sampler's option and its report line.
_RANDOM_SEED: Final = ("--seed", "mutants (seed ")
# Ids that tests of the suite's own tools and examples in its documentation use because they do
# not exist in SPEC.md (an unknown id must be reported, a placeholder must not be taken as real).
_PLACEHOLDER_IDS: Final = frozenset(
    {"R-A-1", "R-FMT-9", "R-TODO-1", "R-TOK-10", "R-TOK-12", "R-X-1", "R-XYZ-1", "R-Y-2", "R-ZZZ-9", "R-ZZZ-9a", "R-ZZZ-9b"}
)


def _citing_files() -> list[Path]:
    roots = ("harness9_ref", "conformance", "tests", "benchmarks", "fixtures", "docs")
    found = [PROJECT_ROOT / "README.md"]
    for root in roots:
        for path in sorted((PROJECT_ROOT / root).rglob("*")):
            if "__pycache__" in path.parts or not path.is_file() or path == Path(__file__):  # its examples
                continue
            if path.suffix in (".py", ".md", ".txt") or (path.suffix == ".json" and "cases" in path.parts):
                found.append(path)
    return found


# The suite's own requirements and the Go original's divergences, parts of the specification kept
# beside the suite: like SPEC.md they say where in the design document each point comes from.
_SPECIFICATIONS: Final = frozenset({PROJECT_ROOT / "conformance" / "SUITE.md", PROJECT_ROOT / "conformance" / "GO-ORIGINAL.md"})


def test_code_tests_and_docs_cite_only_what_the_repository_holds(
    defined: list[str], groups: dict[str, tuple[str, ...]]
) -> None:
    known = set(defined) | set(groups) | _PLACEHOLDER_IDS  # a group parent's anchor still lands
    problems = []
    for path in _citing_files():
        where = path.relative_to(PROJECT_ROOT)
        sources_allowed = path in _SPECIFICATIONS
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            outside = [] if sources_allowed else [
                m.group() for m in _OUTSIDE.finditer(line) if not any(s in line for s in _RANDOM_SEED)
            ]
            unknown = [m.group() for m in _CITED_ID.finditer(line) if m.group() not in known]
            problems += [f"{where}:{number}: {cited!r} is not in the repository" for cited in outside]
            problems += [f"{where}:{number}: {cited} is not a requirement of SPEC.md" for cited in unknown]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("line", ["(seed 6.2, D5)", "DECISIONS D1", "STYLE 13", "see seed §4.3", "D9"])
def test_the_citation_check_sees_each_outside_form(line: str) -> None:
    assert _OUTSIDE.search(line)


@pytest.mark.parametrize("line", ["--seed 1", "R-TOK-1", "U+D800", "D10", "seeded bugs", "3 of 6 mutants (seed 1)"])
def test_the_citation_check_leaves_other_text_alone(line: str) -> None:
    assert not _OUTSIDE.search(line) or any(s in line for s in _RANDOM_SEED)
