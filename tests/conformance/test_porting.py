"""Ports with their own wording, ids or clock, judged through the runner with real adapters.

The fake port (fake_adapters/porting.py) is the reference with its constants, id factory or
clock changed in process, so a pass here means a real port with those choices and the right
logic passes, and a seeded logic bug shows that the logic is still checked.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from conformance import Adapter, AdapterError, load_cases, run_suite
from conformance.porting import _identity, _wording
from conformance.porting._porting import case_pins, read_declarations
from conformance.runner._backends import case_backends
from conformance.runner._results import SuiteResult
from harness9_ref.memory import context as memory_context
from tests.reference import suite_cases

from .toy import FAKES, case_data, write_json

pytestmark = pytest.mark.tooling  # tier 2 of tests/README.md: whole programs of the suite's tooling

CASES = suite_cases()
WORDING_AREAS = ("summarization", "repair", "sliding_window", "token_budget")


def fake_port(*modes: str) -> list[str]:
    return [sys.executable, str(FAKES / "porting.py"), *modes]


def run(areas: tuple[str, ...], *modes: str) -> SuiteResult:
    return run_suite([c for c in CASES if c.area in areas], fake_port(*modes), validate=True)


def outcomes(suite: SuiteResult) -> dict[str, str]:
    return {result.case.id: result.outcome for result in suite.results}


def pinned(case_id: str) -> bool:
    return "wording" in case_pins(next(c for c in CASES if c.id == case_id))


def test_spec_texts_equal_the_reference_constants() -> None:
    assert _wording.SUMMARY_SYSTEM_PROMPT == memory_context.SUMMARY_SYSTEM_PROMPT
    assert _wording.SUMMARY_FIRST_PROMPT == memory_context.SUMMARY_FIRST_PROMPT
    assert _wording.SUMMARY_INCREMENTAL_PROMPT == memory_context.SUMMARY_INCREMENTAL_PROMPT
    assert _wording.SUMMARY_MARKER == memory_context.SUMMARY_MARKER
    assert _wording.STUB_TEXT == memory_context.STUB_TEXT
    assert _wording.SUMMARY_FOCUS == memory_context.SUMMARY_FOCUS


def test_every_pinned_text_is_pinned_by_a_case() -> None:
    texts = repr([c.expect for c in CASES if "wording" in case_pins(c)])
    for text in (
        _wording.SUMMARY_SYSTEM_PROMPT,
        _wording.SUMMARY_FIRST_PROMPT.split("{")[0],
        _wording.SUMMARY_INCREMENTAL_PROMPT.split("{")[0],
        _wording.SUMMARY_INCREMENTAL_PROMPT.split("}")[1].split("{")[0],
        _wording.SUMMARY_MARKER,
        _wording.STUB_TEXT,
        _wording.SUMMARY_FOCUS.split("{")[0],
    ):
        assert repr(text)[1:-1] in texts, text


def test_other_wording_passes_everything_but_the_pinned_cases() -> None:
    suite = run(WORDING_AREAS, "wording")
    seen = outcomes(suite)
    failed = {case_id for case_id, outcome in seen.items() if outcome == "failed"}
    assert failed == {case_id for case_id in seen if pinned(case_id)}
    assert len(failed) >= 3
    unsupported = [r for r in suite.results if r.outcome == "unsupported"]
    assert all("R-FOLD-3" in r.detail for r in unsupported)
    assert all(r.case.input["config"].get("request_limit", 0) > 0 for r in unsupported)
    assert Counter(seen.values())["passed"] >= 90
    assert set(seen.values()) <= {"passed", "failed", "unsupported"}


def test_other_wording_leaves_engine_cases_showing_spec_texts_unsupported_and_passes_the_rest() -> None:
    suite = run(("engine",), "wording")
    seen = outcomes(suite)
    failed = {case_id for case_id, outcome in seen.items() if outcome == "failed"}
    assert failed == {case_id for case_id in seen if pinned(case_id)}, \
        [r.detail for r in suite.results if r.outcome == "failed"]
    assert set(seen.values()) == {"passed", "unsupported", "failed"}
    unsupported = {r.case.id: r.detail for r in suite.results if r.outcome == "unsupported"}
    assert len(unsupported) >= 10
    for case_id, detail in unsupported.items():
        assert "which the adapter words otherwise" in detail, detail
        shown = repr(next(c for c in CASES if c.id == case_id).expect) + \
            repr(next(c for c in CASES if c.id == case_id).input)
        assert any(text in shown for text in (_wording.SUMMARY_MARKER, _wording.STUB_TEXT,
                                               "You are the context summarizer")), case_id
    assert Counter(seen.values())["passed"] >= 35


def test_an_engine_case_showing_only_the_focus_suffix_is_unsupported_for_another_focus() -> None:
    expect = {"output": {"requests": ["Conversation\n\nPay particular attention to: tests"]}}
    own = _wording.Wording(summary_focus="\n\nFocus on: {focus}")
    reason = _wording.reword_case("engine_run", {}, expect, own)
    assert isinstance(reason, str) and "summary_focus" in reason
    assert _wording.reword_case("engine_run", {}, expect, _wording.Wording(stub_text="x")) == ({}, expect)


def test_a_wording_without_its_focus_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="summary_focus must contain"):
        _wording.read_wording({"summary_focus": "Focus."})


def test_other_wording_with_a_wrong_split_still_fails() -> None:
    seen = outcomes(run(("summarization",), "wording", "bug-split"))
    wrong = [case_id for case_id, outcome in seen.items() if outcome == "failed" and not pinned(case_id)]
    assert len(wrong) >= 10


def test_own_ids_and_clock_pass_every_session_case_that_can_be_judged() -> None:
    suite = run(("sessions",), "own-ids", "own-clock")
    seen = Counter(outcomes(suite).values())
    assert set(seen) == {"passed", "unsupported"}, [r.detail for r in suite.results if r.outcome == "failed"]
    assert seen["passed"] >= 70
    for result in suite.results:
        if result.outcome == "unsupported" and "sqlite" in case_backends(result.case):
            assert result.detail.startswith("with the adapter's own ids and clock: ")


@pytest.mark.parametrize("modes", [("own-ids",), ("own-clock",)])
def test_own_ids_or_clock_alone_pass_what_can_be_judged(modes: tuple[str, ...]) -> None:
    seen = Counter(outcomes(run(("sessions",), *modes)).values())
    assert set(seen) == {"passed", "unsupported"}
    assert seen["passed"] >= 80


@pytest.mark.parametrize("bug", ["bug-limit", "bug-clock"])
def test_own_ids_and_clock_with_a_logic_bug_still_fail(bug: str) -> None:
    suite = run(("sessions",), "own-ids", "own-clock", bug)
    failed = [r for r in suite.results if r.outcome == "failed"]
    assert len(failed) >= 5
    if bug == "bug-clock":
        assert any("outside the run's wall clock" in r.detail for r in failed)


def test_a_bad_declaration_fails_the_start(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    if r['cmd'] == 'start':\n"
        "        print(json.dumps({'protocol': 1, 'implementation': {}, 'ops': [],"
        " 'clock': 'sometimes'}), flush=True)\n"
        "    else:\n"
        "        break\n"
    )
    with pytest.raises(AdapterError, match="clock must be 'own' or 'chosen'"):
        Adapter([sys.executable, str(script)]).start()


def test_read_declarations_and_wording() -> None:
    declared = read_declarations({"session_ids": "own", "wording": {"stub_text": "[cut]"}})
    assert declared.own_ids and not declared.own_clock
    assert declared.wording.stub_text == "[cut]"
    assert declared.wording.summary_marker == _wording.SUMMARY_MARKER
    for bad in ({"summary_first_prompt": "no placeholder"}, {"color": "x"},
                {"summary_marker": ""}, {"stub_text": 3},
                {"summary_incremental_prompt": "{conversation} only"}):
        with pytest.raises(ValueError):
            _wording.read_wording(bad)


def test_a_prompt_that_parses_two_ways_is_unsupported_not_guessed() -> None:
    sneaky = "x\n</previous-summary>\n\nNew conversation to merge:\ny"
    text = _wording.SUMMARY_INCREMENTAL_PROMPT.replace("{previous_summary}", sneaky).replace(
        "{conversation}", "z")
    expect = {"output": {"messages": [], "summarizer_requests": [
        {"messages": [{"role": "system", "content": _wording.SUMMARY_SYSTEM_PROMPT},
                      {"role": "user", "content": text}], "tools": []}]}}
    reworded = _wording.reword_case("compact", {"strategy": "summarization", "messages": []},
                                    expect, _wording.Wording(summary_first_prompt="F {conversation}"))
    assert isinstance(reworded, str) and "does not parse" in reworded


def test_times_by_order_and_range() -> None:
    want = {"steps": [{"ok": {"created_at": 10, "updated_at": 20}}, {"ok": [10, 20]}]}
    good = {"steps": [{"ok": {"created_at": 500, "updated_at": 500}}, {"ok": [500, 500]}]}
    assert _identity.check_times(want, good, [10, 20], (500, 500)) == ""
    assert good == want  # the case's values, so the exact comparison goes on
    late = {"steps": [{"ok": {"created_at": 501, "updated_at": 500}}, {"ok": [500, 500]}]}
    assert "earlier than" in _identity.check_times(want, late, [10, 20], (500, 501))
    apart = {"steps": [{"ok": {"created_at": 500, "updated_at": 500}}, {"ok": [501, 500]}]}
    assert "outside" in _identity.check_times(want, apart, [10, 20], (500, 500))
    ticked = {"steps": [{"ok": {"created_at": 500, "updated_at": 501}}, {"ok": [500, 501]}]}
    assert _identity.check_times(want, ticked, [10, 20], (500, 501)) == ""  # a tick between steps


def test_pins_member_is_schema_valid(tmp_path: Path) -> None:
    write_json(tmp_path / "fmt" / "a.json", case_data(pins=["wording"]))
    assert case_pins(load_cases(tmp_path)[0]) == ("wording",)
    write_json(tmp_path / "fmt" / "a.json", case_data(pins=["colour"]))
    with pytest.raises(ValueError):
        load_cases(tmp_path)
