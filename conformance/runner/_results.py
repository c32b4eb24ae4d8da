"""A run's results: each case's outcome given the known-failures list, and the run as a whole.

Why a module of its own: the requirement and profile tallies (``_requirements``, ``_profiles``)
and the reports (``_report``) all read these types, and the reports build on the tallies; with
the types here, below all three, none of them imports another in a circle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ._cases import Case
from ._verdicts import Status, Verdict

__all__ = ["OUTCOMES", "CaseResult", "Outcome", "SuiteResult", "case_result"]

Outcome = Literal["passed", "failed", "skipped", "unsupported", "errored", "known_failure"]
OUTCOMES: Final[tuple[Outcome, ...]] = (
    "passed",
    "failed",
    "skipped",
    "unsupported",
    "errored",
    "known_failure",
)
# Outcomes that are printed without -v, and whose protocol lines a trace keeps.
ALWAYS_SHOWN: Final = frozenset({"failed", "errored"})
UNEXPECTED_PASS: Final = "unexpectedly passed, remove it from the known-failures file"


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case's verdict and how it counts, given the known-failures list.

    ``statuses``: the status of each run of the case (one unless ``run --repeat``); ``trace``:
    the protocol lines of a case that failed or errored, with ``run --trace``.
    """

    case: Case
    verdict: Verdict
    outcome: Outcome
    statuses: tuple[Status, ...] = ()
    trace: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether the status changed between repeated runs (R-RUN-4)."""
        return len(set(self.statuses)) > 1

    @property
    def detail(self) -> str:
        """Why the case did not simply pass; empty for a pass."""
        if self.changed:
            runs = ", ".join(self.statuses)
            return f"outcome changes over {len(self.statuses)} runs ({runs}): {self.verdict.detail}"
        return (
            UNEXPECTED_PASS
            if self.verdict.status == "passed" and self.outcome == "failed"
            else self.verdict.detail
        )


@dataclass(frozen=True)
class SuiteResult:
    """A whole run: who was tested, each case's result, and whether it succeeded."""

    implementation: Mapping[str, Any]
    results: tuple[CaseResult, ...]
    known_failures_given: bool = False
    # Requirement ids listed in the known-failures file (see _requirements).
    known_requirements: frozenset[str] = frozenset()
    # Profiles the adapter claims (see _profiles): one not passed fails the run.
    claimed_profiles: tuple[str, ...] = ()
    # Per profile, its cases of the suite that --filter left out of the run (R-PROF-2c).
    left_out: Mapping[str, int] = field(default_factory=dict)

    def counts(self) -> dict[Outcome, int]:
        """How many cases ended in each outcome, zeros included."""
        tally = Counter(result.outcome for result in self.results)
        return {outcome: tally[outcome] for outcome in OUTCOMES}


def case_result(
    case: Case,
    verdict: Verdict,
    *,
    known_failure: bool,
    by_requirement: bool = False,
    statuses: tuple[Status, ...] = (),
    trace: tuple[str, ...] = (),
) -> CaseResult:
    """How a verdict counts: a listed case that fails is a known failure, one that passes fails.

    ``by_requirement``: the case is listed only through a requirement it cites. It fails as a
    known failure too, but a pass is a pass; the requirement's entry is judged as a whole.
    ``statuses`` that differ make the case fail whatever the list says: neither a pass nor a
    known failure can be relied on (R-RUN-4). ``trace`` is kept for a case that fails or errors.
    """
    outcome: Outcome = verdict.status
    if len(set(statuses)) > 1:
        outcome = "failed"
    elif known_failure or by_requirement:
        if verdict.status in ("failed", "errored"):
            outcome = "known_failure"
        elif verdict.status == "passed" and known_failure:
            outcome = "failed"
    return CaseResult(case, verdict, outcome, statuses, trace if outcome in ALWAYS_SHOWN else ())
