"""The reference adapter dressed up as a port with its own wording, ids or clock.

Why: the runner's rewriting of wording and its relaxed checks for own ids and clocks must let
a port whose logic is right pass, and still catch one whose logic is wrong. Faking that by
rewriting the reference's answers would only test the rewriting against itself; instead this
adapter changes the reference's own constants, id factory and clock in process, so its prompt
sizes, pieces and timings are those a real port with these choices would have.

Usage: ``porting.py MODE...`` with modes ``wording``, ``own-ids``, ``own-clock`` and the
logic bugs ``bug-split`` (one message too few summarised) and ``bug-limit`` (``get`` with a
limit returns the oldest messages, not the newest) and ``bug-clock`` (the own clock runs an
hour behind).
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import conformance.reference_adapter as reference
from conformance.reference import _session
from harness9_ref.memory.context import _repair, _summarize
from harness9_ref.schema import messages_to_list

WORDING = {
    "summary_system_prompt": "You condense a coding agent's conversation.\n\nUse the sections "
    "Goal, Progress, Key Decisions, Next Steps and Critical Context.",
    "summary_first_prompt": "Summarize the following messages.\n\n{conversation}\n\nEnd of messages.",
    "summary_incremental_prompt": "Summary so far:\n{previous_summary}\n---\nMerge these "
    "messages into it:\n{conversation}",
    "summary_marker": "[Previous conversation summary]",
    "stub_text": "[tool result removed: context truncated]",
    "summary_focus": "\n\nFocus on: {focus}",
}
MODES = set(sys.argv[1:])


def _use_wording() -> None:
    _summarize.SUMMARY_SYSTEM_PROMPT = WORDING["summary_system_prompt"]  # type: ignore[misc]
    _summarize.SUMMARY_FIRST_PROMPT = WORDING["summary_first_prompt"]  # type: ignore[misc]
    _summarize.SUMMARY_INCREMENTAL_PROMPT = WORDING["summary_incremental_prompt"]  # type: ignore[misc]
    _summarize.SUMMARY_MARKER = WORDING["summary_marker"]  # type: ignore[misc]
    _repair.STUB_TEXT = WORDING["stub_text"]  # type: ignore[misc]
    _summarize.SUMMARY_FOCUS = WORDING["summary_focus"]  # type: ignore[misc]


class _OwnClockRun(_session._Run):
    """A run whose Manager reads the wall clock and never the case's."""

    @property
    def now(self) -> float:
        # bug-clock: local time of a zone one hour behind UTC, a classic porting slip
        return int(time.time()) - (3600 if "bug-clock" in MODES else 0)

    @now.setter
    def now(self, value: float) -> None:
        pass


def _own_ids(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fresh ids for new steps, the case's ids read as them in later steps (the alias table)."""
    alias: dict[str, str] = {}
    out = []
    for step in steps:
        step = dict(step)
        if step.get("do") == "new" and "id" in step:
            alias[step["id"]] = str(uuid.uuid4())
        if "id" in step and step["id"] in alias:
            step["id"] = alias[step["id"]]
        out.append(step)
    return out


def main() -> int:
    if "wording" in MODES:
        _use_wording()
    if "bug-split" in MODES:
        original = _summarize.SummarizationCompactor.tail_messages.fget  # type: ignore[attr-defined]
        _summarize.SummarizationCompactor.tail_messages = property(  # type: ignore[method-assign, assignment]
            lambda self: original(self) + 1
        )
    if "own-clock" in MODES:
        _session._Run = _OwnClockRun  # type: ignore[misc]
    if "bug-limit" in MODES:
        steps: Any = _session.STEPS

        def oldest(run: Any, name: str, step: Any) -> Any:
            messages = run.session(name, step).get_messages(0)
            limit = step.get("limit", 0)
            return messages_to_list(messages[:limit] if limit > 0 else messages)

        steps["get"] = oldest
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "stop":
            return 0
        if request["cmd"] == "start":
            reply: dict[str, Any] = {
                "protocol": 1,
                "implementation": {"name": "porting-fake", "version": "0", "language": "python"},
                "ops": sorted(reference.OPS),
            }
            if "wording" in MODES:
                reply["wording"] = WORDING
            if "own-ids" in MODES:
                reply["session_ids"] = "own"
            if "own-clock" in MODES:
                reply["clock"] = "own"
        else:
            if "own-ids" in MODES and request.get("op") == "session":
                request["input"] = {**request["input"], "steps": _own_ids(request["input"]["steps"])}
            reply = reference.handle(request)
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
