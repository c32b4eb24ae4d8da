"""Known-failures files that follow the implementation: ``run --write-known-failures FILE``.

A known-failures file (``read_id_list``) is maintained by hand in groups: comment lines that
say why a group of cases fails, then its ids. Rewriting it from a run must keep that work, so
the update is line by line (SPEC R-RUN-2): comments, blank lines and every entry the run does
not contradict stay where they are; an entry goes only when the run shows it stale (its case
passed, or its requirement's cases were run and none failed), and the failures no entry covers
are appended in one group at the end. Written twice from the same run, the file is the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ._requirements import is_requirement_id
from ._results import CaseResult, SuiteResult

__all__ = ["KnownFailuresUpdate", "entry_line", "failing_results", "updated_known_failures"]

NEW_GROUP: Final = "# Failing in the run that wrote this file, in no group yet:"


@dataclass(frozen=True)
class KnownFailuresUpdate:
    """The file's new text and what changed."""

    text: str
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def entries(self) -> int:
        return sum(1 for line in self.text.splitlines() if _entry(line))


def entry_line(result: CaseResult) -> str:
    """``ID  # area/slug``: the id, and the name a reader looks the case up by."""
    return f"{result.case.id}  # {result.case.name}"


def failing_results(results: Iterable[CaseResult]) -> list[CaseResult]:
    """The results whose case failed or errored in every run (a case whose outcome changed is no
    known failure: listing it would pass or fail the run by chance), in run order. A case's
    PostgreSQL run (``<id>@postgresql``) has no id of its own in the file, so it is left out."""
    return [
        result
        for result in results
        if result.verdict.status in ("failed", "errored") and not result.changed and "@" not in result.case.id
    ]


def _entry(line: str) -> str:
    words = line.split("#", 1)[0].split()
    return words[0] if words else ""


def _stale(entry: str, results: Iterable[CaseResult], failing: set[str]) -> bool:
    """Whether the run shows the entry wrong: a case that passed, or a requirement whose cases ran
    and none failed. An entry the run did not reach (filtered out, unsupported) stays."""
    if is_requirement_id(entry):
        citing = [result for result in results if entry in result.case.spec]
        return bool(citing) and not any(result.case.id in failing for result in citing) \
            and any(result.verdict.status == "passed" for result in citing)
    return any(result.case.id == entry and result.verdict.status == "passed" for result in results)


def updated_known_failures(suite: SuiteResult, old: str | None) -> KnownFailuresUpdate:
    """The known-failures file for ``suite``: ``old`` updated in place, or a new file when None."""
    results = suite.results
    failing_list = failing_results(results)
    failing = {result.case.id for result in failing_list}
    kept_lines: list[str] = []
    removed: list[str] = []
    for line in [] if old is None else old.splitlines():
        entry = _entry(line)
        if entry and _stale(entry, results, failing):
            removed.append(entry)
        else:
            kept_lines.append(line)
    kept = {_entry(line) for line in kept_lines} - {""}
    new = [
        result for result in failing_list
        if result.case.id not in kept and not any(requirement in kept for requirement in result.case.spec)
    ]
    if old is None:
        name = " ".join(str(suite.implementation.get(key, "")) for key in ("name", "version")).strip()
        kept_lines = [
            f"# Known failures of {name or 'the adapter'}, one case id a line (# starts a comment).",
            "# Written by python -m conformance run --write-known-failures; group and explain them.",
        ]
    if new:
        if kept_lines and kept_lines[-1].strip():
            kept_lines.append("")
        kept_lines.append(NEW_GROUP)
        kept_lines.extend(entry_line(result) for result in new)
    return KnownFailuresUpdate(
        "\n".join(kept_lines) + "\n", tuple(result.case.id for result in new), tuple(removed)
    )
