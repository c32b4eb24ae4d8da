"""Results per SPEC requirement: the text lines, the JUnit suites and the Markdown table.

A case counts once for every requirement it cites, so a requirement's counts are those of the
selected cases that cite it. A requirement *fails* when one of its cases failed or errored; its
*failing* ids are those cases. A requirement listed in a known-failures file is *stale* when
at least one of its cases passed and none is left failing as expected: the port has fixed it,
and the run fails until the line is removed, as for a listed case that passes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ._cases import suite_document
from ._results import OUTCOMES, CaseResult, Outcome, SuiteResult

__all__ = [
    "RequirementResult",
    "is_requirement_id",
    "requirement_lines",
    "requirement_results",
    "requirement_titles",
    "stale_requirements",
    "write_markdown_report",
]

# ``_cases.ID_PATTERN`` with its parts grouped: area, number, the letter of a sub-id (SPEC §0).
REQUIREMENT_ID: Final = re.compile(r"R-([A-Z]+)-(\d+)([a-z]?)")
# Failing ids shown on one text line; the JSON report and the Markdown table list them all.
SHOWN_IDS: Final = 5
# Words of a SPEC bullet kept as a requirement's title in the Markdown table.
TITLE_WORDS: Final = 10
_LABELS: Final[Mapping[Outcome, str]] = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "unsupported": "unsupported",
    "errored": "errored",
    "known_failure": "known failures",
}


def is_requirement_id(text: str) -> bool:
    """Whether ``text`` has the shape of a requirement id, ``R-<AREA>-<n>`` or a sub-id ``R-<AREA>-<n><letter>``."""
    return REQUIREMENT_ID.fullmatch(text) is not None


def _sort_key(requirement: str) -> tuple[str, int, str]:
    match = REQUIREMENT_ID.fullmatch(requirement)
    return (match.group(1), int(match.group(2)), match.group(3)) if match else ("", 0, requirement)


def area_of(requirement: str) -> str:
    """``"R-DB"`` for ``"R-DB-5"`` and for ``"R-DB-6a"``."""
    return requirement.rsplit("-", 1)[0]


@dataclass(frozen=True, slots=True)
class RequirementResult:
    """The outcomes of the selected cases citing one requirement."""

    id: str
    counts: Mapping[Outcome, int]
    failing: tuple[str, ...]  # ids of its cases that failed or errored, in run order
    listed: bool = False  # named in the known-failures file

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def stale(self) -> bool:
        """Listed as a known failure, yet something passed and nothing fails as expected."""
        return self.listed and self.counts["passed"] > 0 and self.counts["known_failure"] == 0

    @property
    def state(self) -> str:
        """One of "fail", "pass" (all passed), "unsupported" (all unsupported), "partial"."""
        if self.failing or self.stale:
            return "fail"
        if self.counts["passed"] == self.total:
            return "pass"
        if self.counts["unsupported"] == self.total:
            return "unsupported"
        return "partial"

    def as_json(self) -> dict[str, object]:
        return {
            **{outcome: self.counts[outcome] for outcome in OUTCOMES},
            "failing": list(self.failing),
            "stale_known_failure": self.stale,
        }


def requirement_results(
    results: Iterable[CaseResult], listed: Collection[str] = ()
) -> list[RequirementResult]:
    """One result per requirement cited by ``results``, ordered by area, then number."""
    tallies: dict[str, Counter[Outcome]] = {}
    failing: dict[str, list[str]] = {}
    for result in results:
        for requirement in result.case.spec:
            tallies.setdefault(requirement, Counter())[result.outcome] += 1
            if result.outcome in ("failed", "errored"):
                failing.setdefault(requirement, []).append(result.case.id)
    return [
        RequirementResult(
            requirement,
            {outcome: tallies[requirement][outcome] for outcome in OUTCOMES},
            tuple(failing.get(requirement, ())),
            requirement in listed,
        )
        for requirement in sorted(tallies, key=_sort_key)
    ]


def stale_requirements(suite: SuiteResult) -> list[str]:
    """The listed requirements whose cases all pass now (see the module docstring); each fails the
    run like an unexpected pass."""
    if not suite.known_requirements:
        return []
    return [
        result.id
        for result in requirement_results(suite.results, suite.known_requirements)
        if result.stale
    ]


def _breakdown(result: RequirementResult) -> str:
    return ", ".join(
        f"{result.counts[outcome]} {_LABELS[outcome]}"
        for outcome in OUTCOMES
        if result.counts[outcome]
    )


def _ids(ids: Sequence[str], limit: int | None = SHOWN_IDS) -> str:
    if limit is None or len(ids) <= limit:
        return ", ".join(ids)
    return ", ".join(ids[:limit]) + f", … {len(ids) - limit} more"


def requirement_line(result: RequirementResult) -> str:
    """One requirement's line, e.g. ``R-SUM-7: 16 of 42 cases fail (QXE4KR, …); 26 passed, …``."""
    head = f"{result.id}:"
    if result.stale:
        return (
            f"{head} listed as a known failure, but no case fails any more "
            f"({_breakdown(result)}); remove it from the known-failures file"
        )
    total, failing = result.total, len(result.failing)
    cases = f"{total} case{'s' * (total != 1)}"
    if failing:
        fail = f"{failing} of {cases} fail{'s' * (failing == 1)} ({_ids(result.failing)})"
        return f"{head} {fail}; {_breakdown(result)}"
    if result.state == "pass":
        return f"{head} all {cases} pass" if total > 1 else f"{head} its one case passes"
    if result.state == "unsupported":
        return f"{head} all {cases} unsupported" if total > 1 else f"{head} its one case unsupported"
    return f"{head} 0 of {cases} fail; {_breakdown(result)}"


