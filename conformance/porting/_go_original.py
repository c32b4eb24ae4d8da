"""The Go original's known failures, measured from patches that make the reference behave like it.

Why: ``conformance/known-failures/go-original.txt`` tells a port of the Go original (SPEC.md
Appendix A) which cases it fails and why. Written by hand it went stale with every new case, so
it is computed: each divergence of Appendix A is a patch in ``known-failures/go-original/``
(``A<n>.json``, the seeded-bug edit format) that changes a copy of the Python reference to behave
like the Go code, and ``declared.json`` makes that copy declare its own wording in its start
answer, as a port with the Go texts does (PORTING.md). The copy is run with every patch applied:
its failures are the file's cases. Each of them is then run with each patch alone, and goes to
the group of the last patch, in Appendix order, it fails under (the others name it in a
comment); a failure no single patch explains stops the computation. A case that fails under one
patch alone but not under all of them is no known failure: the Go wording of another patch
makes it unsupported, and a port with that wording never fails it. One group (``"scanned"``) is
found by reading the cases instead: values the Go types cannot carry, which a port meets only
in its own adapter.

``python -m conformance.porting._go_original`` rewrites the file; ``--check`` says whether it is
current (exit status 1 when not). tests/conformance/test_go_original.py checks it on every change.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._suite import run_suite
from ..mutation._mutant_copy import Edit, patched_copy, template
from ..mutation._mutants import isolated_environment
from ..runner._cases import PROJECT_ROOT, Case, load_cases
from ..runner._runner import DEFAULT_ADAPTER_COMMAND, DEFAULT_TIMEOUT

__all__ = ["DIVERGENCES_DIR", "KNOWN_FAILURES", "Divergence", "known_failures_text", "main", "read_divergences"]

DIVERGENCES_DIR: Final = PROJECT_ROOT / "conformance" / "known-failures" / "go-original"
KNOWN_FAILURES: Final = PROJECT_ROOT / "conformance" / "known-failures" / "go-original.txt"
DECLARED: Final = "declared"  # the file of edits every run has: the declaration of the wording
_MEASURED: Final = "measuring the copy with {what}"

HEADER: Final = """\
# Known failures of a faithful port of the Go original (gosundy/harness9, checked at
# c8317596 and HEAD 0ccc650; the functions concerned are the same in both) that declares
# its own wording (summarizer prompts, stub text) in its start answer, as PORTING.md says.
# One group per divergence of GO-ORIGINAL.md; [An] is Appendix A item n.
# Computed, not written by hand: python -m conformance.porting._go_original rewrites this file
# from the patches in conformance/known-failures/go-original/, each making a copy of the Python
# reference behave like the Go code for one divergence (declared.json makes it declare its own
# wording). The cases listed are exactly those `python -m conformance run` fails on the copy
# with every patch applied (but the scanned group's, see there); each is listed under the last
# group whose patch alone fails it, and the other groups whose patch fails it name it in an
# "also fails here" comment. A case failing under one patch alone but not under all of them is
# not listed: the Go wording of another patch makes it unsupported.
# Usage: python -m conformance run --adapter CMD --known-failures conformance/known-failures/go-original.txt
"""
FOOTER: Final = """\
# No group: Appendix A item 7 (the floating-point 5% rule equals R-ENG-6 for every count
# below 2^40) and item 26 (no case gives a summarizing compactor todos); items 5, 6, 9 and 10
# are no divergence of the Go code; items 15 to 17 are features the Go original lacks (a port
# answers their cases as unsupported). A scanned group is found by reading the cases rather
# than by a patch, and its lines are comments.
"""
SCAN_NOTE: Final = """\
# Found by scanning, not measured: a port fails these only where its own type cannot hold
# the text, so they are commented out; uncomment the ones your port fails.
"""


@dataclass(frozen=True)
class Divergence:
    """One group: an Appendix A divergence as a patch of the reference (or a scan of the cases)."""

    group: str
    items: tuple[int, ...]
    title: str
    requirements: tuple[str, ...]
    edits: tuple[Edit, ...]
    scanned: str = ""  # the name of the scan, for a group found by reading the cases


def _edits(data: Mapping[str, Any]) -> tuple[Edit, ...]:
    return tuple(Edit(e["file"], e["find"], e["replace"]) for e in data["edits"])


def read_divergences(folder: Path = DIVERGENCES_DIR) -> tuple[tuple[Edit, ...], list[Divergence]]:
    """The edits every run has, and the groups in Appendix order."""
    declared: tuple[Edit, ...] = ()
    groups = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if path.stem == DECLARED:
            declared = _edits(data)
            continue
        groups.append(Divergence(data["group"], tuple(data["items"]), data["title"], tuple(data["requirements"]),
                                 _edits(data), data.get("scanned", "")))
    return declared, sorted(groups, key=lambda group: group.items)


def _arguments(value: Any) -> Iterator[str]:
    """Every tool call's ``arguments`` text anywhere in a case's input or expect."""
    if isinstance(value, dict):
        calls = value.get("tool_calls")
        if isinstance(calls, list):
            yield from (call["arguments"] for call in calls if isinstance(call, dict) and isinstance(call.get("arguments"), str))
        for member in value.values():
            yield from _arguments(member)
    elif isinstance(value, list):
        for item in value:
            yield from _arguments(item)


def _raw_message_refuses(text: str) -> bool:
    """Whether Go's ``json.RawMessage`` cannot carry the text as it is: empty, not JSON, or with
    white space around the value (its MarshalJSON fails or compacts it)."""
    if text != text.strip(" \t\r\n") or not text:
        return True
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


SCANS: Final = {"arguments": lambda case: any(_raw_message_refuses(text) for text in _arguments([case.input, case.expect]))}


def _failing(template_dir: Path, edits: Sequence[Edit], cases: Sequence[Case], timeout: float) -> list[str]:
    """The ids of the cases that fail or error on the template patched with ``edits``."""
    with patched_copy(template_dir, edits) as copy:
        suite = run_suite(cases, DEFAULT_ADAPTER_COMMAND, cwd=copy, env=isolated_environment(), timeout=timeout)
    return [result.case.id for result in suite.results if result.verdict.status in ("failed", "errored")]


@dataclass(frozen=True)
class Measured:
    """What the runs found: each group's failing case ids, and those of every patch at once."""

    groups: dict[str, list[str]]
    combined: list[str]


