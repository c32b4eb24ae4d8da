"""TokenBudgetCompactor (harness9_ref/memory/context/_compactor.py; SPEC R-TB-1 … R-TB-7)."""

from __future__ import annotations

import copy

import pytest

from harness9_ref.memory.context import (
    BUDGET_PERCENT,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MIN_TAIL_MESSAGES,
    Compactor,
    TokenBudgetCompactor,
    budget_for_context_window,
    estimate_tokens,
    new_token_budget_compactor,
)
from harness9_ref.schema import Message
from tests import literal_seed
from tests.fakes import assistant, call, padded, realistic_history, result, stub, system, user


def ten_by_ten() -> list[Message]:
    """A 10-token system prompt and ten 10-token messages "m0" … "m9": 110 tokens."""
    return [system("s" * 40), *(padded(f"m{i}", 10) for i in range(10))]


def newest(msgs: list[Message], k: int) -> list[Message]:
    return [msgs[0], *msgs[len(msgs) - k :]]


def test_token_budget_is_a_compactor() -> None:
    assert isinstance(TokenBudgetCompactor(100), Compactor)


@pytest.mark.parametrize("max_tokens", [110, 111, 10_000])
def test_budget_returns_a_history_within_budget_unchanged(max_tokens: int) -> None:
    msgs = ten_by_ten()
    compacted = TokenBudgetCompactor(max_tokens, 2).compact(msgs)
    assert compacted == msgs
    assert compacted is not msgs


@pytest.mark.parametrize(("max_tokens", "kept"), [(109, 9), (100, 9), (99, 8), (55, 4), (50, 4), (49, 3), (30, 2)])
def test_budget_keeps_the_longest_newest_suffix_that_fits(max_tokens: int, kept: int) -> None:
    msgs = ten_by_ten()
    assert TokenBudgetCompactor(max_tokens, 2).compact(msgs) == newest(msgs, kept)


@pytest.mark.parametrize("max_tokens", [1, 15, 39])
def test_budget_keeps_newest_suffix_when_tail_does_not_fit(max_tokens: int) -> None:
    msgs = ten_by_ten()  # the system prompt and 3 messages need 40 tokens
    assert TokenBudgetCompactor(max_tokens, 3).compact(msgs) == newest(msgs, 3)


def test_budget_keeps_the_newest_messages_not_the_oldest() -> None:
    msgs = ten_by_ten()
    compacted = TokenBudgetCompactor(60, 1).compact(msgs)
    assert [m.content[:2] for m in compacted[1:]] == ["m5", "m6", "m7", "m8", "m9"]


@pytest.mark.parametrize("min_tail", [10, 11])
def test_budget_returns_a_history_no_longer_than_the_minimum_tail_unchanged(min_tail: int) -> None:
    msgs = ten_by_ten()
    assert TokenBudgetCompactor(1, min_tail).compact(msgs) == msgs


def test_budget_estimates_each_candidate_with_one_division_on_the_total() -> None:
    msgs = [system("abc"), *(user("xyz") for _ in range(8))]  # 3 bytes each, 27 bytes
    # [system] + k messages is floor(3 (k + 1) / 4) tokens: k = 2 gives 2, k = 3 gives 3.
    assert TokenBudgetCompactor(2, 1).compact(msgs) == newest(msgs, 2)


@pytest.mark.parametrize("max_tokens", [0, -1])
def test_budget_zero_or_negative_max_tokens_means_160000(max_tokens: int) -> None:
    assert DEFAULT_MAX_TOKENS == 160_000
    small = [padded("a", 4), *(padded("b", 1) for _ in range(6))]
    at_limit = [system(), padded("old", 160_000 - estimate_tokens([system(), *small])), *small]
    assert estimate_tokens(at_limit) == 160_000
    over_limit = [system(), padded("old", 160_001 - estimate_tokens([system(), *small])), *small]
    compactor = TokenBudgetCompactor(max_tokens, 1)
    assert compactor.compact(at_limit) == at_limit
    assert compactor.compact(over_limit) == [system(), *small]


@pytest.mark.parametrize("min_tail", [0, -3])
def test_budget_zero_or_negative_min_tail_means_6(min_tail: int) -> None:
    assert DEFAULT_MIN_TAIL_MESSAGES == 6
    msgs = ten_by_ten()
    assert TokenBudgetCompactor(1, min_tail).compact(msgs) == newest(msgs, 6)
    assert TokenBudgetCompactor(1).compact(msgs) == newest(msgs, 6)


def test_budget_is_tested_before_repair_so_a_stub_may_exceed_it() -> None:
    msgs = [system(""), padded("old", 10), assistant("", call("c", "bash", "{}")), user("abcde")]
    # The last two messages are 7 + 5 bytes = 3 tokens and fit; the stub repair adds does not.
    compacted = TokenBudgetCompactor(3, 2).compact(msgs)
    assert compacted == [system(""), assistant("", call("c", "bash", "{}")), stub("c"), user("abcde")]
    assert estimate_tokens(compacted) > 3


def test_budget_drops_a_result_whose_call_was_cut_off() -> None:
    msgs = [system(), padded("old", 10), assistant("", call("a")), result("a", "x" * 40), user("go")]
    assert TokenBudgetCompactor(5, 2).compact(msgs) == [system(), user("go")]


@pytest.mark.parametrize("msgs", [[], [padded("a", 10), padded("b", 10), padded("c", 10)], [user("x"), padded("y", 9)]])
def test_budget_returns_a_history_without_a_leading_system_prompt_unchanged(msgs: list[Message]) -> None:
    assert TokenBudgetCompactor(1, 1).compact(msgs) == msgs


def test_budget_leaves_its_input_alone() -> None:
    msgs = [system(), padded("old", 10), assistant("", call("a")), result("a", "x" * 40), user("go")]
    snapshot = copy.deepcopy(msgs)
    TokenBudgetCompactor(5, 2).compact(msgs)
    assert msgs == snapshot


@pytest.mark.parametrize(
    ("context_window", "budget"),
    [(200_000, 160_000), (128_000, 102_400), (1_048_576, 838_860), (1_001, 800), (0, 0)],
)
def test_new_token_budget_compactor_takes_80_percent_of_the_window_and_a_tail_of_6(
    context_window: int, budget: int
) -> None:
    assert BUDGET_PERCENT == 80
    assert budget_for_context_window(context_window) == budget
    assert new_token_budget_compactor(context_window) == TokenBudgetCompactor(budget, 6)


@pytest.mark.parametrize("min_tail", [1, 6, 40])
@pytest.mark.parametrize("max_tokens", [-1, 1, 500, 5_000, 20_000, 10**9])
def test_budget_matches_the_literal_seed_on_a_realistic_history(max_tokens: int, min_tail: int) -> None:
    msgs = realistic_history(300, seed=7)
    expected = literal_seed.token_budget_compact(msgs, max_tokens, min_tail)
    assert TokenBudgetCompactor(max_tokens, min_tail).compact(msgs) == expected
