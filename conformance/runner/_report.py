"""How a run's results read: failure lines, summary, JSON and JUnit reports, and whether the run
succeeded (the results themselves are ``_results``'s).

A failure line names the case three ways (permanent id, readable ``<area>/<slug>``, the SPEC
requirements it checks) so a porter can go from the line to the case file and to the spec in
one step; the rest of the line is the verdict's detail, which starts at the first differing
JSON pointer.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Final

from ._profiles import ProfileResult, junit_profile_suite, profile_results
from ._requirements import junit_requirement_suites, requirement_results, stale_requirements
from ._results import ALWAYS_SHOWN, CaseResult, Outcome, SuiteResult

__all__ = [
    "format_result",
    "suite_ok",
    "suite_profiles",
    "summary_line",
    "write_json_report",
    "write_junit_report",
]

# Characters XML 1.0 cannot carry; an adapter's message may contain any of them.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# The summary's counts, in order; "known failures" is added only with a known-failures file.
_SUMMARY: Final[tuple[Outcome, ...]] = ("passed", "failed", "skipped", "unsupported", "errored")


def suite_profiles(suite: SuiteResult) -> list[ProfileResult]:
    """Each profile judged on the run's cases, in the table's order (R-PROF-2)."""
    return profile_results(suite.results, suite.claimed_profiles, suite.left_out)


def suite_ok(suite: SuiteResult) -> bool:
    """True when nothing unexpected failed or errored, no listed requirement is stale and every
    claimed profile that the run judged passed."""
    counts = suite.counts()
    return (
        counts["failed"] == 0
        and counts["errored"] == 0
        and not stale_requirements(suite)
        and not any(result.unmet for result in suite_profiles(suite))
    )


def format_result(result: CaseResult, *, verbose: bool = False) -> str | None:
    """The line for one case, or None when it is not shown (passes etc. without ``verbose``).

    Failed: ``<id> (<area>/<slug>) [R-X-1, R-Y-2] <pointer>: expected <json>, got <json>``.
    Every other outcome: the same prefix, the outcome, and the reason when there is one.
    """
    if result.outcome not in ALWAYS_SHOWN and not verbose:
        return None
    case = result.case
    prefix = f"{case.id} ({case.name}) [{', '.join(case.spec)}]"
    if result.outcome == "failed":
        return f"{prefix} {result.detail}"
    label = result.outcome.replace("_", " ")
    return f"{prefix} {label}: {result.detail}" if result.detail else f"{prefix} {label}"


def summary_line(suite: SuiteResult) -> str:
    """``N passed, N failed, N skipped, N unsupported, N errored`` (+ known failures)."""
    counts = suite.counts()
    parts = [f"{counts[outcome]} {outcome}" for outcome in _SUMMARY]
    if suite.known_failures_given:
        parts.append(f"{counts['known_failure']} known failures")
    stale = len(stale_requirements(suite))
    if stale:
        parts.append(f"{stale} listed requirement{'s' * (stale != 1)} no longer failing")
    return ", ".join(parts)


def _case_entry(result: CaseResult) -> dict[str, Any]:
    case = result.case
    return {
        "id": case.id,
        "area": case.area,
        "slug": case.slug,
        "spec": list(case.spec),
        "status": result.outcome,
        "detail": result.detail,
    }


def write_json_report(suite: SuiteResult, path: Path) -> None:
    """Write ``{"implementation", "totals", "ok", "cases", "requirements", "profiles"}``.

    ``cases`` is ``[{id, area, slug, spec, status, detail}]`` in run order; ``requirements``
    maps each cited requirement id, ordered by area then number, to ``{passed, failed, skipped,
    unsupported, errored, known_failure, failing, stale_known_failure}``: the counts of the
    cases citing it, the ids of those that failed or errored, and whether it is a listed known
    failure that no case fails any more; ``profiles`` maps each profile name to its
    ``ProfileResult.as_json()`` (SPEC R-PROF-2).
    """
    requirements = requirement_results(suite.results, suite.known_requirements)
    report = {
        "implementation": dict(suite.implementation),
        "totals": suite.counts(),
        "ok": suite_ok(suite),
        "cases": [_case_entry(result) for result in suite.results],
        "requirements": {result.id: result.as_json() for result in requirements},
        "profiles": {result.profile.name: result.as_json() for result in suite_profiles(suite)},
    }
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _xml_safe(text: str) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", text)


def write_junit_report(suite: SuiteResult, path: Path) -> None:
    """Write JUnit XML: one testcase per case, failed as failure, errored as error.

    Skipped, unsupported and known failures are ``<skipped>``, so CI dashboards do not count
    them as passes. One more testsuite per requirement area follows, one testcase per
    requirement; ``junit_requirement_suites`` says why they are testcases; then the profiles.
    """
    counts = suite.counts()
    name = str(suite.implementation.get("name", "adapter"))
    skipped = counts["skipped"] + counts["unsupported"] + counts["known_failure"]
    root = ET.Element("testsuites")
    suite_element = ET.SubElement(
        root,
        "testsuite",
        name=f"conformance ({name})",
        tests=str(len(suite.results)),
        failures=str(counts["failed"]),
        errors=str(counts["errored"]),
        skipped=str(skipped),
    )
    for result in suite.results:
        case = result.case
        element = ET.SubElement(
            suite_element, "testcase", classname=case.area, name=f"{case.id} {case.slug}"
        )
        properties = ET.SubElement(element, "properties")
        ET.SubElement(properties, "property", name="spec", value=", ".join(case.spec))
        detail = _xml_safe(result.detail)
        if result.outcome == "failed":
            ET.SubElement(element, "failure", message=detail).text = detail
        elif result.outcome == "errored":
            ET.SubElement(element, "error", message=detail).text = detail
        elif result.outcome != "passed":
            label = result.outcome.replace("_", " ")
            ET.SubElement(element, "skipped", message=f"{label}: {detail}" if detail else label)
    junit_requirement_suites(root, suite)
    junit_profile_suite(root, suite_profiles(suite))
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
