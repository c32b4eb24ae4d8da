"""Properties of repair and of the three compactors on random histories (SPEC R-REP, R-CMP, R-SW, R-TB).

The histories are what a long agent conversation can leave behind once it has been truncated,
resumed or interrupted: parallel tool calls, results out of order, duplicated or missing,
results whose call is gone, earlier summaries, and text from every Unicode plane.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from harness9_ref.memory.context import (
    DEFAULT_MAX_MESSAGES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MIN_TAIL_MESSAGES,
    SUMMARY_MARKER,
    Compactor,
    SlidingWindowCompactor,
    SummarizationCompactor,
    TokenBudgetCompactor,
    estimate_tokens,
    repair_orphaned_tool_pairs,
)
from harness9_ref.schema import ROLES, Message, ToolCall
from tests import literal_seed
from tests.fakes import RecordingSummarizer, assistant, is_stub, result, summary_message, system, user

PROPERTY = settings(max_examples=100, deadline=None)

# Any code point but a lone surrogate; most histories hold some non-BMP text.
texts = st.text(max_size=30)
summaries = st.text(max_size=20).map(lambda s: f"**Goal:** {s}")
TOOL_NAMES = ("bash", "read_file", "write_file", "读取")
# Ids of results whose call is elsewhere or nowhere: some match generated call ids on purpose.
stray_ids = st.sampled_from(("ghost", "call_1", "call_2", "call_3", "shared"))
KINDS = ("user", "assistant", "tool calls", "tool calls", "tool calls", "stray result", "summary")
# Built once, not at every draw (Hypothesis validates each strategy object it is given).
kind_lists = st.lists(st.sampled_from(KINDS), max_size=12)
call_choices = st.lists(st.integers(0, 19), min_size=1, max_size=3)
damages = st.integers(0, 7)


@st.composite
def _history(draw: st.DrawFn) -> list[Message]:
    """A system prompt followed by a random, possibly damaged, agent conversation."""
    msgs = [system(draw(texts))]
    next_id = 0
    for kind in draw(kind_lists):
        if kind == "user":
            msgs.append(user(draw(texts)))
        elif kind == "assistant":
            msgs.append(assistant(draw(texts)))
        elif kind == "stray result":
            msgs.append(result(draw(stray_ids), draw(texts)))
        elif kind == "summary":
            msgs.append(summary_message(draw(texts)))
        else:
            calls = []
            # 0 and 1: an empty or a shared id; otherwise a fresh one.
            for choice in draw(call_choices):
                next_id += 1
                call_id = ("", "shared")[choice] if choice < 2 else f"call_{next_id}"
                calls.append(ToolCall(call_id, TOOL_NAMES[choice % len(TOOL_NAMES)], draw(texts)))
            msgs.append(assistant(draw(texts), *calls))
            # Usually every call is answered in order; sometimes results are missing,
            # shuffled or duplicated.
            damage = draw(damages)
            answered = [c.id for c in calls if c.id]
            if damage == 1:
                answered = [call_id for call_id in answered if draw(st.booleans())]
            elif damage == 2:
                answered = draw(st.permutations(answered))
            elif damage == 3 and answered:
                answered.append(answered[0])
            elif damage == 4:
                answered = []
            msgs.extend(result(call_id, draw(texts)) for call_id in answered)
    return msgs


histories = _history()
messages = st.builds(
    Message,
    st.sampled_from(ROLES),
    texts,
    st.lists(st.builds(ToolCall, texts, texts, texts), max_size=3),
    texts,
)


def assert_pairs_complete(msgs: list[Message]) -> None:
    """Every result answers a call in ``msgs`` and every call has a result there (ids compared as the seed does)."""
    call_ids = {c.id for m in msgs for c in m.tool_calls}
    result_ids = {m.tool_call_id for m in msgs}
    assert all(m.tool_call_id in call_ids for m in msgs if m.tool_call_id)
    assert call_ids <= result_ids


def assert_keeps_newest(out: list[Message], msgs: list[Message], count: int) -> None:
    """``out`` ends with the newest ``count`` messages of ``msgs``, less the results whose call is
    not in ``out``, with only stub results inserted between them."""
    call_ids = {c.id for m in out for c in m.tool_calls}
    expected = [m for m in msgs[len(msgs) - count :] if not m.tool_call_id or m.tool_call_id in call_ids]
    remaining = len(expected)
    for msg in reversed(out):
        if remaining == 0:
            break
        if msg == expected[remaining - 1]:
            remaining -= 1
        else:
            assert is_stub(msg), f"{msg!r} is neither one of the newest messages nor a stub"
    assert remaining == 0


def assert_input_in_order(out: list[Message], msgs: list[Message], skip: int) -> None:
    """After ``skip`` leading messages, ``out`` without stubs is a subsequence of ``msgs``."""
    remaining = iter(msgs[1:])
    for msg in out[skip:]:
        assert is_stub(msg) or any(msg == m for m in remaining), f"{msg!r} is not in the input after the one before it"


def tail_of(min_tail: int) -> int:
    return min_tail if min_tail > 0 else DEFAULT_MIN_TAIL_MESSAGES


def window_of(max_messages: int) -> int:
    return DEFAULT_MAX_MESSAGES if max_messages <= 0 else max(max_messages, 2)


def budgets(msgs: list[Message]) -> st.SearchStrategy[int]:
    """Token budgets from "default" (<= 0) through "everything fits", mostly forcing truncation."""
    return st.integers(-1, estimate_tokens(msgs) + 2)


# A history, a compactor, and the number of newest messages the compactor must keep.
CompactionCase = tuple[list[Message], Compactor, int]


compactor_kinds = st.sampled_from(("budget", "summarize", "sliding"))
min_tails = st.integers(-1, 8)


@st.composite
def compactions(draw: st.DrawFn) -> CompactionCase:
    msgs = draw(histories)
    kind = draw(compactor_kinds)
    if kind == "sliding":
        max_messages = draw(st.integers(-1, len(msgs)))
        return msgs, SlidingWindowCompactor(max_messages), window_of(max_messages) - 1
    max_tokens = draw(budgets(msgs))
    min_tail = draw(min_tails)
    if kind == "budget":
        return msgs, TokenBudgetCompactor(max_tokens, min_tail), tail_of(min_tail)
    summarizer = RecordingSummarizer(draw(summaries))
    return msgs, SummarizationCompactor(summarizer, max_tokens, min_tail), tail_of(min_tail)


@PROPERTY
@given(histories)
def test_repair_matches_the_literal_seed(msgs: list[Message]) -> None:
    assert repair_orphaned_tool_pairs(msgs) == literal_seed.repair_orphaned_tool_pairs(msgs)


@PROPERTY
@given(histories)
def test_after_repair_every_result_has_its_call_and_every_call_a_result(msgs: list[Message]) -> None:
    repaired = repair_orphaned_tool_pairs(msgs)
    assert_pairs_complete(repaired)
    assert repair_orphaned_tool_pairs(repaired) == repaired


@PROPERTY
@given(histories)
def test_estimate_matches_the_literal_seed(msgs: list[Message]) -> None:
    assert estimate_tokens(msgs) == literal_seed.estimate_tokens(msgs)


@PROPERTY
@given(histories, st.integers(-2, 30))
def test_sliding_window_matches_the_literal_seed(msgs: list[Message], max_messages: int) -> None:
    assert SlidingWindowCompactor(max_messages).compact(msgs) == literal_seed.sliding_window_compact(msgs, max_messages)


@PROPERTY
@given(histories, st.integers(-1, 10), st.data())
def test_token_budget_matches_the_literal_seed(msgs: list[Message], min_tail: int, data: st.DataObject) -> None:
    max_tokens = data.draw(budgets(msgs), label="max_tokens")
    expected = literal_seed.token_budget_compact(msgs, max_tokens, min_tail)
    assert TokenBudgetCompactor(max_tokens, min_tail).compact(msgs) == expected


@PROPERTY
@given(compactions())
def test_every_compactor_keeps_the_system_prompt_first(case: CompactionCase) -> None:
    msgs, compactor, _ = case
    assert compactor.compact(msgs)[0] == msgs[0]


@PROPERTY
@given(compactions())
def test_a_compacted_history_has_no_result_without_its_call_and_no_call_without_a_result(case: CompactionCase) -> None:
    msgs, compactor, _ = case
    out = compactor.compact(msgs)
    if out != msgs:
        assert_pairs_complete(out)


@PROPERTY
@given(compactions())
def test_every_compactor_keeps_the_newest_messages(case: CompactionCase) -> None:
    msgs, compactor, count = case
    out = compactor.compact(msgs)
    if out != msgs:
        assert_keeps_newest(out, msgs, count)


@PROPERTY
@given(compactions())
def test_a_compacted_history_is_input_messages_in_order_plus_stubs_and_a_summary(case: CompactionCase) -> None:
    msgs, compactor, _ = case
    out = compactor.compact(msgs)
    if out != msgs:
        summarized = isinstance(compactor, SummarizationCompactor)
        if summarized:
            assert out[1].role == "user" and out[1].content.startswith(f"{SUMMARY_MARKER}\n")
        assert_input_in_order(out, msgs, 2 if summarized else 1)


@PROPERTY
@given(compactions())
def test_no_compactor_changes_its_input(case: CompactionCase) -> None:
    msgs, compactor, _ = case
    snapshot = copy.deepcopy(msgs)
    out = compactor.compact(msgs)
    assert msgs == snapshot
    assert out is not msgs


@PROPERTY
@given(histories, st.integers(-1, 10), st.data())
def test_token_budget_meets_the_budget_whenever_the_minimum_tail_fits(
    msgs: list[Message], min_tail: int, data: st.DataObject
) -> None:
    max_tokens = data.draw(st.integers(1, estimate_tokens(msgs) + 2), label="max_tokens")
    minimum = [msgs[0], *msgs[len(msgs) - min(tail_of(min_tail), len(msgs) - 1) :]]
    out = TokenBudgetCompactor(max_tokens, min_tail).compact(msgs)
    if estimate_tokens(minimum) <= max_tokens:
        # The budget is tested before repair: leave out the stubs it may have added.
        assert estimate_tokens([m for m in out if not is_stub(m)]) <= max_tokens


@PROPERTY
@given(histories, st.integers(-1, 10), summaries, st.data())
def test_summarization_is_system_summary_and_repaired_tail(
    msgs: list[Message], min_tail: int, summary: str, data: st.DataObject
) -> None:
    max_tokens = data.draw(budgets(msgs), label="max_tokens")
    summarizer = RecordingSummarizer(summary)
    compactor = SummarizationCompactor(summarizer, max_tokens, min_tail)
    out = compactor.compact(msgs)
    split = len(msgs) - tail_of(min_tail)
    if estimate_tokens(msgs) <= (max_tokens if max_tokens > 0 else DEFAULT_MAX_TOKENS) or split <= 1:
        assert out == msgs and summarizer.requests == []
    else:
        tail = msgs[split:]
        assert out == literal_seed.repair_orphaned_tool_pairs([msgs[0], summary_message(summary), *tail])
        assert len(summarizer.requests) == 1 and compactor.failures == []


@PROPERTY
@given(histories, st.integers(-1, 10), st.data())
def test_a_failing_summarizer_gives_the_token_budget_result(
    msgs: list[Message], min_tail: int, data: st.DataObject
) -> None:
    max_tokens = data.draw(budgets(msgs), label="max_tokens")
    compactor = SummarizationCompactor(RecordingSummarizer(RuntimeError("down")), max_tokens, min_tail)
    assert compactor.compact(msgs) == literal_seed.token_budget_compact(msgs, max_tokens, min_tail)


def _dict_round_trip(msg: Message) -> Message:
    return Message.from_dict(msg.to_dict())


def _json_round_trip(msg: Message) -> Message:
    return Message.from_dict(json.loads(json.dumps(msg.to_dict(), ensure_ascii=False)))


@PROPERTY
@given(messages, st.sampled_from((_dict_round_trip, _json_round_trip)))
def test_a_message_survives_its_dict_and_json_forms(msg: Message, round_trip: Callable[[Message], Message]) -> None:
    assert round_trip(msg) == msg

