"""Repair of orphaned tool calls and results (harness9_ref/memory/context/_repair.py; SPEC R-REP-1 … R-REP-7)."""

from __future__ import annotations

import copy
import time

import pytest

from harness9_ref.memory.context import STUB_TEXT, repair_orphaned_tool_pairs
from harness9_ref.schema import Message
from tests import literal_seed
from tests.fakes import assistant, call, result, stub, system, user

# (name, input, expected output)
CASES: list[tuple[str, list[Message], list[Message]]] = [
    ("empty", [], []),
    (
        "well-formed history",
        [system(), user("hi"), assistant("", call("a"), call("b")), result("a"), result("b"), assistant("done")],
        [system(), user("hi"), assistant("", call("a"), call("b")), result("a"), result("b"), assistant("done")],
    ),
    (
        "type A: result whose call was cut off",
        [system(), result("x", "total 0"), assistant("The directory is empty.")],
        [system(), assistant("The directory is empty.")],
    ),
    (
        "type B: call whose result was cut off",
        [system(), assistant("", call("x")), assistant("The directory is empty.")],
        [system(), assistant("", call("x")), stub("x"), assistant("The directory is empty.")],
    ),
    (
        "stubs in call order, before the message's existing results",
        [system(), assistant("", call("a"), call("b"), call("c")), result("b")],
        [system(), assistant("", call("a"), call("b"), call("c")), stub("a"), stub("c"), result("b")],
    ),
    (
        "a result anywhere in the input answers a call, even before it",
        [system(), result("late"), user("go on"), assistant("", call("late"))],
        [system(), result("late"), user("go on"), assistant("", call("late"))],
    ),
    (
        "duplicated and out-of-order results are kept",
        [system(), assistant("", call("a"), call("b")), result("b"), result("a"), result("a", "again")],
        [system(), assistant("", call("a"), call("b")), result("b"), result("a"), result("a", "again")],
    ),
    (
        "a call with an empty id is answered by any message without a tool_call_id",
        [system(), assistant("", call(""))],
        [system(), assistant("", call(""))],
    ),
    (
        "two calls sharing an id are both answered by one result",
        [system(), assistant("", call("d")), result("d"), assistant("", call("d"))],
        [system(), assistant("", call("d")), result("d"), assistant("", call("d"))],
    ),
    (
        "two calls sharing an id without a result each get a stub",
        [system(), assistant("", call("d")), assistant("", call("d"))],
        [system(), assistant("", call("d")), stub("d"), assistant("", call("d")), stub("d")],
    ),
    (
        "a call with an empty id gets a stub, with an empty tool_call_id, only when every message is a result",
        [Message("assistant", "", (call("r"), call("")), "r")],
        [Message("assistant", "", (call("r"), call("")), "r"), Message("user", STUB_TEXT)],
    ),
    (
        "two unanswered calls sharing an id in one message each get a stub",
        [system(), assistant("", call("d"), call("d"))],
        [system(), assistant("", call("d"), call("d")), stub("d"), stub("d")],
    ),
    (
        "a message without a system prompt is repaired too",
        [result("x"), assistant("", call("y"))],
        [assistant("", call("y")), stub("y")],
    ),
    (
        "an existing stub counts as a result",
        [system(), assistant("", call("a")), stub("a"), result("gone")],
        [system(), assistant("", call("a")), stub("a")],
    ),
    (
        "a message with both calls and an orphaned tool_call_id is dropped with its calls",
        [system(), Message("user", "odd", (call("a"),), "ghost"), result("a")],
        [system(), result("a")],
    ),
]


@pytest.mark.parametrize(("msgs", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_repair(msgs: list[Message], expected: list[Message]) -> None:
    assert repair_orphaned_tool_pairs(msgs) == expected


@pytest.mark.parametrize("msgs", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_repair_matches_the_literal_seed(msgs: list[Message]) -> None:
    assert repair_orphaned_tool_pairs(msgs) == literal_seed.repair_orphaned_tool_pairs(msgs)


def test_the_stub_is_the_user_message_d5_names() -> None:
    assert STUB_TEXT == "[context truncated]"
    (_, inserted) = repair_orphaned_tool_pairs([assistant("", call("call_9"))])
    assert inserted.to_dict() == {"role": "user", "content": "[context truncated]", "tool_call_id": "call_9"}


def test_repair_returns_a_new_list_and_leaves_the_input_alone() -> None:
    msgs = [system(), result("x"), assistant("", call("y"))]
    snapshot = copy.deepcopy(msgs)
    assert repair_orphaned_tool_pairs(msgs) == [system(), assistant("", call("y")), stub("y")]
    assert msgs == snapshot
    well_formed = [system(), user("hi")]
    assert repair_orphaned_tool_pairs(well_formed) is not well_formed


def test_repair_accepts_a_tuple() -> None:
    assert repair_orphaned_tool_pairs((assistant("", call("y")),)) == [assistant("", call("y")), stub("y")]


def test_repair_runs_in_linear_time() -> None:
    # No call has a result, so the seed's nested loop scans the whole history for each of the
    # 20000 calls (4e8 comparisons, minutes); a linear repair takes milliseconds.
    msgs = [system(), *(assistant("", call(f"call_{i}")) for i in range(20_000))]
    started = time.perf_counter()
    repaired = repair_orphaned_tool_pairs(msgs)
    elapsed = time.perf_counter() - started
    assert repaired[-2:] == [msgs[-1], stub("call_19999")]
    assert len(repaired) == 1 + 2 * 20_000
    assert elapsed < 2.0
