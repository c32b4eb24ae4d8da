"""SlidingWindowCompactor (harness9_ref/memory/context/_compactor.py; SPEC R-SW-1 … R-SW-5)."""

from __future__ import annotations

import copy

import pytest

from harness9_ref.memory.context import DEFAULT_MAX_MESSAGES, Compactor, SlidingWindowCompactor
from harness9_ref.schema import Message
from tests import literal_seed
from tests.fakes import assistant, call, result, stub, system, user


def numbered(n: int) -> list[Message]:
    """A system prompt and ``n`` plain user messages "0" … "n-1"."""
    return [system(), *(user(str(i)) for i in range(n))]


def test_sliding_window_is_a_compactor() -> None:
    assert isinstance(SlidingWindowCompactor(), Compactor)


@pytest.mark.parametrize("n", [0, 3, 4])
def test_sliding_window_returns_a_history_that_fits_unchanged(n: int) -> None:
    msgs = numbered(n)
    compacted = SlidingWindowCompactor(5).compact(msgs)
    assert compacted == msgs
    assert compacted is not msgs


def test_sliding_window_keeps_the_system_prompt_and_the_newest_messages() -> None:
    assert SlidingWindowCompactor(4).compact(numbered(10)) == [system(), user("7"), user("8"), user("9")]


@pytest.mark.parametrize("max_messages", [0, -1, -100])
def test_sliding_window_defaults_to_100_messages(max_messages: int) -> None:
    assert DEFAULT_MAX_MESSAGES == 100
    compactor = SlidingWindowCompactor(max_messages)
    assert compactor.compact(numbered(99)) == numbered(99)
    assert compactor.compact(numbered(150)) == [system(), *(user(str(i)) for i in range(51, 150))]


def test_sliding_window_default_constructor_keeps_100_messages() -> None:
    assert len(SlidingWindowCompactor().compact(numbered(200))) == 100


def test_sliding_window_below_two_means_two() -> None:
    assert SlidingWindowCompactor(1).compact(numbered(5)) == [system(), user("4")]


def test_sliding_window_steps_back_over_results_to_keep_their_call() -> None:
    msgs = [system(), user("q"), assistant("", call("a"), call("b")), result("a"), result("b"), assistant(), user("x")]
    # max 4: the window would start at index 4, the result for "b"; it steps back to the call.
    assert SlidingWindowCompactor(4).compact(msgs) == msgs[:1] + msgs[2:]


def test_sliding_window_backtracking_stops_after_the_system_prompt() -> None:
    msgs = [system(), result("x"), result("y"), result("z")]
    # The window steps back to index 1, keeps every result, and repair drops them all.
    assert SlidingWindowCompactor(2).compact(msgs) == [system()]


def test_sliding_window_gives_a_stub_to_a_kept_call_without_a_result() -> None:
    msgs = [system(), user("a"), user("b"), assistant("", call("x")), assistant("interrupted")]
    expected = [system(), assistant("", call("x")), stub("x"), assistant("interrupted")]
    assert SlidingWindowCompactor(3).compact(msgs) == expected


def test_sliding_window_drops_a_result_that_backtracking_cannot_reach() -> None:
    # The window starts on a user message, so there is nothing to step back over, and the
    # result behind it lost its call: repair drops it.
    msgs = [system(), assistant("", call("x")), user("interjection"), result("x"), user("go")]
    assert SlidingWindowCompactor(4).compact(msgs) == [system(), user("interjection"), user("go")]


@pytest.mark.parametrize("msgs", [[], [user("a"), user("b"), user("c")], [assistant("x"), system(), user("a")]])
def test_sliding_window_returns_a_history_without_a_leading_system_prompt_unchanged(msgs: list[Message]) -> None:
    assert SlidingWindowCompactor(2).compact(msgs) == msgs


def test_sliding_window_leaves_its_input_alone() -> None:
    msgs = [system(), result("x"), user("a"), assistant("", call("y")), user("b")]
    snapshot = copy.deepcopy(msgs)
    SlidingWindowCompactor(3).compact(msgs)
    assert msgs == snapshot


@pytest.mark.parametrize("max_messages", range(-1, 10))
def test_sliding_window_matches_the_literal_seed(max_messages: int) -> None:
    msgs = [
        system(),
        user("q"),
        assistant("", call("a"), call("b")),
        result("b"),
        result("a"),
        assistant("", call("c")),
        user("stop"),
        result("c"),
        assistant("", call("d")),
    ]
    expected = literal_seed.sliding_window_compact(msgs, max_messages)
    assert SlidingWindowCompactor(max_messages).compact(msgs) == expected
