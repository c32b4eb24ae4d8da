"""Profiles: named parts of SPEC.md a port can claim as a whole (SPEC R-PROF).

Why: a porter implements the suite a part at a time, and "1119 passed, 2 unsupported" does
not say which parts are done. A profile names a part (its SPEC sections, requirement areas and
ops; SUITE.md §4 holds the same table), and every run judges each profile as a whole, so a port
can say exactly what it implements: ``harness9 conformance: core ✓ sessions ✓ providers 98%``.

Each case belongs to exactly one profile (R-PROF-1): the PostgreSQL runs of session cases to
``postgresql``, the cases judged on a recording of a local model server to ``local``
(R-PROF-4), any other case citing a long-session area to ``long``, the rest to the profile of
their op. One profile per case keeps a port that claims ``engine`` from being asked for
``long``'s cases, and makes the profiles' counts add up to the run's.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ._backends import POSTGRES, POSTGRES_KEY, case_backends
from ._ops import OPS
from ._requirements import area_of

if TYPE_CHECKING:
    from ._cases import Case
    from ._results import CaseResult

__all__ = [
    "PROFILES",
    "Profile",
    "ProfileResult",
    "junit_profile_suite",
    "left_out_cases",
    "profile_line",
    "profile_of",
    "profile_results",
    "read_profiles",
]


@dataclass(frozen=True, slots=True)
class Profile:
    """One profile: its name, what it is, its SPEC sections, requirement areas and own ops."""

    name: str
    title: str
    sections: str
    areas: tuple[str, ...]
    ops: tuple[str, ...]


LOCAL: Final = "local"
# A fixture recorded from a local model server is named <provider>/local-<server>-… (R-PROF-4).
LOCAL_FIXTURE_PREFIX: Final = "local-"

PROFILES: Final[tuple[Profile, ...]] = (
    Profile(
        "core",
        "core memory",
        "1–3, 4.1–4.4",
        ("R-MSG", "R-TOK", "R-FMT", "R-LIM", "R-REP", "R-CMP", "R-SW", "R-TB", "R-SUM"),
        (
            "estimate_tokens",
            "estimate_tool_tokens",
            "canonical_json",
            "format_token_count",
            "model_limits",
            "repair_tool_pairs",
            "compact",
        ),
    ),
    Profile(
        "sessions",
        "sessions on SQLite",
        "5.1–5.3, 5.5–5.7, 5.9",
        ("R-SES", "R-DB", "R-MGR", "R-FIND", "R-SRCH", "R-PRUNE", "R-UNDO"),
        ("session", "memory_session"),
    ),
    Profile("postgresql", "sessions on PostgreSQL", "12", ("R-PG",), ()),
    Profile(
        "providers",
        "providers",
        "2.4, 6",
        ("R-PRV", "R-USE", "R-ERR", "R-WIN"),
        ("provider_request", "provider_parse", "provider_call", "model_window"),
    ),
    Profile(LOCAL, "local model servers", "6, SUITE.md §4", (), ()),
    Profile(
        "engine",
        "engine and tools",
        "7, 9.1, 9.2",
        ("R-ENG", "R-EVT", "R-TOOL", "R-INT", "R-APPR", "R-INST"),
        ("engine_run", "tool_execute", "approval_rule", "system_prompt"),
    ),
    Profile(
        "long",
        "long sessions",
        "4.5, 4.6, 5.4, 8",
        ("R-LONG", "R-CKP", "R-FOLD", "R-TRIM", "R-RCL", "R-FIT"),
        ("shorten_view", "engine_tool"),
    ),
    Profile(
        "tui",
        "terminal UI",
        "5.8, 9.3, 10.1, 11",
        ("R-TUI", "R-SAFE", "R-FORK", "R-LANG"),
        ("tui_status", "tui_notice", "tui_resume", "tui_input"),
    ),
    Profile("cli", "command line", "10", ("R-CLI",), ("cli",)),
    Profile("traffic", "traffic tools", "SUITE.md §1", ("R-REC",), ()),
)
_BY_NAME: Final = {profile.name: profile for profile in PROFILES}
_HOME: Final = {op: profile.name for profile in PROFILES for op in profile.ops}
_LONG_AREAS: Final = frozenset(_BY_NAME["long"].areas)
# Profiles no adapter can claim: no op and no rule of R-PROF-1 gives them a case (R-PROF-3).
_UNCLAIMABLE: Final = frozenset(p.name for p in PROFILES if not p.ops and p.name not in (POSTGRES, LOCAL))
PASSED_MARK: Final = "✓"
NOT_RUN: Final = "not run"  # R-PROF-2c: none of its cases ran
FILTERED: Final = "(filtered)"  # R-PROF-2c: judged on the part --filter selected
NOT_JUDGED: Final = frozenset({"skipped", "unsupported"})  # outcomes of a case that did not run
LINE_PREFIX: Final = "harness9 conformance:"

assert set(_HOME) == set(OPS), "every op has exactly one home profile"


def _on_postgres(case: Case) -> bool:
    return case.op == "session" and (
        POSTGRES_KEY in case.input or case_backends(case) == (POSTGRES,)
    )


def _on_local_server(case: Case) -> bool:
    """Judged on a recording of a local model server (R-PROF-4): its fixture is ``<provider>/local-…``."""
    fixture = case.input.get("fixture")
    return isinstance(fixture, str) and fixture.partition("/")[2].startswith(LOCAL_FIXTURE_PREFIX)


def profile_of(case: Case) -> str:
    """The one profile ``case`` belongs to (R-PROF-1; see the module docstring)."""
    if _on_postgres(case):
        return POSTGRES
    if _on_local_server(case):
        return LOCAL
    if any(area_of(requirement) in _LONG_AREAS for requirement in case.spec):
        return "long"
    return _HOME[case.op]


def read_profiles(answer: Mapping[str, Any]) -> tuple[str, ...]:
    """The start answer's ``profiles``, the profiles the adapter claims; none when absent.

    Raises:
        ValueError: not a list of claimable profile names (R-PROF-3).
    """
    value = answer.get("profiles", [])
    claimable = [p.name for p in PROFILES if p.name not in _UNCLAIMABLE]
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ValueError(f"profiles must be a list of profile names, got {value!r}")
    if unknown := [name for name in value if name not in claimable]:
        raise ValueError(
            f"profiles names {', '.join(map(repr, unknown))}, which cannot be claimed; "
            f"the profiles are {', '.join(claimable)}"
        )
    return tuple(name for name in claimable if name in value)


@dataclass(frozen=True, slots=True)
class ProfileResult:
    """How the run's cases of one profile ended (R-PROF-2)."""

    profile: Profile
    claimed: bool
    cases: int
    passed_cases: int
    failing: tuple[str, ...]  # ids of its cases that failed or errored, in run order
    judged: int  # its cases that ran (not skipped or unsupported)
    left_out: int = 0  # its cases of the suite that --filter left out of the run (R-PROF-2c)

    @property
    def passed(self) -> bool:
        """All its cases passed, and it had at least one."""
        return self.cases > 0 and self.passed_cases == self.cases

    @property
    def percent(self) -> int | None:
        """The whole percentage of its cases that passed, rounded down; None without cases."""
        return self.passed_cases * 100 // self.cases if self.cases else None

    @property
    def unmet(self) -> bool:
        """Claimed, judged and not passed: the run fails (R-PROF-3)."""
        return self.claimed and self.cases > 0 and not self.passed

    @property
    def verdict(self) -> str:
        """``✓`` or the percentage, e.g. ``98%``; empty without cases (R-PROF-2b).

        R-PROF-2c: ``not run`` when none of its cases ran (a percentage would read as cases
        that failed), and, when ``--filter`` left some of its cases out, how many of the suite's
        ran, ``25/222 (filtered)`` (``96% of 25/222 (filtered)`` when not all passed): a verdict
        on a part is never ``✓``.
        """
        if self.percent is None:
            return ""
        if self.judged == 0:
            return NOT_RUN
        if self.left_out:
            part = f"{self.cases}/{self.cases + self.left_out} {FILTERED}"
            return part if self.passed else f"{self.percent}% of {part}"
        return PASSED_MARK if self.passed else f"{self.percent}%"

    def as_json(self) -> dict[str, object]:
        return {
            "claimed": self.claimed,
            "passed": self.passed,
            "cases": self.cases,
            "passed_cases": self.passed_cases,
            "percent": self.percent,
            "failing": list(self.failing),
            "left_out": self.left_out,
        }


