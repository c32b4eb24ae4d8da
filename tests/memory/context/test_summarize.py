"""SummarizationCompactor (harness9_ref/memory/context/_summarize.py; SPEC R-SUM-1 … R-SUM-12)."""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence

import pytest

from harness9_ref.engine import RetryingSummarizer, RetryPolicy
from harness9_ref.memory.context import (
    SUMMARY_FIRST_PROMPT,
    SUMMARY_INCREMENTAL_PROMPT,
    SUMMARY_MARKER,
    SUMMARY_SYSTEM_PROMPT,
    SUMMARY_TEMPLATE,
    SUMMARY_TIMEOUT_SECONDS,
    Compactor,
    SlidingWindowCompactor,
    SummarizationCompactor,
    TokenBudgetCompactor,
    new_summarization_compactor,
)
from harness9_ref.schema import Message, ToolDefinition
from tests.fakes import (
    RecordingSummarizer,
    SummaryReply,
    assistant,
    call,
    padded,
    result,
    stub,
    summary_message,
    system,
    user,
)

HEADINGS = ("**Goal:**", "**Progress:**", "**Key Decisions:**", "**Next Steps:**", "**Critical Context:**")

# Messages 1-6 are the head, 7-8 the tail of two.
HISTORY = [
    system(),
    user("Fix the parser"),
    assistant("Looking.", call("c1", "read_file", '{"path":"a.py"}'), call("c2", "bash", '{"command":"pytest"}')),
    result("c1", "def parse(): ..."),
    result("c2", "1 failed"),
    assistant("", call("c3", "write_file", '{"path":"a.py"}')),
    result("c3", "written"),
    user("Thanks"),
    assistant("Done."),
]
HISTORY_TRANSCRIPT = "\n".join(
    [
        "[user]: Fix the parser",
        "[assistant]: Looking.",
        '[tool_call read_file(c1)]: {"path":"a.py"}',
        '[tool_call bash(c2)]: {"command":"pytest"}',
        "[tool_result c1]: def parse(): ...",
        "[tool_result c2]: 1 failed",
        '[tool_call write_file(c3)]: {"path":"a.py"}',
        "[tool_result c3]: written",
    ]
)


def first_prompt(conversation: str) -> str:
    before, after = SUMMARY_FIRST_PROMPT.split("{conversation}")
    return before + conversation + after


def incremental_prompt(previous_summary: str, conversation: str) -> str:
    before, rest = SUMMARY_INCREMENTAL_PROMPT.split("{previous_summary}")
    middle, after = rest.split("{conversation}")
    return before + previous_summary + middle + conversation + after


def compactor(
    *replies: SummaryReply, max_tokens: int = 10, min_tail: int = 2
) -> tuple[SummarizationCompactor, RecordingSummarizer]:
    summarizer = RecordingSummarizer(*replies)
    return SummarizationCompactor(summarizer, max_tokens, min_tail), summarizer


def test_summarization_is_a_compactor() -> None:
    assert isinstance(SummarizationCompactor(None, 10), Compactor)


def test_summarization_replaces_the_head_with_a_summary_and_keeps_the_tail() -> None:
    c, summarizer = compactor("**Goal:** fix the parser")
    expected = [system(), summary_message("**Goal:** fix the parser"), user("Thanks"), assistant("Done.")]
    assert c.compact(HISTORY) == expected
    assert len(summarizer.requests) == 1
    assert c.failures == []


def test_the_summary_message_is_a_user_message_starting_with_the_marker_line() -> None:
    assert SUMMARY_MARKER == "[Conversation Summary]"
    c, _ = compactor("S")
    assert c.compact(HISTORY)[1].to_dict() == {"role": "user", "content": "[Conversation Summary]\nS"}


def test_the_summarizer_gets_a_system_and_a_user_message_and_no_tools() -> None:
    c, summarizer = compactor("S")
    c.compact(HISTORY)
    ((messages, tools),) = summarizer.requests
    assert messages == [Message("system", SUMMARY_SYSTEM_PROMPT), user(first_prompt(HISTORY_TRANSCRIPT))]
    assert tools == []


