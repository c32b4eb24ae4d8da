"""conformance/known-failures/go-original.txt is what the Go-mimicking patches give (conformance/GO-ORIGINAL.md).

Why: the file is computed by ``conformance/porting/_go_original.py`` from one patch of the
reference per divergence; a new case, a changed case or a changed patch that would change the
file fails here until the file is written again (``python -m conformance.porting._go_original``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.mutation._mutant_copy import Edit, patched
from conformance.porting._go_original import (
    KNOWN_FAILURES,
    SCANS,
    Divergence,
    Measured,
    known_failures_text,
    measure,
    read_divergences,
)
from conformance.runner._cases import PROJECT_ROOT
from tests.reference import suite_cases


@pytest.mark.tooling  # tier 2 of tests/README.md: the suite run again on each patched copy
def test_the_file_is_what_the_patches_give() -> None:
    cases = suite_cases()
    text = known_failures_text(measure(cases, workers=2), cases)
    assert KNOWN_FAILURES.read_text(encoding="utf-8") == text, (
        "go-original.txt is stale: run python -m conformance.porting._go_original"
    )


def _apply(edits: list[Edit]) -> None:
    texts: dict[str, str] = {}
    for edit in edits:
        text = texts.get(edit.file) or (PROJECT_ROOT / edit.file).read_text(encoding="utf-8")
        texts[edit.file] = patched(edit, text)  # Broken unless its find text occurs once


def test_every_patch_applies_alone_and_with_all_the_others() -> None:
    declared, groups = read_divergences()
    assert declared
    for group in groups:
        assert bool(group.edits) != bool(group.scanned), group.group
        _apply([*declared, *group.edits])
    _apply([*declared, *(edit for group in groups for edit in group.edits)])


def test_groups_are_in_appendix_order_and_name_their_items() -> None:
    _, groups = read_divergences()
    assert [group.items for group in groups] == sorted(group.items for group in groups)
    assert all(group.group == f"A{group.items[0]}" for group in groups)


def _write(folder: Path, name: str, data: str) -> None:
    (folder / f"{name}.json").write_text(data, encoding="utf-8")


def test_a_case_goes_to_the_last_group_it_fails_under_and_is_named_in_the_others(tmp_path: Path) -> None:
    for name, item in (("A1", 1), ("A2", 2)):
        _write(tmp_path, name, f'{{"group": "{name}", "items": [{item}], "title": "t{item}.", '
                               '"requirements": ["R-X-1"], "edits": [{"file": "f", "find": "a", "replace": "b"}]}')
    cases = suite_cases()[:3]
    first, second, third = (case.id for case in cases)
    measured = Measured({"A1": [first, second], "A2": [second, third]}, [first, second, third])
    text = known_failures_text(measured, cases, tmp_path)
    names = {case.id: case.name for case in cases}
    assert (
        f"# [A1] Appendix A item 1: t1.\n# Requirements: R-X-1. Failing cases: 2 (1 listed here).\n"
        f"{first}  # {names[first]}\n# also fails here (listed under the group named):\n#   {second}  {names[second]}  [A2]\n"
    ) in text
    assert "Failing cases: 2 (2 listed here)" in text


def test_a_failure_no_patch_explains_stops_the_computation(tmp_path: Path) -> None:
    _write(tmp_path, "A1", '{"group": "A1", "items": [1], "title": "t.", "requirements": [], '
                           '"edits": [{"file": "f", "find": "a", "replace": "b"}]}')
    cases = suite_cases()[:2]
    with pytest.raises(ValueError, match=f"under no patch alone: {cases[1].id}"):
        known_failures_text(Measured({"A1": [cases[0].id]}, [cases[0].id, cases[1].id]), cases, tmp_path)


@pytest.mark.parametrize(
    ("arguments", "refused"),
    [('{"x":1}', False), ("{}", False), ("", True), ("{not json", True), (' {"x":1}', True), ('{"x":1}\n', True)],
)
def test_the_arguments_scan_finds_what_a_raw_message_cannot_carry(arguments: str, refused: bool) -> None:
    case = suite_cases()[0]
    probe = Divergence("A24", (24,), "", (), (), "arguments")
    data = {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "n", "arguments": arguments}]}]}
    assert SCANS[probe.scanned](replace(case, input=data)) is refused