def profile_results(
    results: Iterable[CaseResult], claimed: Sequence[str] = (), left_out: Mapping[str, int] | None = None
) -> list[ProfileResult]:
    """One result per profile, in the table's order, zeros included; ``left_out`` counts each
    profile's cases that the run's ``--filter`` did not select (R-PROF-2c)."""
    cases: dict[str, int] = dict.fromkeys(_BY_NAME, 0)
    passed: dict[str, int] = dict.fromkeys(_BY_NAME, 0)
    judged: dict[str, int] = dict.fromkeys(_BY_NAME, 0)
    failing: dict[str, list[str]] = {name: [] for name in _BY_NAME}
    for result in results:
        name = profile_of(result.case)
        cases[name] += 1
        passed[name] += result.outcome == "passed"
        judged[name] += result.outcome not in NOT_JUDGED
        if result.outcome in ("failed", "errored"):
            failing[name].append(result.case.id)
    return [
        ProfileResult(
            p,
            p.name in claimed,
            cases[p.name],
            passed[p.name],
            tuple(failing[p.name]),
            judged[p.name],
            (left_out or {}).get(p.name, 0),
        )
        for p in PROFILES
    ]


def left_out_cases(every_case: Iterable[Case], selected: Iterable[Case]) -> dict[str, int]:
    """How many of each profile's cases ``--filter`` did not select (R-PROF-2c), counted on
    the cases as loaded (a session case's PostgreSQL run is not a case of its own here)."""
    chosen = {case.id for case in selected}
    counts: dict[str, int] = {}
    for case in every_case:
        if case.id not in chosen:
            name = profile_of(case)
            counts[name] = counts.get(name, 0) + 1
    return counts