def test_the_transcript_renders_results_texts_and_calls_one_line_each() -> None:
    head = [
        user("line one\nline two"),
        assistant("", call("a", "bash", "not json")),
        result("a", ""),
        Message("system", "a system note"),
        assistant("", call("b", "x", ""), call("c", "y", "{}")),
    ]
    c, summarizer = compactor("S", min_tail=1)
    c.compact([system(), *head, padded("tail", 10)])
    expected = "\n".join(
        [
            "[user]: line one\nline two",
            "[tool_call bash(a)]: not json",
            "[tool_result a]: ",
            "[system]: a system note",
            "[tool_call x(b)]: ",
            "[tool_call y(c)]: {}",
        ]
    )
    assert summarizer.requests[0][0][1].content == first_prompt(expected)


def test_the_prompts_carry_the_five_headings_of_the_seed() -> None:
    assert SUMMARY_TEMPLATE.splitlines() == [
        "**Goal:** What the user is trying to accomplish.",
        "**Progress:** Key actions taken and their results.",
        "**Key Decisions:** Important choices and rationale.",
        "**Next Steps:** What was planned or pending.",
        "**Critical Context:** Facts, file paths, variable names, or constraints the agent must remember.",
    ]
    positions = [SUMMARY_SYSTEM_PROMPT.index(heading) for heading in HEADINGS]
    assert positions == sorted(positions)


def test_the_incremental_prompt_has_the_seed_layout() -> None:
    assert SUMMARY_INCREMENTAL_PROMPT.endswith(
        "<previous-summary>\n{previous_summary}\n</previous-summary>\n\nNew conversation to merge:\n{conversation}"
    )
    assert SUMMARY_INCREMENTAL_PROMPT.count("{previous_summary}") == 1
    assert SUMMARY_INCREMENTAL_PROMPT.count("{conversation}") == 1
    assert SUMMARY_FIRST_PROMPT.count("{conversation}") == 1


def test_the_last_summary_in_the_head_selects_the_incremental_prompt_and_is_not_rendered() -> None:
    msgs = [
        system(),
        summary_message("first summary"),
        user("more work"),
        summary_message("second summary\n**Goal:** x"),
        assistant("ok"),
        padded("tail", 10),
    ]
    c, summarizer = compactor("S", min_tail=1)
    assert c.compact(msgs) == [system(), summary_message("S"), padded("tail", 10)]
    prompt = summarizer.requests[0][0][1].content
    assert prompt == incremental_prompt("second summary\n**Goal:** x", "[user]: more work\n[assistant]: ok")


def test_the_previous_summary_is_the_text_after_the_marker_line() -> None:
    msgs = [system(), user("[Conversation Summary] (merged twice)\nold"), user("new"), padded("tail", 10)]
    c, summarizer = compactor("S", min_tail=1)
    c.compact(msgs)
    assert summarizer.requests[0][0][1].content == incremental_prompt("old", "[user]: new")


def test_a_summary_with_nothing_after_the_marker_still_selects_the_incremental_prompt() -> None:
    msgs = [system(), user("[Conversation Summary]"), user("new"), padded("tail", 10)]
    c, summarizer = compactor("S", min_tail=1)
    c.compact(msgs)
    assert summarizer.requests[0][0][1].content == incremental_prompt("", "[user]: new")


def test_a_result_starting_with_the_marker_is_a_summary_too() -> None:
    tool_summary = result("a", "[Conversation Summary]\nfrom a tool")
    msgs = [system(), assistant("", call("a", "bash", "{}")), tool_summary, user("new"), padded("tail", 10)]
    c, summarizer = compactor("S", min_tail=1)
    c.compact(msgs)
    expected = incremental_prompt("from a tool", "[tool_call bash(a)]: {}\n[user]: new")
    assert summarizer.requests[0][0][1].content == expected


def test_a_head_holding_only_a_summary_gives_an_empty_conversation() -> None:
    msgs = [system(), summary_message("old"), padded("tail", 10)]
    c, summarizer = compactor("S", min_tail=1)
    assert c.compact(msgs) == [system(), summary_message("S"), padded("tail", 10)]
    assert summarizer.requests[0][0][1].content == incremental_prompt("old", "")


def test_placeholders_inside_the_conversation_are_not_expanded() -> None:
    msgs = [system(), summary_message("keep {conversation}"), user("say {previous_summary}"), padded("tail", 10)]
    c, summarizer = compactor("S", min_tail=1)
    c.compact(msgs)
    expected = incremental_prompt("keep {conversation}", "[user]: say {previous_summary}")
    assert summarizer.requests[0][0][1].content == expected


