"""Clearing stale tool results and what a summary message carries (SPEC R-LONG-11 … R-LONG-14).

The conformance cases pin the texts and the engine's use of them; these check the properties
that hold for any history: clearing never breaks a pair, never touches a message at or past the
watermark, and the watermark it proposes leaves the newest results alone; the quoted requests
read back exactly and stay within their bound.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness9_ref.memory.context import (
    CLEAR_KEEP_RESULTS,
    REQUESTS_HEADER,
    carried_requests,
    clear_below,
    cleared_placeholder,
    next_watermark,
    recent_requests,
    summarizer_part,
    summary_body,
)
from harness9_ref.memory.context._tokens import utf8_len
from harness9_ref.planning import PLAN_HEADER, TodoItem, plan_block
from harness9_ref.schema import ROLE_ASSISTANT, ROLE_SYSTEM, ROLE_USER, Message, ToolCall

PROPERTY = settings(max_examples=100, deadline=None)


def _history(sizes: list[int], names: list[str]) -> list[Message]:
    msgs = [Message(ROLE_SYSTEM, "SYS"), Message(ROLE_USER, "go")]
    for i, (size, name) in enumerate(zip(sizes, names)):
        msgs.append(Message(ROLE_ASSISTANT, "", (ToolCall(f"c{i}", name, "{}"),)))
        msgs.append(Message(ROLE_USER, "x" * size, tool_call_id=f"c{i}"))
    return msgs


steps = st.lists(st.tuples(st.integers(0, 400), st.sampled_from(("bash", "read_file", "recall", "todo"))), max_size=12)


@PROPERTY
@given(steps, st.integers(0, 30))
def test_clearing_keeps_pairs_and_stops_at_the_watermark(spec: list[tuple[int, str]], watermark: int) -> None:
    msgs = _history([s for s, _ in spec], [n for _, n in spec])
    view, count = clear_below(msgs, 1, 0, watermark)
    assert len(view) == len(msgs)
    assert [(m.role, m.tool_call_id, m.tool_calls) for m in view] == [(m.role, m.tool_call_id, m.tool_calls) for m in msgs]
    changed = [i for i, (a, b) in enumerate(zip(view, msgs)) if a != b]
    assert len(changed) == count
    for i in changed:
        assert i - 1 < watermark  # position = index - 1 here
        assert msgs[i].tool_call_id and utf8_len(view[i].content) < utf8_len(msgs[i].content)


@PROPERTY
@given(steps)
def test_the_proposed_watermark_leaves_the_newest_results(spec: list[tuple[int, str]]) -> None:
    msgs = _history([s for s, _ in spec], [n for _, n in spec])
    split = len(msgs)
    watermark = next_watermark(msgs, 1, split, 0, 0)
    view, _ = clear_below(msgs, 1, 0, watermark)
    clearable = [
        i for i in range(1, split)
        if msgs[i].tool_call_id and msgs[i - 1].tool_calls[0].name in ("bash", "read_file")
        and utf8_len(cleared_placeholder(msgs[i - 1].tool_calls[0].name, len(msgs[i].content), i - 1)) < len(msgs[i].content)
    ]
    kept = [i for i in clearable if view[i] == msgs[i]]
    assert len(kept) == min(len(clearable), CLEAR_KEEP_RESULTS)
    assert kept == clearable[len(clearable) - len(kept):]


def test_a_watermark_never_moves_back() -> None:
    msgs = _history([500] * 5, ["bash"] * 5)
    assert next_watermark(msgs, 1, len(msgs), 0, 9) == 9


@PROPERTY
@given(st.lists(st.text(min_size=1, max_size=40), max_size=8), st.integers(0, 200))
def test_quoted_requests_read_back_exactly(texts: list[str], budget: int) -> None:
    head = [Message(ROLE_USER, t) for t in texts]
    quoted = recent_requests([], head, budget)
    body = summary_body("the summary", quoted, None, "")
    assert carried_requests(body) == quoted
    assert summarizer_part(body) == "the summary"
    if texts and utf8_len(texts[-1]) > budget:
        assert len(quoted) == (1 if budget > 0 else 0)  # the newest alone, shortened
    else:
        assert quoted == texts[len(texts) - len(quoted) :]
        assert sum(utf8_len(t) for t in quoted) <= budget


def test_results_summaries_and_empty_messages_are_not_requests() -> None:
    head = [
        Message(ROLE_USER, "keep the API"),
        Message(ROLE_USER, "output", tool_call_id="c1"),
        Message(ROLE_USER, "[Conversation Summary]\nold"),
        Message(ROLE_USER, ""),
        Message(ROLE_ASSISTANT, "sure"),
    ]
    assert recent_requests(["earlier"], head, 1000) == ["earlier", "keep the API"]


def test_the_plan_block_and_the_summarizers_part() -> None:
    plan = plan_block([TodoItem("1", "read", "completed"), TodoItem("2", "fix", "pending")])
    assert plan == f"{PLAN_HEADER}\n- [completed] read\n- [pending] fix"
    assert plan_block([]) == ""
    body = summary_body("S\n\nmore", ["a\nb"], 7, plan)
    assert summarizer_part(body) == "S\n\nmore"
    assert f"\n\n{REQUESTS_HEADER}\n- \"a\\nb\"\n\n{PLAN_HEADER}" in body
    assert "Messages 0 to 7 of this session" in body