def _area_line(area: str, passing: int, unsupported: int) -> str:
    parts = []
    if passing:
        parts.append(f"{passing} requirement{'s' * (passing != 1)}, all cases pass")
    if unsupported:
        s = "s" * (unsupported != 1)
        parts.append(f"{unsupported} requirement{s}, all cases unsupported")
    return f"{area}: " + "; ".join(parts)


def requirement_lines(suite: SuiteResult, *, verbose: bool = False) -> list[str]:
    """The per-requirement part of the text output, area by area.

    A requirement with a failing case, a stale known-failure entry or a mix of outcomes gets a
    line of its own. Without ``verbose``, those whose cases all pass, or are all unsupported,
    are counted on one line per area: ``R-SUM: 11 requirements, all cases pass``.
    """
    lines: list[str] = []
    by_area: dict[str, list[RequirementResult]] = {}
    for result in requirement_results(suite.results, suite.known_requirements):
        by_area.setdefault(area_of(result.id), []).append(result)
    for area, results in by_area.items():
        folded = Counter(r.state for r in results if r.state in ("pass", "unsupported"))
        for result in results:
            if verbose or result.state not in folded:
                lines.append(requirement_line(result))
        if folded and not verbose:
            lines.append(_area_line(area, folded["pass"], folded["unsupported"]))
    return lines


def junit_requirement_suites(root: ET.Element, suite: SuiteResult) -> None:
    """Add one ``<testsuite name="requirements R-SUM">`` per area, one testcase per requirement.

    GitLab's test report and Jenkins' JUnit plugin show test suites and test cases only and
    ignore ``<properties>``, so a property set would be invisible there: requirements are
    testcases (classname ``requirements.R-SUM``, which Jenkins shows as package
    ``requirements``, class ``R-SUM``). A requirement with a failing case, or a stale
    known-failure entry, is a ``<failure>`` naming the failing ids; one that is not met in full
    otherwise (cases skipped, unsupported or known failures) is ``<skipped>``, so that it does
    not read as a pass. The price is that dashboards count these testcases on top of the
    per-case ones; their suite names keep the two apart.
    """
    by_area: dict[str, list[RequirementResult]] = {}
    for result in requirement_results(suite.results, suite.known_requirements):
        by_area.setdefault(area_of(result.id), []).append(result)
    for area, results in by_area.items():
        failures = sum(1 for r in results if r.state == "fail")
        skipped = sum(1 for r in results if r.state not in ("fail", "pass"))
        element = ET.SubElement(
            root,
            "testsuite",
            name=f"requirements {area}",
            tests=str(len(results)),
            failures=str(failures),
            errors="0",
            skipped=str(skipped),
        )
        for result in results:
            case = ET.SubElement(
                element, "testcase", classname=f"requirements.{area}", name=result.id
            )
            line = requirement_line(result)
            if result.state == "fail":
                ids = _ids(result.failing, None)
                full = f"{line}\nfailing cases: {ids}" if ids else line
                ET.SubElement(case, "failure", message=line).text = full
            elif result.state != "pass":
                ET.SubElement(case, "skipped", message=line)


def requirement_titles(spec_path: Path) -> dict[str, str]:
    """The first words of each requirement's bullet in SPEC.md and the suite's own document
    (cases cite both), markup removed; {} without a SPEC."""
    try:
        text = spec_path.read_text(encoding="utf-8")
        suite = suite_document(spec_path)
        if suite is not None:
            text += "\n" + suite.read_text(encoding="utf-8")
    except OSError:
        return {}
    titles = {}
    pattern = re.compile(r"^- <a id=\"[^\"]*\"></a>\*\*(R-[A-Z]+-\d+[a-z]?)\*\*\s*(.*)$")
    for line in text.splitlines():
        match = pattern.match(line)
        if match:
            words = match.group(2).replace("`", "").replace("*", "").split()
            title = " ".join(words[:TITLE_WORDS])
            titles[match.group(1)] = title + (" …" if len(words) > TITLE_WORDS else "")
    return titles


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def write_markdown_report(
    suite: SuiteResult, path: Path, titles: Mapping[str, str], summary: str
) -> None:
    """Write a compliance table: requirement, title, cases passed/total, failing case ids.

    A heading names the implementation, the summary line follows, then one row per cited
    requirement; a stale known-failure entry reads "stale known failure" in the last column.
    """
    implementation = suite.implementation
    who = " ".join(str(implementation.get(key, "")) for key in ("name", "version")).strip()
    lines = [
        f"# Conformance of {who or 'the adapter'}",
        "",
        summary,
        "",
        "| requirement | title | passed | failing cases |",
        "| --- | --- | --- | --- |",
    ]
    for result in requirement_results(suite.results, suite.known_requirements):
        failing = _ids(result.failing, None) + ("stale known failure" if result.stale else "")
        passed = f"{result.counts['passed']}/{result.total}"
        title = _cell(titles.get(result.id, ""))
        lines.append(f"| {result.id} | {title} | {passed} | {_cell(failing)} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