def test_compacting_a_compacted_history_merges_into_the_previous_summary() -> None:
    c, summarizer = compactor("first", "second")
    once = c.compact(HISTORY)
    twice = c.compact([*once, user("Now add tests"), assistant("Added.")])
    assert twice == [system(), summary_message("second"), user("Now add tests"), assistant("Added.")]
    prompt = summarizer.requests[1][0][1].content
    assert prompt == incremental_prompt("first", "[user]: Thanks\n[assistant]: Done.")


def test_the_tail_is_repaired_after_summarising() -> None:
    msgs = [system(), user("go"), assistant("", call("a")), result("a", "x" * 40), assistant("", call("b")), user("no")]
    c, _ = compactor("S", min_tail=3)
    assert c.compact(msgs) == [system(), summary_message("S"), assistant("", call("b")), stub("b"), user("no")]


@pytest.mark.parametrize("reply", ["  **Goal:** x\n", "\n\nS", "a \n b", "\u200b", "\ufeff"])
def test_the_summary_is_the_reply_exactly_as_written(reply: str) -> None:
    c, _ = compactor(reply)
    assert c.compact(HISTORY)[1] == summary_message(reply)
    assert c.failures == []


def test_a_history_within_budget_is_returned_unchanged_without_a_call() -> None:
    c, summarizer = compactor("S", max_tokens=10_000)
    compacted = c.compact(HISTORY)
    assert compacted == HISTORY and compacted is not HISTORY
    assert summarizer.requests == []


@pytest.mark.parametrize("msgs", [[], HISTORY[1:], [HISTORY[1], *HISTORY]])
def test_a_history_without_a_leading_system_prompt_is_returned_unchanged_without_a_call(msgs: list[Message]) -> None:
    c, summarizer = compactor("S")
    assert c.compact(msgs) == msgs
    assert summarizer.requests == []


@pytest.mark.parametrize("min_tail", [8, 9, 20])
def test_a_history_with_no_head_is_returned_unchanged_without_a_call(min_tail: int) -> None:
    c, summarizer = compactor("S", min_tail=min_tail)
    assert c.compact(HISTORY) == HISTORY
    assert summarizer.requests == []


def test_one_message_of_head_is_summarised() -> None:
    c, summarizer = compactor("S", min_tail=7)
    assert c.compact(HISTORY) == [system(), summary_message("S"), *HISTORY[2:]]
    assert summarizer.requests[0][0][1].content == first_prompt("[user]: Fix the parser")


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (RuntimeError("rate limited"), "rate limited"),
        (None, "no message"),
        ("", "empty"),
        (" \n\t ", "empty"),
        ("\t\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0 \u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000", "empty"),
    ],
)
def test_a_failed_summary_falls_back_to_the_token_budget_compactor(reply: SummaryReply, why: str) -> None:
    c, summarizer = compactor(reply)
    assert c.compact(HISTORY) == TokenBudgetCompactor(10, 2).compact(HISTORY)
    assert len(summarizer.requests) == 1
    (failure,) = c.failures
    assert why in failure


def test_a_missing_provider_falls_back() -> None:
    c = SummarizationCompactor(None, 10, 2)
    assert c.compact(HISTORY) == TokenBudgetCompactor(10, 2).compact(HISTORY)
    (failure,) = c.failures
    assert "no summarizer" in failure


def test_a_summarizer_that_overruns_the_timeout_is_abandoned() -> None:
    summarizer = RecordingSummarizer("too late", delay=2.0)
    c = SummarizationCompactor(summarizer, 10, 2, timeout=0.2)
    started = time.perf_counter()
    assert c.compact(HISTORY) == TokenBudgetCompactor(10, 2).compact(HISTORY)
    assert time.perf_counter() - started < 1.5
    (failure,) = c.failures
    assert "0.2 s" in failure


def test_a_custom_fallback_gets_the_original_history() -> None:
    c = SummarizationCompactor(RecordingSummarizer(ValueError("boom")), 10, 2, fallback=SlidingWindowCompactor(3))
    assert c.compact(HISTORY) == SlidingWindowCompactor(3).compact(HISTORY)