def measure(cases: Sequence[Case], *, root: Path = PROJECT_ROOT, folder: Path = DIVERGENCES_DIR,
            workers: int = 2, timeout: float = DEFAULT_TIMEOUT) -> Measured:
    """Run the copy unpatched but for its declaration (every case must pass), with every patch,
    and with each patch alone on the cases the run with every patch fails.

    Raises:
        ValueError: the declaration alone fails cases, so nothing measured would be the patches'.
    """
    declared, groups = read_divergences(folder)
    patches = [group for group in groups if not group.scanned]
    with template(root) as template_dir, ThreadPoolExecutor(max(1, workers)) as pool:
        every = [*declared, *(edit for group in patches for edit in group.edits)]
        baseline = pool.submit(_failing, template_dir, declared, cases, timeout)
        combined = pool.submit(_failing, template_dir, every, cases, timeout).result()
        alone = [case for case in cases if case.id in set(combined)]
        runs = {group.group: pool.submit(_failing, template_dir, [*declared, *group.edits], alone, timeout)
                for group in patches}
        if baseline.result():
            raise ValueError(f"{_MEASURED.format(what='its declaration alone')}: cases fail: {', '.join(baseline.result())}")
        found = {name: run.result() for name, run in runs.items()}
    by_id = {case.id: case for case in cases}
    for group in groups:
        if group.scanned:
            found[group.group] = [case.id for case in cases if SCANS[group.scanned](by_id[case.id])]
    return Measured(found, combined)


def known_failures_text(measured: Measured, cases: Sequence[Case], folder: Path = DIVERGENCES_DIR) -> str:
    """The file's text for what was measured.

    Raises:
        ValueError: a failure of the combined run fails under no patch alone.
    """
    _, groups = read_divergences(folder)
    names = {case.id: case.name for case in cases}
    order = {case.id: n for n, case in enumerate(sorted(cases, key=lambda case: case.name))}
    measured_groups = [group for group in groups if not group.scanned]
    union = {case_id for group in measured_groups for case_id in measured.groups[group.group]}
    if union != set(measured.combined):
        unexplained = sorted(set(measured.combined) - union)
        raise ValueError(f"cases fail with every patch applied but under no patch alone: {', '.join(unexplained)}")
    home = {case_id: group.group for group in measured_groups for case_id in measured.groups[group.group]}
    lines = [HEADER]
    for group in groups:
        failing = sorted(measured.groups[group.group], key=order.__getitem__)
        listed = [case_id for case_id in failing if home.get(case_id, group.group) == group.group]
        items = " and ".join(map(str, group.items))
        lines.append(f"# [{group.group}] Appendix A item{'s' * (len(group.items) > 1)} {items}: {group.title}")
        counts = f"Failing cases: {len(failing)} ({len(listed)} listed here)"
        lines.append(f"# Requirements: {' '.join(group.requirements)}. {counts}.")
        if group.scanned:
            lines.append(SCAN_NOTE.rstrip("\n"))
        prefix = "# " if group.scanned else ""
        lines.extend(f"{prefix}{case_id}  # {names[case_id]}" for case_id in listed)
        elsewhere = [case_id for case_id in failing if case_id not in listed]
        if elsewhere:
            lines.append("# also fails here (listed under the group named):")
            lines.extend(f"#   {case_id}  {names[case_id]}  [{home[case_id]}]" for case_id in elsewhere)
        lines.append("")
    lines.append(FOOTER)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.porting._go_original", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the file is current (exit 1 when not)")
    parser.add_argument("--workers", type=int, default=2, metavar="W")
    args = parser.parse_args(argv)
    cases = load_cases()
    try:
        text = known_failures_text(measure(cases, workers=args.workers), cases)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    current = KNOWN_FAILURES.read_text(encoding="utf-8") == text
    if args.check:
        print(f"{KNOWN_FAILURES.name} is {'current' if current else 'stale: run without --check to rewrite it'}")
        return 0 if current else 1
    KNOWN_FAILURES.write_text(text, encoding="utf-8")
    print(f"wrote {KNOWN_FAILURES}: {sum(1 for line in text.splitlines() if line and not line.startswith('#'))} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
