"""The ``memory_session`` op answers every session case's session-level steps as ``session`` does.

R-SES-9 says a MemorySession behaves as a stored session except for persistence. The suite's
``memory_session`` cases check a port's in-memory sessions; this checks the reference's own
two ops against each other on every ``session`` case that only makes sessions with chosen ids
and acts on them (no Manager step, no file, no second manager), so a new session case widens
this check too.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from conformance.reference._session import MEMORY_STEPS, op_memory_session, op_session
from tests.reference import suite_cases

# The case members a memory run cannot take: files laid out, a fixture database, other managers.
_LAYOUT = ("fixture", "files", "symlinks", "second_managers")


def _memory_form(steps: list[dict[str, Any]]) -> bool:
    return all(
        step.get("manager", "a") == "a"
        and (step["do"] in MEMORY_STEPS or (step["do"] == "new" and "id" in step and not step.get("draft")))
        for step in steps
    )


CASES = [
    case for case in suite_cases()
    if case.op == "session" and not any(key in case.input for key in _LAYOUT) and _memory_form(case.input["steps"])
]


def test_enough_session_cases_have_a_memory_form() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_memory_sessions_answer_as_stored_ones(case: Any) -> None:
    steps = case.input["steps"]
    with tempfile.TemporaryDirectory() as folder:
        stored = op_session({"database": str(Path(folder) / "sessions.db"), "tool_results_dir": folder, "steps": steps})
    in_memory = op_memory_session({"steps": steps})
    want = [{"ok": None} if step["do"] == "new" and "ok" in answer else answer for step, answer in zip(steps, stored["steps"])]
    assert in_memory["steps"] == want