def profile_line(results: Iterable[ProfileResult]) -> str:
    """``harness9 conformance: core ✓ sessions ✓ providers 98% (claimed)``: profiles with cases."""
    parts = [
        f"{result.profile.name} {result.verdict}" + (" (claimed)" if result.unmet else "")
        for result in results
        if result.cases
    ]
    return " ".join([LINE_PREFIX, *parts]) if parts else f"{LINE_PREFIX} no case run"


def junit_profile_suite(root: ET.Element, results: Sequence[ProfileResult]) -> None:
    """Add ``<testsuite name="profiles">``, one testcase per profile with cases in the run.

    As for requirements (``_requirements.junit_requirement_suites``), dashboards show testcases
    only: a claimed profile not passed is a ``<failure>``, one neither passed nor claimed is
    ``<skipped>``, so that it does not read as a pass.
    """
    judged = [result for result in results if result.cases]
    element = ET.SubElement(
        root,
        "testsuite",
        name="profiles",
        tests=str(len(judged)),
        failures=str(sum(result.unmet for result in judged)),
        errors="0",
        skipped=str(sum(not result.passed and not result.unmet for result in judged)),
    )
    for result in judged:
        case = ET.SubElement(element, "testcase", classname="profiles", name=result.profile.name)
        line = f"{result.profile.name}: {result.passed_cases} of {result.cases} cases passed"
        if result.unmet:
            ET.SubElement(case, "failure", message=f"{line}; claimed").text = _ids_text(result)
        elif not result.passed:
            ET.SubElement(case, "skipped", message=f"{line}; not claimed")


def _ids_text(result: ProfileResult) -> str:
    return f"failing cases: {', '.join(result.failing)}" if result.failing else "no case failed"