def test_the_default_fallback_is_a_token_budget_compactor_with_the_same_settings() -> None:
    assert SummarizationCompactor(None, 1234, 5).effective_fallback() == TokenBudgetCompactor(1234, 5)
    custom = SlidingWindowCompactor(3)
    assert SummarizationCompactor(None, 1234, 5, fallback=custom).effective_fallback() is custom


def test_failures_accumulate_oldest_first_and_are_read_only() -> None:
    c, _ = compactor(RuntimeError("first"), RuntimeError("second"))
    c.compact(HISTORY)
    c.compact(HISTORY)
    assert ["first" in f for f in c.failures] == [True, False]
    assert ["second" in f for f in c.failures] == [False, True]
    c.failures.clear()
    assert len(c.failures) == 2


@pytest.mark.parametrize("max_tokens", [0, -1])
def test_zero_or_negative_max_tokens_means_160000(max_tokens: int) -> None:
    c, summarizer = compactor("S", max_tokens=max_tokens, min_tail=1)
    assert c.compact(HISTORY) == HISTORY
    over = [system(), padded("old", 160_000), user("new")]
    assert c.compact(over) == [system(), summary_message("S"), user("new")]
    assert len(summarizer.requests) == 1


def test_the_default_fallback_applies_the_defaults() -> None:
    msgs = [system(), *(padded(str(i), 20_000) for i in range(10))]  # 7 messages fit in 160000 tokens
    expected = [system(), *msgs[-7:]]
    assert TokenBudgetCompactor(160_000, 6).compact(msgs) == expected
    assert SummarizationCompactor(None, 0, 0).compact(msgs) == expected


@pytest.mark.parametrize("min_tail", [0, -2])
def test_zero_or_negative_min_tail_means_6(min_tail: int) -> None:
    msgs = [system(), *(padded(str(i), 10) for i in range(10))]
    c, _ = compactor("S", min_tail=min_tail)
    assert c.compact(msgs) == [system(), summary_message("S"), *msgs[-6:]]


def test_new_summarization_compactor_takes_80_percent_of_the_window_and_a_tail_of_6() -> None:
    assert SUMMARY_TIMEOUT_SECONDS == 60
    summarizer = RecordingSummarizer()
    c = new_summarization_compactor(summarizer, 200_000)
    assert (c.provider, c.max_tokens, c.min_tail_messages, c.timeout) == (summarizer, 160_000, 6, 60)
    assert c.effective_fallback() == TokenBudgetCompactor(160_000, 6)


def test_summarization_leaves_its_input_alone() -> None:
    msgs = list(HISTORY)
    snapshot = copy.deepcopy(msgs)
    compactor("S")[0].compact(msgs)
    compactor(RuntimeError("x"))[0].compact(msgs)
    assert msgs == snapshot


class _Limited:
    """A summarizer that takes a reply limit (R-FOLD-7) and remembers it at each call."""

    def __init__(self) -> None:
        self.reply_limit = 0
        self.seen: list[int] = []

    def generate(self, messages: Sequence[Message], available_tools: Sequence[ToolDefinition]) -> tuple[Message, None]:
        self.seen.append(self.reply_limit)
        return Message("assistant", "short"), None


def test_the_summary_limit_is_asked_of_a_summarizer_that_takes_one() -> None:
    """R-FOLD-7: before each call the summarizer is told the summary limit; without a limit, nothing."""
    head = [Message("system", "S"), *[Message("user", "x" * 400) for _ in range(4)], Message("user", "last")]
    summarizer = _Limited()
    SummarizationCompactor(summarizer, 10, 1, summary_limit=40).summarize(head, 5)
    assert summarizer.seen == [40]
    plain = _Limited()
    SummarizationCompactor(plain, 10, 1).summarize(head, 5)
    assert plain.seen == [0]


def test_the_retrying_wrapper_passes_the_limit_on() -> None:
    """R-FOLD-7 with R-ENG-27: the wrapper the engine puts around a summarizer forwards the limit."""
    summarizer = _Limited()
    wrapper = RetryingSummarizer(summarizer, RetryPolicy(1))
    head = [Message("system", "S"), Message("user", "y" * 800), Message("user", "z")]
    SummarizationCompactor(wrapper, 10, 1, summary_limit=25).summarize(head, 2)
    assert summarizer.seen == [25] and wrapper.reply_limit == 25
